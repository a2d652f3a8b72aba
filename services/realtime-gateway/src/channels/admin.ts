// /admin (spec: a namespace with its own middleware; the admin namespace rejects others with `Unauthorized`): admins
// list the connections of every instance, disconnect a socket, and send `global-alert` to everyone on the default
// namespace.
import {
  AdminDisconnect,
  GlobalAlert,
  realtimeMessages,
  realtimePaths,
  realtimeScopes,
} from '@meridian/contracts'
import { holdsRole } from '@meridian/service-kit'
import type { FastifyBaseLogger } from 'fastify'
import { Type } from 'typebox'
import { type ChannelNamespace, type ChannelSocket, ClientEvents } from './channel.ts'
import type { RealtimeChannel } from './realtime-server.ts'

const NoPayload = Type.Union([Type.Undefined(), Type.Object({}, { additionalProperties: false })])

export function adminChannel(
  namespace: ChannelNamespace<'/admin'>,
  { realtime, log }: { realtime: RealtimeChannel; log: FastifyBaseLogger },
): void {
  namespace.use((socket, next) => {
    next(
      holdsRole(socket.data.user.principal, ['admin']) ? undefined : new Error(realtimeMessages.unauthorized),
    )
  })

  const events = new ClientEvents<ChannelSocket<'/admin'>>(log, realtimeScopes.namespaces['/admin'].events)
    .on('admin:connections', NoPayload, async () => {
      const connections = []
      for (const path of Object.values(realtimePaths.namespaces)) {
        // fetchSockets asks every instance through the adapter
        for (const remote of await realtime.io.of(path).fetchSockets()) {
          const { user, address, connectedAt } = remote.data
          connections.push({
            socketId: remote.id,
            userId: user.userId,
            username: user.username,
            role: user.role,
            address,
            namespace: path,
            connectedAt,
          })
        }
      }
      return { connections }
    })
    .on('admin:disconnect', AdminDisconnect, async (socket, { socketId }) => {
      let disconnected = 0
      for (const path of Object.values(realtimePaths.namespaces)) {
        const found = await realtime.io.of(path).in(socketId).fetchSockets()
        disconnected += found.filter((remote) => remote.id === socketId).length
        realtime.io.of(path).in(socketId).disconnectSockets(true)
      }
      log.info({ socketId, by: socket.data.user.userId, disconnected }, 'socket disconnected by an admin')
      return { disconnected }
    })
    .on('admin:global-alert', GlobalAlert, (socket, { message }) => {
      realtime.namespace('/').emit('global-alert', { message })
      log.info({ by: socket.data.user.userId }, 'global alert sent')
      return {}
    })

  namespace.on('connection', (socket) => events.attach(socket))
}
