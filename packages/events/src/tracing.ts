// Trace context through the outbox and Kafka: the W3C context stored with an outbox row and sent as headers, the
// relay's publish spans and the consumers' delivery spans. Only @opentelemetry/api: the SDK the service kit registers
// records and exports them; without one every call here is the API's no-op.
import {
  type Attributes,
  type Context,
  context,
  isSpanContextValid,
  propagation,
  ROOT_CONTEXT,
  type Span,
  SpanKind,
  SpanStatusCode,
  type TextMapGetter,
  trace,
} from '@opentelemetry/api'
import type { IHeaders } from 'kafkajs'
import { headerText } from './kafka.ts'

export const eventsTracer = () => trace.getTracer('@meridian/events')

/** The W3C Trace Context headers a message carries (https://www.w3.org/TR/trace-context/). */
export const TraceHeader = { parent: 'traceparent', state: 'tracestate' } as const

/**
 * The longest header value taken or stored: a version-00 traceparent has 55 characters, and W3C asks that a
 * tracestate of up to 512 be propagated. Anything longer is dropped, never cut (a cut entry would be wrong).
 */
export const maxTraceHeaderLength = 512

/** A trace context as text, as stored in outbox.trace_parent and outbox.trace_state. */
export interface StoredTraceContext {
  traceParent: string | null
  traceState: string | null
}

const noTraceContext: StoredTraceContext = { traceParent: null, traceState: null }

/**
 * The W3C context of the span active now, as the registered propagator writes it; nulls when no span is active or
 * no propagator is registered (tracing off), so such rows carry nothing.
 */
export function activeTraceContext(active: Context = context.active()): StoredTraceContext {
  const spanContext = trace.getSpanContext(active)
  if (spanContext === undefined || !isSpanContextValid(spanContext)) return noTraceContext
  const carrier: Record<string, string> = {}
  propagation.inject(active, carrier)
  const traceParent = bounded(carrier[TraceHeader.parent])
  if (traceParent === undefined) return noTraceContext
  return { traceParent, traceState: bounded(carrier[TraceHeader.state]) ?? null }
}

/** The trace headers of `active` (none when tracing is off or no span is active). */
export function traceHeadersOf(active: Context = context.active()): Record<string, string> {
  const { traceParent, traceState } = activeTraceContext(active)
  if (traceParent === null) return {}
  return traceState === null
    ? { [TraceHeader.parent]: traceParent }
    : { [TraceHeader.parent]: traceParent, [TraceHeader.state]: traceState }
}

/**
 * `headers` with their trace headers replaced by those of `active`; kept as they are when `active` has none to give
 * (tracing off), so a message forwarded by a process without tracing still carries the context it came with.
 */
export function withTraceHeaders(
  headers: Record<string, string>,
  active: Context = context.active(),
): Record<string, string> {
  const own = traceHeadersOf(active)
  if (own[TraceHeader.parent] === undefined) return headers
  const { [TraceHeader.parent]: _parent, [TraceHeader.state]: _state, ...others } = headers
  return { ...others, ...own }
}

const storedGetter: TextMapGetter<StoredTraceContext> = {
  keys: () => [TraceHeader.parent, TraceHeader.state],
  get: (carrier, key) =>
    (key === TraceHeader.parent
      ? carrier.traceParent
      : key === TraceHeader.state
        ? carrier.traceState
        : null) ?? undefined,
}

const kafkaHeadersGetter: TextMapGetter<IHeaders | undefined> = {
  keys: () => [TraceHeader.parent, TraceHeader.state],
  get: (headers, key) => bounded(headerText(headers, key)),
}

/**
 * The context a message's trace headers name, under the root context: the root itself when they are missing, too
 * long or malformed (the propagator checks the format), so a hostile header starts a new trace and nothing else.
 */
export function contextFromHeaders(headers: IHeaders | undefined): Context {
  try {
    return propagation.extract(ROOT_CONTEXT, headers, kafkaHeadersGetter)
  } catch {
    return ROOT_CONTEXT
  }
}

/**
 * A trace context read from a carrier another process wrote (a pub/sub message): kept only when it holds strings within
 * maxTraceHeaderLength, so anything else is no context rather than an error.
 */
export function readTraceContext(value: unknown): StoredTraceContext {
  if (typeof value !== 'object' || value === null) return noTraceContext
  const { traceParent, traceState } = value as Record<string, unknown>
  const parent = typeof traceParent === 'string' ? bounded(traceParent) : undefined
  if (parent === undefined) return noTraceContext
  return {
    traceParent: parent,
    traceState: (typeof traceState === 'string' ? bounded(traceState) : undefined) ?? null,
  }
}

