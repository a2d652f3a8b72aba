// Spans written by hand where no instrumentation exists (Consul discovery, the payment provider), and the trace
// context for headers the kit writes itself: all free when tracing is off.
import {
  type Attributes,
  context,
  propagation,
  ROOT_CONTEXT,
  type Span,
  SpanKind,
  SpanStatusCode,
  trace,
} from '@opentelemetry/api'
import { activeTracing } from './active-tracing.ts'

/** Asked for at each span, not kept: a tracer kept across a restart of tracing (tests) would stay the old one. */
const tracer = () => trace.getTracer('@meridian/service-kit')

export interface SpanOptions {
  kind?: 'client' | 'internal'
  /** called only when the span is recorded: never build attributes for a span nobody keeps */
  attributes?: () => Attributes
}

/**
 * Runs `work` inside a span named `name` (active for what it calls, ended when it settles, an error recorded on it);
 * with tracing off it is `work(undefined)` and nothing else.
 */
export async function inSpan<Result>(
  name: string,
  options: SpanOptions,
  work: (span: Span | undefined) => Promise<Result>,
): Promise<Result> {
  if (activeTracing() === undefined) return work(undefined)
  return tracer().startActiveSpan(
    name,
    { kind: options.kind === 'client' ? SpanKind.CLIENT : SpanKind.INTERNAL },
    async (span) => {
      if (span.isRecording() && options.attributes) span.setAttributes(options.attributes())
      try {
        return await work(span)
      } catch (error) {
        span.recordException(error instanceof Error ? error : String(error))
        span.setStatus({ code: SpanStatusCode.ERROR })
        throw error
      } finally {
        span.end()
      }
    },
  )
}

/**
 * Starts `work` outside any trace: a loop that outlives whatever started it (a discovery's watch) must not make its
 * calls children of a request that ended long ago.
 */
export function detachedFromTrace<Result>(work: () => Result): Result {
  return activeTracing() === undefined ? work() : context.with(ROOT_CONTEXT, work)
}

/**
 * `headers` with the active trace context written into them (traceparent, tracestate, baggage) when tracing is on
 * and a span is active; returns whether it wrote one.
 */
export function injectTraceContext(headers: Record<string, string | string[]>): boolean {
  if (activeTracing() === undefined) return false
  const active = context.active()
  if (trace.getSpan(active) === undefined) return false
  propagation.inject(active, headers)
  return headers.traceparent !== undefined
}

/**
 * Whether an undici call made now gets the active trace context from the kit's instrumentation (tracing on, undici
 * instrumented, a span active). A caller then writes no traceparent of its own: two would make the header invalid
 * for the receiver, which would start a trace of its own.
 */
export function undiciCarriesTraceContext(): boolean {
  const tracing = activeTracing()
  return tracing !== undefined && tracing.instrumentations !== 'none' && trace.getActiveSpan() !== undefined
}

/** The active span's ids for a log line, or undefined outside a span (always, with tracing off). */
export function activeSpanIds(): { trace_id: string; span_id: string } | undefined {
  const span = trace.getActiveSpan()
  if (span === undefined) return undefined
  const { traceId, spanId } = span.spanContext()
  return { trace_id: traceId, span_id: spanId }
}
