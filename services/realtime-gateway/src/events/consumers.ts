// The realtime-gateway's consumer: notification.created becomes `notification:new` in the user's room of
// /notifications. One instance of the group handles each event; the adapter carries the emit to the user's sockets
// on every instance. Delivery to sockets is at most once (a client that was away fetches the list).
import { createHash } from 'node:crypto'
import {
  type AnyServiceConsumer,
  type ConsumersOptions,
  consumersOf,
  type EventHandler,
} from '@meridian/events'
import { SpanKind, trace } from '@opentelemetry/api'
import type { ChannelNamespace } from '../channels/channel.ts'
import { notificationsRoom } from '../channels/notifications.ts'

/** The consumer group of the realtime-gateway: its inbox key and its retries' `consumer-group` header. */
export const consumerGroup = 'realtime-gateway'

/**
 * Emits `notification:new` in a `notification:new push` span, a child of the event's consumer span (the handler runs
 * inside it), so the push is the last step of the order's trace. The span names the room by a hash: no user id.
 */
export const onNotificationCreated =
  (namespace: ChannelNamespace<'/notifications'>): EventHandler<'notification.created'> =>
  async (event) => {
    const { notificationId, userId, type, title, message, createdAt } = event.data
    const room = notificationsRoom(userId)
    trace
      .getTracer('@meridian/realtime-gateway')
      .startActiveSpan('notification:new push', { kind: SpanKind.PRODUCER }, (span) => {
        if (span.isRecording()) {
          span.setAttributes({
            'messaging.system': 'socket.io',
            'messaging.operation.type': 'send',
            'messaging.destination.name': '/notifications',
            'meridian.realtime.room_hash': roomHash(room),
            'meridian.notification.type': type,
          })
        }
        try {
          namespace.to(room).emit('notification:new', { id: notificationId, type, title, message, createdAt })
        } finally {
          span.end()
        }
      })
  }

/** A room's name in a trace: enough to tell pushes to one room apart, not to read the user id back. */
const roomHash = (room: string): string => createHash('sha256').update(room).digest('hex').slice(0, 16)

export type RealtimeGatewayEventType = 'notification.created'

export type RealtimeGatewayConsumersOptions = ConsumersOptions<RealtimeGatewayEventType>

/** What the app's event backbone runs. */
export function realtimeGatewayConsumers(
  notifications: ChannelNamespace<'/notifications'>,
  options?: RealtimeGatewayConsumersOptions,
): AnyServiceConsumer<RealtimeGatewayEventType>[] {
  return consumersOf(consumerGroup, { 'notification.created': onNotificationCreated(notifications) }, options)
}