/** The context stored with an outbox row, under the root context (the root when there is none). */
export function contextFromStored(stored: StoredTraceContext): Context {
  if (stored.traceParent === null) return ROOT_CONTEXT
  try {
    return propagation.extract(ROOT_CONTEXT, stored, storedGetter)
  } catch {
    return ROOT_CONTEXT
  }
}

/** Messaging attributes (OpenTelemetry semantic conventions) shared by publish and process spans. */
const MessagingAttribute = {
  system: 'messaging.system',
  operationName: 'messaging.operation.name',
  operationType: 'messaging.operation.type',
  destination: 'messaging.destination.name',
  partition: 'messaging.destination.partition.id',
  messageId: 'messaging.message.id',
  key: 'messaging.kafka.message.key',
  offset: 'messaging.kafka.offset',
  consumerGroup: 'messaging.consumer.group.name',
} as const

/** What the relay's publish span of one outbox row is told. */
export interface PublishSpanFields {
  topic: string
  key: string
  /** the outbox row id: the message's `message-id` header is `outbox-{outboxId}` */
  outboxId: string
  eventId: string
  eventType: string
}

/**
 * The relay's `<topic> publish` span (PRODUCER) of one outbox row, a child of the context stored with the row, so the
 * trace reads request → publish → consumer; undefined for a row appended outside any trace (no span, no header).
 */
export function startPublishSpan(
  stored: StoredTraceContext,
  fields: PublishSpanFields,
): { span: Span; context: Context } | undefined {
  const parent = contextFromStored(stored)
  if (trace.getSpanContext(parent) === undefined) return undefined
  const span = eventsTracer().startSpan(`${fields.topic} publish`, { kind: SpanKind.PRODUCER }, parent)
  if (span.isRecording()) {
    span.setAttributes({
      [MessagingAttribute.system]: 'kafka',
      [MessagingAttribute.operationName]: 'publish',
      [MessagingAttribute.operationType]: 'send',
      [MessagingAttribute.destination]: fields.topic,
      [MessagingAttribute.messageId]: fields.eventId,
      [MessagingAttribute.key]: fields.key,
      'meridian.outbox.id': fields.outboxId,
      'meridian.event.type': fields.eventType,
    })
  }
  return { span, context: trace.setSpan(parent, span) }
}

/** Where a delivery came from, for its process span. */
export interface DeliveryFields {
  /** the event topic, which names the span */
  eventTopic: string
  /** the topic read: the event topic or one of its retry topics */
  topic: string
  partition: number
  offset: string
  group: string
  attempt: number
  headers: IHeaders | undefined
  key: Buffer | null
}

/**
 * A consumer's `<topic> process` span (CONSUMER) of one delivery, a child of the context in the message's trace
 * headers (a root span when they carry none).
 */
export function startDeliverySpan(fields: DeliveryFields): { span: Span; context: Context } {
  const parent = contextFromHeaders(fields.headers)
  const span = eventsTracer().startSpan(`${fields.eventTopic} process`, { kind: SpanKind.CONSUMER }, parent)
  if (span.isRecording()) {
    const attributes: Attributes = {
      [MessagingAttribute.system]: 'kafka',
      [MessagingAttribute.operationName]: 'process',
      [MessagingAttribute.operationType]: 'process',
      [MessagingAttribute.destination]: fields.topic,
      [MessagingAttribute.partition]: String(fields.partition),
      [MessagingAttribute.offset]: Number(fields.offset),
      [MessagingAttribute.consumerGroup]: fields.group,
      'meridian.delivery.attempt': fields.attempt,
    }
    const key = fields.key?.toString('utf8')
    if (key !== undefined && key.length <= 255) attributes[MessagingAttribute.key] = key
    span.setAttributes(attributes)
  }
  return { span, context: trace.setSpan(parent, span) }
}

/** Names the event a delivery span carries, once the message has been read as one. */
export function describeDelivery(span: Span, event: { id: string; type: string }): void {
  if (!span.isRecording()) return
  span.setAttributes({ [MessagingAttribute.messageId]: event.id, 'meridian.event.type': event.type })
}

/** Records a failure on a span: the exception and status ERROR. */
export function recordFailure(span: Span, error: unknown): void {
  if (!span.isRecording()) return
  span.recordException(error instanceof Error ? error : String(error))
  span.setStatus({
    code: SpanStatusCode.ERROR,
    message: error instanceof Error ? error.message : String(error),
  })
}

/** Keeps a header value within maxTraceHeaderLength; longer (or absent) gives undefined. */
function bounded(value: string | undefined): string | undefined {
  return value !== undefined && value.length > 0 && value.length <= maxTraceHeaderLength ? value : undefined
}
