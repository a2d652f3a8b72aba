// Rights to rooms that change while sockets are in them: a member removed from a chat room or a document, a document
// deleted. The sockets concerned leave the room on every instance: this instance's at once, the others' when the
// announcement reaches them through the adapter's stream (serverSideEmit, in the same stream as the room's messages,
// so no message sent after the removal reaches them). A channel says how its sockets leave (chat presence, the
// document's list of editors); by default they just leave.
import type { RealtimeNamespace } from '@meridian/contracts'
import type { FastifyBaseLogger } from 'fastify'
import type { ChannelAccess } from '../domain/memberships.ts'
import type { ChannelNamespace, ChannelSocket, RoomRevoked } from './channel.ts'
import type { RealtimeChannel } from './realtime-server.ts'

type AnySocket = ChannelSocket<RealtimeNamespace>

/** How a channel lets one of its sockets leave a room it may no longer be in. */
export type LeaveRoom = (socket: AnySocket, room: string) => Promise<void> | void

export interface RoomAccess {
  /** The port the use cases of a resource get: its rooms are `roomOf(id)` in `path`. */
  of(path: RealtimeNamespace, roomOf: (resourceId: string) => string): ChannelAccess
  /** The channel of `path` lets its sockets leave this way (instead of a plain leave). */
  onRevoked(path: RealtimeNamespace, leave: LeaveRoom): void
}

const plainLeave: LeaveRoom = (socket, room) => socket.leave(room)

export function createRoomAccess(realtime: RealtimeChannel, log: FastifyBaseLogger): RoomAccess {
  const leaving = new Map<RealtimeNamespace, LeaveRoom>()
  const followed = new Set<RealtimeNamespace>()

  /** This instance's sockets of the namespace in the room: the user's, or everyone's. */
  function socketsIn(namespace: ChannelNamespace<RealtimeNamespace>, room: string, userId: string | null) {
    const path = namespace.name as RealtimeNamespace
    if (userId !== null)
      return realtime.watcher.socketsOf(userId, path).filter((socket) => socket.rooms.has(room))
    const sockets: AnySocket[] = []
    for (const id of namespace.adapter.rooms.get(room) ?? []) {
      const socket = namespace.sockets.get(id)
      if (socket) sockets.push(socket)
    }
    return sockets
  }

  function leaveHere(namespace: ChannelNamespace<RealtimeNamespace>, { room, userId }: RoomRevoked): void {
    const leave = leaving.get(namespace.name as RealtimeNamespace) ?? plainLeave
    for (const socket of socketsIn(namespace, room, userId)) {
      Promise.resolve(leave(socket, room)).catch((error: unknown) =>
        log.warn({ err: error, room, socketId: socket.id }, 'a socket could not leave a room it lost'),
      )
    }
  }

  function revoke(path: RealtimeNamespace, revoked: RoomRevoked): void {
    const namespace = realtime.namespace(path) as ChannelNamespace<RealtimeNamespace>
    leaveHere(namespace, revoked)
    // the other instances (serverSideEmit is not delivered to this one)
    namespace.serverSideEmit('room:revoked', revoked)
  }

  function follow(path: RealtimeNamespace): void {
    if (followed.has(path)) return
    followed.add(path)
    const namespace = realtime.namespace(path) as ChannelNamespace<RealtimeNamespace>
    namespace.on('room:revoked', (revoked: RoomRevoked) => leaveHere(namespace, revoked))
  }

  return {
    of(path, roomOf) {
      follow(path)
      return {
        memberRemoved: (resourceId, userId) => revoke(path, { room: roomOf(resourceId), userId }),
        removed: (resourceId) => revoke(path, { room: roomOf(resourceId), userId: null }),
      }
    },
    onRevoked(path, leave) {
      leaving.set(path, leave)
    },
  }
}
