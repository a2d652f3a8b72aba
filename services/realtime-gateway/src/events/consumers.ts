// The realtime-gateway's consumer: notification.created becomes `notification:new` in the user's room of
// /notifications. One instance of the group handles each event; the adapter carries the emit to the user's sockets
// on every instance. Delivery to sockets is at most once (a client that was away fetches the list).
import {
  type AnyServiceConsumer,
  type ConsumersOptions,
  consumersOf,
  type EventHandler,
} from '@meridian/events'
import type { ChannelNamespace } from '../channels/channel.ts'
import { notificationsRoom } from '../channels/notifications.ts'

/** The consumer group of the realtime-gateway: its inbox key and its retries' `consumer-group` header. */
export const consumerGroup = 'realtime-gateway'

export const onNotificationCreated =
  (namespace: ChannelNamespace<'/notifications'>): EventHandler<'notification.created'> =>
  async (event) => {
    const { notificationId, userId, type, title, message, createdAt } = event.data
    namespace
      .to(notificationsRoom(userId))
      .emit('notification:new', { id: notificationId, type, title, message, createdAt })
  }

export type RealtimeGatewayEventType = 'notification.created'

export type RealtimeGatewayConsumersOptions = ConsumersOptions<RealtimeGatewayEventType>

/** What the app's event backbone runs. */
export function realtimeGatewayConsumers(
  notifications: ChannelNamespace<'/notifications'>,
  options?: RealtimeGatewayConsumersOptions,
): AnyServiceConsumer<RealtimeGatewayEventType>[] {
  return consumersOf(consumerGroup, { 'notification.created': onNotificationCreated(notifications) }, options)
}
