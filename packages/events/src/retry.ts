// Retry and dead-letter topic names and the headers that carry a failed event between them (spec: Failure handling).
import type { IHeaders } from 'kafkajs'
import { headerText } from './kafka.ts'

/** The spec's delays before retry 1, 2 and 3. */
export const defaultRetryDelaysMs: readonly number[] = [1000, 5000, 15000]

/** `{topic}.retry.{n}`, n from 1 */
export const retryTopicOf = (topic: string, attempt: number): string => `${topic}.retry.${attempt}`
/** `{topic}.dlt` */
export const deadLetterTopicOf = (topic: string): string => `${topic}.dlt`

/** The retry number a topic name carries (`orders.retry.2` -> 2), or 0 for any other topic. */
export function retryLevelOf(topic: string): number {
  const match = /\.retry\.(\d+)$/.exec(topic)
  return match ? Number(match[1]) : 0
}

/** The topic a retry or dead-letter topic belongs to, read from its name. */
export function baseTopicOf(topic: string): string {
  return topic.replace(/\.retry\.\d+$|\.dlt$/, '')
}

export const RetryHeader = {
  messageId: 'message-id',
  retryCount: 'retry-count',
  originalTopic: 'original-topic',
  consumerGroup: 'consumer-group',
  errorMessage: 'error-message',
  /** epoch milliseconds at which the retry consumer may run the event again */
  dueAt: 'retry-due-at',
  /** ISO 8601 */
  deadLetteredAt: 'dead-lettered-at',
} as const

/** Headers this package sets on retry and dead-letter messages; they are dropped when an event is replayed. */
export const failureHeaderNames: ReadonlySet<string> = new Set([
  RetryHeader.retryCount,
  RetryHeader.originalTopic,
  RetryHeader.consumerGroup,
  RetryHeader.errorMessage,
  RetryHeader.dueAt,
  RetryHeader.deadLetteredAt,
])

/** Kafka headers as text, without this package's failure headers (so `message-id` and tracing headers travel on). */
export function carriedHeaders(headers: IHeaders | undefined): Record<string, string> {
  const carried: Record<string, string> = {}
  for (const name of Object.keys(headers ?? {})) {
    if (failureHeaderNames.has(name)) continue
    const value = headerText(headers, name)
    if (value !== undefined) carried[name] = value
  }
  return carried
}

/** Long messages (stack-like texts, SQL errors) are cut so that headers stay small. */
export function errorMessageOf(error: unknown): string {
  const text = error instanceof Error ? error.message || error.name : String(error)
  return text.length > 1000 ? `${text.slice(0, 999)}…` : text
}
