// A consumer's retry and dead-letter routing: where a failed event goes next, with which headers and when it is due,
// and which messages of its retry topics are its own group's to run.
import { trace } from '@opentelemetry/api'
import type { KafkaMessage } from 'kafkajs'
import { type DeadLetterTarget, sendToDeadLetters } from './dead-letter.ts'
import type { DomainEvent, InvalidEventError } from './envelope.ts'
import { headerText } from './kafka.ts'
import { carriedHeaders, errorMessageOf, RetryHeader, retryTopicOf } from './retry.ts'
import { withTraceHeaders } from './tracing.ts'

/** Where one consumer sends its failures: its event topic's retry topics and dead-letter topic. */
export interface FailureRouting extends DeadLetterTarget {
  /** the event topic, whose retry and dead-letter topics these are */
  topic: string
  /** delay before each retry; its length is the number of retries */
  retryDelaysMs: readonly number[]
}

/** A failed event as the consumer read it: the message, the event in it, and the retry it came from (0: none). */
export interface FailedEvent {
  message: KafkaMessage
  event: DomainEvent
  level: number
  error: unknown
}

/** Whether a message of a retry topic is this group's retry: the retry topics are shared by every group. */
export function isOwnRetry(group: string, message: KafkaMessage): boolean {
  return headerText(message.headers, RetryHeader.consumerGroup) === group
}

/** How long until a retry message is due (its `retry-due-at` header); 0 or less: due now. */
export function retryWaitMs(message: KafkaMessage): number {
  return Number(headerText(message.headers, RetryHeader.dueAt) ?? 0) - Date.now()
}

/** Hands a failed event to the next retry topic, or to the dead-letter topic after the last retry. */
export async function routeFailedEvent(routing: FailureRouting, failed: FailedEvent): Promise<void> {
  const { message, event, level } = failed
  const errorMessage = errorMessageOf(failed.error)
  const delayMs = routing.retryDelaysMs[level]
  if (delayMs === undefined) {
    await sendToDeadLetters(routing, {
      message,
      topic: routing.topic,
      reason: 'retries-exhausted',
      errorMessage,
      retries: level,
      event,
    })
    return
  }
  await scheduleRetry(routing, failed, errorMessage, delayMs)
}

/** A message that is not an event the consumer can take: straight to the dead-letter topic, no retry. */
export async function routeInvalidEvent(
  routing: FailureRouting,
  message: KafkaMessage,
  error: InvalidEventError,
  level: number,
): Promise<void> {
  await sendToDeadLetters(routing, {
    message,
    topic: routing.topic,
    reason: 'invalid-event',
    errorMessage: error.message,
    retries: level,
  })
}

/**
 * Publishes the event, key and value unchanged, to retry topic `level + 1`, due after `delayMs`. Called inside the
 * failed delivery's span: the span gets a `retry` event, and the retry message's trace headers name that span, so the
 * next attempt's span is its child.
 */
async function scheduleRetry(
  routing: FailureRouting,
  failed: FailedEvent,
  errorMessage: string,
  delayMs: number,
): Promise<void> {
  const { message, event, level } = failed
  const retry = level + 1
  const dueAt = Date.now() + delayMs
  const headers = withTraceHeaders(carriedHeaders(message.headers))
  await routing.producer.publish([
    {
      topic: retryTopicOf(routing.topic, retry),
      key: message.key?.toString() ?? '',
      value: message.value?.toString('utf8') ?? '',
      headers: {
        ...headers,
        [RetryHeader.messageId]: headers[RetryHeader.messageId] ?? event.id,
        [RetryHeader.retryCount]: String(retry),
        [RetryHeader.originalTopic]: routing.topic,
        [RetryHeader.consumerGroup]: routing.group,
        [RetryHeader.errorMessage]: errorMessage,
        [RetryHeader.dueAt]: String(dueAt),
      },
    },
  ])
  const span = trace.getActiveSpan()
  if (span?.isRecording())
    span.addEvent('retry', {
      'meridian.retry.attempt': retry + 1,
      'meridian.retry.delay_ms': delayMs,
      'meridian.retry.topic': retryTopicOf(routing.topic, retry),
    })
  routing.metrics?.retried.inc({ topic: routing.topic, group: routing.group, attempt: String(retry) })
  routing.logger.warn(
    {
      err: failed.error,
      eventId: event.id,
      eventType: event.type,
      topic: routing.topic,
      group: routing.group,
      retry,
      dueAt: new Date(dueAt).toISOString(),
    },
    'event handler failed; retry scheduled',
  )
}
