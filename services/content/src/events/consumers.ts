// Content's consumers: auth's user events kept as the users projection, each applied in the consumer's
// transaction (the one that records the event in the inbox).
import { type AnyServiceConsumer, type ConsumersOptions, consumersOf } from '@meridian/events'
import type { UserUseCases } from '../domain/users.ts'

/** The consumer group of the content service: its inbox key and its retries' `consumer-group` header. */
export const consumerGroup = 'content'

export type ContentEventType = 'user.registered' | 'user.profile_changed' | 'user.removed'

export type ContentConsumersOptions = ConsumersOptions<ContentEventType>

/** What the app's event backbone runs: a consumer of each of auth's user events. */
export function contentConsumers(
  users: UserUseCases,
  options?: ContentConsumersOptions,
): AnyServiceConsumer<ContentEventType>[] {
  return consumersOf(
    consumerGroup,
    {
      'user.registered': (event, tx) => users.applyRegistered(event.data, tx),
      'user.profile_changed': (event, tx) => users.applyProfileChanged(event.data, tx),
      'user.removed': (event, tx) => users.applyRemoved(event.data, tx),
    },
    options,
  )
}
