// Content's consumers: auth's user events kept as the users projection, each applied in the consumer's
// transaction (the one that records the event in the inbox).
import { type AnyServiceConsumer, consumer } from '@meridian/events'
import type { UserUseCases } from '../domain/users.ts'

/** The consumer group of the content service: its inbox key and its retries' `consumer-group` header. */
export const consumerGroup = 'content'

export type ContentEventType = 'user.registered' | 'user.profile_changed' | 'user.removed'

export interface ContentConsumersOptions {
  /** the consumer group; default 'content' */
  group?: string
  /** topics read instead of the event types, for isolation (tests); a service reads its event types */
  topics?: Partial<Record<ContentEventType, string>>
}

/** What main.ts hands to eventsPlugin: a consumer of each of auth's user events. */
export function contentConsumers(
  users: UserUseCases,
  { group = consumerGroup, topics = {} }: ContentConsumersOptions = {},
): AnyServiceConsumer<ContentEventType>[] {
  const topicOf = (type: ContentEventType) => (topics[type] === undefined ? {} : { topic: topics[type] })
  return [
    consumer({
      type: 'user.registered',
      group,
      handler: (event, tx) => users.applyRegistered(event.data, tx),
      ...topicOf('user.registered'),
    }),
    consumer({
      type: 'user.profile_changed',
      group,
      handler: (event, tx) => users.applyProfileChanged(event.data, tx),
      ...topicOf('user.profile_changed'),
    }),
    consumer({
      type: 'user.removed',
      group,
      handler: (event, tx) => users.applyRemoved(event.data, tx),
      ...topicOf('user.removed'),
    }),
  ]
}
