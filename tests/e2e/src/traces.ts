// Reading the system's traces back from the trace store (Jaeger's query API, /api/traces/{id}): one trace as spans
// with their service, parent and timing, and the questions test/tracing.test.ts asks of it.
import { randomBytes } from 'node:crypto'
import { setTimeout as sleep } from 'node:timers/promises'
import { scaledMs } from '@meridian/testkit'

interface JaegerTag {
  key: string
  type: string
  value: unknown
}

interface JaegerSpan {
  traceID: string
  spanID: string
  operationName: string
  references?: { refType: 'CHILD_OF' | 'FOLLOWS_FROM'; traceID: string; spanID: string }[]
  startTime: number
  duration: number
  tags?: JaegerTag[]
  logs?: { timestamp: number; fields: JaegerTag[] }[]
  processID: string
}

interface JaegerTrace {
  traceID: string
  spans: JaegerSpan[]
  processes: Record<string, { serviceName: string; tags?: JaegerTag[] }>
}

/** One span of a trace as the tests read it: times in microseconds since the epoch, as Jaeger gives them. */
export interface TraceSpan {
  spanId: string
  /** the span it is a child of (in this trace), undefined for the root */
  parentId: string | undefined
  /** spans it links to (FOLLOWS_FROM, in any trace): e.g. the relay's publish span to the appended event's context */
  links: string[]
  service: string
  operation: string
  start: number
  end: number
  tags: Record<string, unknown>
  /** its events (Jaeger's logs): the `event` field and the rest of the fields */
  events: { name: string; fields: Record<string, unknown> }[]
  /** status ERROR (otel.status_code) or the error tag */
  error: boolean
}

export interface Trace {
  traceId: string
  spans: TraceSpan[]
}

/** A W3C traceparent naming a new sampled trace: the test knows the trace id before the system sees the request. */
export function newTraceparent(): { traceId: string; clientSpanId: string; traceparent: string } {
  const traceId = randomBytes(16).toString('hex')
  const clientSpanId = randomBytes(8).toString('hex')
  return { traceId, clientSpanId, traceparent: `00-${traceId}-${clientSpanId}-01` }
}

function tagsOf(tags: JaegerTag[] | undefined): Record<string, unknown> {
  return Object.fromEntries((tags ?? []).map((tag) => [tag.key, tag.value]))
}

function spanOf(trace: JaegerTrace, span: JaegerSpan): TraceSpan {
  const tags = tagsOf(span.tags)
  const references = span.references ?? []
  const parent = references.find((each) => each.refType === 'CHILD_OF' && each.traceID === trace.traceID)
  return {
    spanId: span.spanID,
    parentId: parent?.spanID,
    links: references.filter((each) => each !== parent).map((each) => each.spanID),
    service: trace.processes[span.processID]?.serviceName ?? '?',
    operation: span.operationName,
    start: span.startTime,
    end: span.startTime + span.duration,
    tags,
    events: (span.logs ?? []).map((log) => {
      const fields = tagsOf(log.fields)
      return { name: String(fields.event ?? ''), fields }
    }),
    error: tags['otel.status_code'] === 'ERROR' || tags.error === true,
  }
}

/** The trace of that id as the store has it now; undefined while it has none of it. */
export async function readTrace(queryUrl: string, traceId: string): Promise<Trace | undefined> {
  const response = await fetch(`${queryUrl}/api/traces/${traceId}`, { signal: AbortSignal.timeout(10_000) })
  if (response.status === 404) return undefined
  if (!response.ok) throw new Error(`GET /api/traces/${traceId} answered ${response.status}`)
  const body = (await response.json()) as { data?: JaegerTrace[] }
  const found = body.data?.[0]
  if (!found) return undefined
  return { traceId, spans: found.spans.map((span) => spanOf(found, span)) }
}

/**
 * Reads the trace until `complete` holds of it (spans reach the store in batches, from every service, a moment
 * after they end); fails with what the store held by then.
 */
export async function traceWhere(
  queryUrl: string,
  traceId: string,
  what: string,
  complete: (trace: Trace) => boolean,
  timeoutMs = scaledMs(60_000),
): Promise<Trace> {
  const deadline = Date.now() + timeoutMs
  let last: Trace | undefined
  for (;;) {
    last = (await readTrace(queryUrl, traceId)) ?? last
    if (last && complete(last)) return last
    if (Date.now() > deadline) {
      throw new Error(
        `trace ${traceId}: ${what} not seen within ${timeoutMs} ms; it holds:\n${describeTrace(last)}`,
      )
    }
    await sleep(500)
  }
}

/** The spans from `span` up to the root, nearest first (the span itself included). */
export function ancestry(trace: Trace, span: TraceSpan): TraceSpan[] {
  const byId = new Map(trace.spans.map((each) => [each.spanId, each]))
  const chain: TraceSpan[] = []
  for (let at: TraceSpan | undefined = span; at && chain.length <= trace.spans.length; ) {
    chain.push(at)
    at = at.parentId === undefined ? undefined : byId.get(at.parentId)
  }
  return chain
}

/** The services a chain passes through, root first, each once where it repeats back to back. */
export function servicePath(chain: TraceSpan[]): string[] {
  const path: string[] = []
  for (const span of [...chain].reverse()) if (path.at(-1) !== span.service) path.push(span.service)
  return path
}

/** The trace as indented lines (service, operation, relative start), for a failure's message. */
export function describeTrace(trace: Trace | undefined): string {
  if (!trace) return '(nothing)'
  const origin = Math.min(...trace.spans.map((span) => span.start))
  const children = new Map<string | undefined, TraceSpan[]>()
  const ids = new Set(trace.spans.map((span) => span.spanId))
  for (const span of trace.spans) {
    const key = span.parentId !== undefined && ids.has(span.parentId) ? span.parentId : undefined
    children.set(key, [...(children.get(key) ?? []), span])
  }
  const lines: string[] = []
  const walk = (parent: string | undefined, depth: number) => {
    for (const span of (children.get(parent) ?? []).sort((a, b) => a.start - b.start)) {
      const mark = span.error ? ' [error]' : ''
      const events = span.events.length ? ` {${span.events.map((each) => each.name).join(', ')}}` : ''
      lines.push(
        `${'  '.repeat(depth)}${span.service}: ${span.operation} +${((span.start - origin) / 1000).toFixed(1)} ms${mark}${events}`,
      )
      if (lines.length < 400) walk(span.spanId, depth + 1)
    }
  }
  walk(undefined, 0)
  return lines.join('\n')
}
