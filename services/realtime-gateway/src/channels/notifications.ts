// /notifications (spec: Real-time events): each user's sockets are in `notifications:{userId}`, where
// `notification:new` arrives (events/consumers.ts, from notification.created); `notifications:fetch` answers
// `notifications:list` with the unread ones and `notifications:read {notificationIds}` marks them, both through the
// notification service, which owns the list. Socket.IO delivers at most once: a client that was away fetches.
import { NotificationsRead, realtimeScopes } from '@meridian/contracts'
import type { FastifyBaseLogger } from 'fastify'
import { Type } from 'typebox'
import type { SocketCredential } from '../clients/forwarded-credential.ts'
import type { NotificationsClient } from '../clients/notifications.ts'
import { type ChannelNamespace, type ChannelSocket, ClientEvents } from './channel.ts'

/** The room of one user's notification sockets (spec: Rooms). */
export const notificationsRoom = (userId: string) => `notifications:${userId}`

const NoPayload = Type.Union([Type.Undefined(), Type.Object({}, { additionalProperties: false })])

export interface NotificationsChannelOptions {
  notifications: NotificationsClient
  credentials: WeakMap<object, SocketCredential>
  log: FastifyBaseLogger
}

export function notificationsChannel(
  namespace: ChannelNamespace<'/notifications'>,
  { notifications, credentials, log }: NotificationsChannelOptions,
): void {
  const credentialOf = (socket: ChannelSocket<'/notifications'>): SocketCredential => {
    const credential = credentials.get(socket)
    // admit() keeps one for every socket it lets in
    if (!credential) throw new Error(`socket ${socket.id} has no credential`)
    return credential
  }

  const events = new ClientEvents<ChannelSocket<'/notifications'>>(
    log,
    realtimeScopes.namespaces['/notifications'].events,
  )
    .on('notifications:fetch', NoPayload, async (socket) => {
      const unread = await notifications.unread(credentialOf(socket))
      socket.emit('notifications:list', unread)
      return { notifications: unread }
    })
    .on('notifications:read', NotificationsRead, async (socket, { notificationIds }) => {
      const read = await notifications.markRead(credentialOf(socket), notificationIds)
      // the spec's acknowledgement is {success: true}
      return { success: true, read }
    })

  namespace.on('connection', (socket) => {
    socket.join(notificationsRoom(socket.data.user.userId))
    events.attach(socket)
  })
}
