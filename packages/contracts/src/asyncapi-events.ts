// The domain events in the AsyncAPI document (asyncapi.ts): a Kafka channel per event type with its envelope, data
// schema and version, who produces and consumes it, and the retry and dead-letter topics every type shares.
import { type TSchema, Type } from 'typebox'
import { EventEnvelope, EventEnvelopeBase, type EventType, eventCatalogue } from './events.ts'
import { maxProcessStampLength } from './processes.ts'

/**
 * The topic layout: each event type's topic, its retry topics `{type}.retry.1..retries` and `{type}.dlt`, all with
 * `partitions` partitions. infra/topics.json declares the same (a contracts test keeps them equal).
 */
export const kafkaTopicLayout = { partitions: 3, retries: 3 } as const

/**
 * Who publishes each event type (through its outbox) and which services consume it (their consumer groups are named
 * after the service). A contracts test compares the consumers with the services' events/consumers.ts.
 */
export const eventParties: {
  readonly [Type in EventType]: { producer: string; consumers: readonly string[]; summary: string }
} = {
  'user.registered': {
    producer: 'auth',
    consumers: ['content', 'notification'],
    summary: 'a user was created (never carries the password)',
  },
  'user.profile_changed': {
    producer: 'auth',
    consumers: ['content', 'notification'],
    summary: "a user's name, email, role or status changed: the user's whole state after the change",
  },
  'user.removed': {
    producer: 'auth',
    consumers: ['content', 'notification'],
    summary: 'a user was removed; nothing of it follows',
  },
  'order.placed': {
    producer: 'order',
    consumers: ['notification', 'payment'],
    summary: 'an order was placed',
  },
  'payment.processed': {
    producer: 'payment',
    consumers: ['inventory', 'order'],
    summary: "the order's payment succeeded",
  },
  'payment.failed': {
    producer: 'payment',
    consumers: ['notification', 'order'],
    summary: "the order's payment was declined or failed",
  },
  'payment.action_required': {
    producer: 'payment',
    consumers: ['order'],
    summary: "the order's card asks the customer to authenticate the charge (3-D Secure) first",
  },
  'payment.refunded': {
    producer: 'payment',
    consumers: ['order'],
    summary:
      "the order's payments were refunded (a compensation), or an amount under its refund key (a return's lines)",
  },
  'payment.refund_failed': {
    producer: 'payment',
    consumers: [],
    summary:
      "the provider declined a return's refund (releases before 0.2; payment.refund_failed.v2 answers since, for any process)",
  },
  'payment.refund_failed.v2': {
    producer: 'payment',
    consumers: ['order'],
    summary:
      'a refund of an amount under its key could not be made (declined): its process retries, then escalates',
  },
  'payment.refunded.v2': {
    producer: 'payment',
    consumers: [],
    summary:
      'a refund with its cause always said; for now only those made at the provider outside Meridian (cause: provider)',
  },
  'payment.disputed': {
    producer: 'payment',
    consumers: [],
    summary: "the payment's charge was disputed by the customer's bank (a chargeback)",
  },
  'inventory.reserved': { producer: 'inventory', consumers: ['order'], summary: "the order's stock is held" },
  'inventory.failed': {
    producer: 'inventory',
    consumers: ['order'],
    summary: "the order's stock could not be held",
  },
  'inventory.released': {
    producer: 'inventory',
    consumers: ['order'],
    summary: "the order's stock was given back",
  },
  'payment.requested': {
    producer: 'order',
    consumers: ['payment'],
    summary: "the saga asks again for the order's payment",
  },
  'inventory.reservation_requested': {
    producer: 'order',
    consumers: ['inventory'],
    summary: "the saga asks again to hold the order's stock",
  },
  'shipment.requested': {
    producer: 'order',
    consumers: ['shipping'],
    summary: "the saga asks again for the order's shipment",
  },
  'inventory.release_requested': {
    producer: 'order',
    consumers: ['inventory'],
    summary: "compensation: the saga asks to give the order's stock back",
  },
  'payment.refund_requested': {
    producer: 'order',
    consumers: ['payment'],
    summary:
      "compensation: the saga asks to refund the order's payments; or a process an amount under its key (a return's lines)",
  },
  'return.requested': {
    producer: 'order',
    consumers: ['notification'],
    summary: 'a customer asked to return lines of a shipped or delivered order',
  },
  'return.received': {
    producer: 'order',
    consumers: ['notification'],
    summary: "the return's goods were received: the stock goes back, then the refund",
  },
  'return.completed': {
    producer: 'order',
    consumers: ['notification'],
    summary: "the return's stock is back and its lines are refunded",
  },
  'return.rejected': {
    producer: 'order',
    consumers: ['notification'],
    summary: 'the return was refused before its goods were received',
  },
  'exchange.requested': {
    producer: 'order',
    consumers: ['notification'],
    summary: 'a customer asked to exchange lines of a shipped or delivered order for other products',
  },
  'exchange.awaiting_goods': {
    producer: 'order',
    consumers: ['notification'],
    summary: "the exchange's replacements are held (a price rise charged): the returned lines may be sent",
  },
  'exchange.completed': {
    producer: 'order',
    consumers: ['notification'],
    summary: "the exchange's goods came back, a price fall was refunded, the replacements shipped",
  },
  'exchange.failed': {
    producer: 'order',
    consumers: ['notification'],
    summary: 'the exchange failed (no stock, a declined charge, an operator): what was done is undone',
  },
  'inventory.restock_requested': {
    producer: 'order',
    consumers: ['inventory'],
    summary:
      "a return's process asks to put its received lines back in stock (releases before 0.2; .v2 since, for any process)",
  },
  'inventory.restocked': {
    producer: 'inventory',
    consumers: [],
    summary:
      "the return's lines are back in stock (the answer to a 1.0 request, from an order release before 0.2)",
  },
  'inventory.restock_requested.v2': {
    producer: 'order',
    consumers: ['inventory'],
    summary:
      'a process asks to put lines back in stock once under its restock id (a return its received lines)',
  },
  'inventory.restocked.v2': {
    producer: 'inventory',
    consumers: ['order'],
    summary: "the restock's lines are back in stock",
  },
  'shipment.created': {
    producer: 'shipping',
    consumers: ['inventory', 'notification', 'order'],
    summary: 'a shipment was created for the order',
  },
  'shipment.delivered': {
    producer: 'shipping',
    consumers: ['notification', 'order'],
    summary: "the order's shipment was delivered",
  },
  'order.cancelled': { producer: 'order', consumers: [], summary: 'the order was cancelled' },
  'order.completed': { producer: 'order', consumers: [], summary: "the order's saga completed" },
  'order.failed': { producer: 'order', consumers: [], summary: "the order's saga failed at a step" },
  'post.created': { producer: 'content', consumers: [], summary: 'a post was published' },
  'notification.created': {
    producer: 'notification',
    consumers: ['realtime-gateway'],
    summary: 'a notification was stored for a user (pushed on /notifications)',
  },
  'notification.email_requested': {
    producer: 'notification',
    consumers: ['notification'],
    summary:
      "a notification's mail to be sent again: published only to its .dlt when the mail is given up (dead); an " +
      "operator's replay brings it here, and the notification service makes the mail pending again",
  },
}

