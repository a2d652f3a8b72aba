// Dead letters: an event that can never succeed, or that failed every retry, is parked in `{topic}.dlt` and alerted.
import { trace } from '@opentelemetry/api'
import type { KafkaMessage } from 'kafkajs'
import type { ConsumerLogger } from './consumer-logger.ts'
import type { EventMetrics } from './event-metrics.ts'
import type { EventProducer } from './kafka.ts'
import { carriedHeaders, deadLetterTopicOf, RetryHeader } from './retry.ts'
import { withTraceHeaders } from './tracing.ts'

/** `invalid-event`: not JSON, not an envelope, an unknown type or bad data; `retries-exhausted`: the last retry failed. */
export type DeadLetterReason = 'invalid-event' | 'retries-exhausted'

/** What the alert hook is told about a dead-lettered event. */
export interface DeadLetterInfo {
  /** the topic the event was published to first */
  topic: string
  deadLetterTopic: string
  group: string
  reason: DeadLetterReason
  errorMessage: string
  /** retries the event went through before it was parked */
  retries: number
  /** the event id, or the `message-id` header of a message that is not an event */
  eventId: string | undefined
  eventType: string | undefined
  key: string | undefined
  /** ISO 8601, as in the `dead-lettered-at` header */
  deadLetteredAt: string
}

/** Called once per dead-lettered event (after it is safely in the dead-letter topic): page someone, open a ticket. */
export type DeadLetterHook = (info: DeadLetterInfo) => void | Promise<void>

export interface DeadLetterTarget {
  producer: EventProducer
  group: string
  logger: ConsumerLogger
  metrics?: EventMetrics | undefined
  onDeadLetter?: DeadLetterHook | undefined
}

export interface DeadLetterCase {
  /** the message as it was read (from the topic or one of its retry topics) */
  message: KafkaMessage
  /** the topic the event was published to first */
  topic: string
  reason: DeadLetterReason
  errorMessage: string
  retries: number
  event?: { id: string; type: string } | undefined
}

/**
 * Publishes the message, key and value unchanged, to `{topic}.dlt` with `original-topic`, `error-message`,
 * `dead-lettered-at` (ISO 8601), `consumer-group` and `retry-count`, then raises the alert: an error-level log, the
 * deadLettered metric and the hook. A failing hook is logged; it never un-parks the event.
 *
 * Called inside the failed delivery's span: the span gets a `dead-lettered` event, and the dead letter's trace headers
 * name that span, so a replayed event's delivery continues the same trace.
 */
export async function sendToDeadLetters(
  target: DeadLetterTarget,
  failed: DeadLetterCase,
): Promise<DeadLetterInfo> {
  const deadLetteredAt = new Date().toISOString()
  const deadLetterTopic = deadLetterTopicOf(failed.topic)
  const headers = carriedHeaders(failed.message.headers)
  const key = failed.message.key?.toString()
  await target.producer.publish([
    {
      topic: deadLetterTopic,
      key: key ?? '',
      value: failed.message.value?.toString('utf8') ?? '',
      headers: {
        ...withTraceHeaders(headers),
        [RetryHeader.originalTopic]: failed.topic,
        [RetryHeader.errorMessage]: failed.errorMessage,
        [RetryHeader.deadLetteredAt]: deadLetteredAt,
        [RetryHeader.consumerGroup]: target.group,
        [RetryHeader.retryCount]: String(failed.retries),
      },
    },
  ])

  const info: DeadLetterInfo = {
    topic: failed.topic,
    deadLetterTopic,
    group: target.group,
    reason: failed.reason,
    errorMessage: failed.errorMessage,
    retries: failed.retries,
    eventId: failed.event?.id ?? headers[RetryHeader.messageId],
    eventType: failed.event?.type,
    key,
    deadLetteredAt,
  }
  const span = trace.getActiveSpan()
  if (span?.isRecording())
    span.addEvent('dead-lettered', {
      'meridian.dead_letter.topic': deadLetterTopic,
      'meridian.dead_letter.reason': failed.reason,
      'meridian.dead_letter.retries': failed.retries,
    })
  target.metrics?.deadLettered.inc({ topic: failed.topic, group: target.group })
  target.logger.error({ alert: 'event-dead-lettered', ...info }, 'event dead-lettered')
  if (target.onDeadLetter) {
    try {
      await target.onDeadLetter(info)
    } catch (error) {
      target.logger.error(
        { err: error, eventId: info.eventId, group: target.group },
        'dead-letter hook failed',
      )
    }
  }
  return info
}