const header = (description: string, schema: TSchema = Type.String()) => ({ ...schema, description })

/** The headers of every event message: the relay's `message-id` and, when the event was appended in a trace, W3C's. */
const eventHeaders = Type.Object({
  'message-id': header('outbox-{id}: the outbox row the relay published it from'),
  traceparent: Type.Optional(
    header(
      "W3C Trace Context (https://www.w3.org/TR/trace-context/): the relay's publish span, a child of the span that " +
        "appended the event; on a retry or dead letter, the failed delivery's span. Absent outside a trace; a " +
        'malformed one is ignored (the consumer starts a new trace)',
      Type.String({ maxLength: 512 }),
    ),
  ),
  tracestate: Type.Optional(
    header('W3C Trace Context vendor entries, with traceparent', Type.String({ maxLength: 512 })),
  ),
  process: Type.Optional(
    header(
      "a process's command: the stamp (JSON: {type, key, step, attempt}) of the instance and step that asked; the " +
        "handler's events carry it back as process-answer. A malformed one is ignored",
      Type.String({ maxLength: maxProcessStampLength }),
    ),
  ),
  'process-answer': Type.Optional(
    header(
      "an answer to a process's command: the command's process stamp, by which the process manager routes it",
      Type.String({ maxLength: maxProcessStampLength }),
    ),
  ),
})
/** What the consumer runner adds when it moves a failing event to a retry topic. */
const retryHeaders = Type.Object({
  ...eventHeaders.properties,
  'retry-count': header("the retry this is, 1 to the layout's retries"),
  'original-topic': header('the topic the event was published to'),
  'consumer-group': header('the group whose handler failed: only it runs the retry'),
  'retry-due-at': header('epoch ms at which the retry may run'),
  'error-message': Type.Optional(header('the failure, cut to 1000 characters')),
})
const deadLetterHeaders = Type.Object({
  ...eventHeaders.properties,
  'original-topic': header('the topic the event was published to'),
  'error-message': header('the last failure, cut to 1000 characters'),
  // no maxLength: released dead letters hold it without one (events.ts says why)
  'dead-lettered-at': header('ISO 8601', Type.String({ format: 'date-time' })),
  'consumer-group': Type.Optional(header('the group whose handler failed')),
  'retry-count': Type.Optional(header('the retries it had')),
})

/** The name of an event type's data schema in components.schemas, read back by the compatibility check. */
export const dataSchemaName = (type: string) => `${type}.data`

type Json = Record<string, unknown>

/** Data schemas, messages, channels and operations of the domain events. */
export function eventsPartOfDocument(): {
  schemas: Json
  messages: Json
  channels: Json
  operations: Json
} {
  const schemas: Json = {}
  const messages: Json = {}
  const channels: Json = {}
  const operations: Json = {}
  const types = Object.keys(eventCatalogue) as EventType[]
  for (const type of types) {
    const { version, data } = eventCatalogue[type]
    const parties = eventParties[type]
    schemas[dataSchemaName(type)] = data
    const envelope = EventEnvelope(
      type,
      Type.Unsafe({ $ref: `#/components/schemas/${dataSchemaName(type)}` }),
    )
    messages[type] = {
      name: type,
      title: type,
      summary: parties.summary,
      contentType: 'application/json',
      'x-schema-version': version,
      headers: eventHeaders,
      payload: {
        ...envelope,
        properties: {
          ...envelope.properties,
          schemaVersion: { ...envelope.properties.schemaVersion, description: `${version} in this release` },
        },
      },
      bindings: { kafka: { key: Type.String({ description: 'the aggregate id' }), bindingVersion: '0.5.0' } },
    }
    const channelRef = { $ref: `#/channels/${type}` }
    channels[type] = {
      address: type,
      title: type,
      description: `Produced by ${parties.producer}; consumed by ${parties.consumers.join(', ') || 'no service yet'}.`,
      servers: [{ $ref: '#/servers/kafka' }],
      messages: { [type]: { $ref: `#/components/messages/${type}` } },
      bindings: {
        kafka: { topic: type, partitions: kafkaTopicLayout.partitions, bindingVersion: '0.5.0' },
      },
    }
    operations[`${type}.publish`] = {
      action: 'send',
      channel: channelRef,
      summary: `${parties.producer} publishes it through its outbox, in the transaction of its write`,
      messages: [{ $ref: `#/channels/${type}/messages/${type}` }],
    }
    if (parties.consumers.length > 0) {
      operations[`${type}.consume`] = {
        action: 'receive',
        channel: channelRef,
        summary: `consumed by ${parties.consumers.join(', ')}, each in its own group`,
        messages: [{ $ref: `#/channels/${type}/messages/${type}` }],
      }
    }
  }
  const failures = failureChannels(types)
  return {
    schemas,
    messages: { ...messages, ...failures.messages },
    channels: { ...channels, ...failures.channels },
    operations: { ...operations, ...failures.operations },
  }
}

/** `{type}.retry.{n}` and `{type}.dlt`, described once for every event type. */
function failureChannels(types: EventType[]): { messages: Json; channels: Json; operations: Json } {
  const eventType = { enum: types, description: 'the event type whose topic this is' }
  const anyEnvelope = { ...EventEnvelopeBase, description: 'the envelope as it was published, unchanged' }
  const retryAttempts = Array.from({ length: kafkaTopicLayout.retries }, (_, index) => String(index + 1))
  return {
    messages: {
      retriedEvent: {
        name: 'retried event',
        title: 'An event waiting for its retry',
        contentType: 'application/json',
        headers: retryHeaders,
        payload: anyEnvelope,
      },
      deadLetter: {
        name: 'dead letter',
        title: 'An event that failed every retry, or can never succeed',
        contentType: 'application/json',
        headers: deadLetterHeaders,
        payload: { description: 'the message as it was read (an envelope, or whatever was not one)' },
      },
    },
    channels: {
      retry: {
        address: '{eventType}.retry.{attempt}',
        title: 'Retry topics',
        description:
          'A consumer whose handler fails moves the event to retry 1, 2, 3 (after 1, 5, 15 s), pausing only that partition; only the failing group runs it again.',
        servers: [{ $ref: '#/servers/kafka' }],
        parameters: { eventType, attempt: { enum: retryAttempts, description: 'the retry, from 1' } },
        messages: { retriedEvent: { $ref: '#/components/messages/retriedEvent' } },
      },
      deadLetter: {
        address: '{eventType}.dlt',
        title: 'Dead-letter topics',
        description:
          'After the last retry, or at once for a message that can never succeed (not an envelope, unknown type, bad data). Replayed to its original topic by ./scripts/events replay or the admin API.',
        servers: [{ $ref: '#/servers/kafka' }],
        parameters: { eventType },
        messages: { deadLetter: { $ref: '#/components/messages/deadLetter' } },
      },
    },
    operations: {
      'retry.publish': {
        action: 'send',
        channel: { $ref: '#/channels/retry' },
        summary: 'a consumer moves a failing event to its next retry',
        messages: [{ $ref: '#/channels/retry/messages/retriedEvent' }],
      },
      'retry.consume': {
        action: 'receive',
        channel: { $ref: '#/channels/retry' },
        summary: 'the failing group runs the event again when it is due',
        messages: [{ $ref: '#/channels/retry/messages/retriedEvent' }],
      },
      'deadLetter.publish': {
        action: 'send',
        channel: { $ref: '#/channels/deadLetter' },
        summary:
          'a consumer gives up on an event: an error log, events_dead_lettered_total, the onDeadLetter hook',
        messages: [{ $ref: '#/channels/deadLetter/messages/deadLetter' }],
      },
    },
  }
}
