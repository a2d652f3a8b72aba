// The default namespace (spec: Real-time events, default rows): `welcome` on connect, `echo`, `message` broadcast as
// `new_message` (to every socket of every instance: its text is held to realtimeLimits.broadcastTextMax), `private` to
// one socket id, and rooms (`join` / `leave` of `room:{name}`, at most REALTIME_MAX_ROOMS_PER_SOCKET) whose sockets
// hear `user-joined` when someone joins. `global-alert` comes from /admin, and `server:restart` / `auth:*` from the server
// (realtime-server.ts, session.ts).
//
// Why user-joined goes to a room and not to everyone: told to every socket on every connection, it costs n² messages
// for n sockets (bench:realtime measured 139,176 notices for 500 sockets to connect).
import { randomUUID } from 'node:crypto'
import { AppError, NewMessageIn, PrivateIn, RoomJoin, realtimeScopes } from '@meridian/contracts'
import type { FastifyBaseLogger } from 'fastify'
import { Type } from 'typebox'
import { type ChannelNamespace, type ChannelSocket, ClientEvents, RoomCap } from './channel.ts'

export interface MainChannelOptions {
  /** REALTIME_MAX_ROOMS_PER_SOCKET: `room:` rooms one socket may be in */
  maxRooms: number
  log: FastifyBaseLogger
}

/** Anything JSON a client wants echoed (within the 1 MB message limit the engine enforces). */
const EchoPayload = Type.Unknown()

export function mainChannel(namespace: ChannelNamespace<'/'>, { maxRooms, log }: MainChannelOptions): void {
  const cap = new RoomCap(maxRooms, 'room:')
  const events = new ClientEvents<ChannelSocket<'/'>>(log, realtimeScopes.namespaces['/'].events)
    .on('echo', EchoPayload, (socket, payload) => {
      const echo = { type: 'echo' as const, payload }
      socket.emit('echo', echo)
      return { echo }
    })
    .on('message', NewMessageIn, (socket, { text }) => {
      const { user } = socket.data
      const message = {
        id: randomUUID(),
        userId: user.userId,
        username: user.username,
        text,
        createdAt: new Date().toISOString(),
      }
      namespace.emit('new_message', message)
      return { message }
    })
    .on('join', RoomJoin, async (socket, { room }) => {
      const name = `room:${room}`
      await cap.join(socket, name, async () => {
        await socket.join(name)
        socket.to(name).emit('user-joined', { userId: socket.data.user.userId, room })
      })
      return { room }
    })
    .on('leave', RoomJoin, async (socket, { room }) => {
      await socket.leave(`room:${room}`)
      return { room }
    })
    .on('private', PrivateIn, async (socket, { to, text }) => {
      // across instances: the socket may live on another one
      const [target] = await namespace.in(to).fetchSockets()
      if (!target || target.id !== to) throw AppError.notFound('No such socket')
      namespace.to(to).emit('private', { text, from: socket.id, userId: socket.data.user.userId })
      return {}
    })

  namespace.on('connection', (socket) => {
    const { user } = socket.data
    // every socket is in the room of its own id (Socket.IO does that); a user's sockets share `user:{userId}`
    socket.join(`user:${user.userId}`)
    // to this socket alone and at once: `socket.emit` would go through the adapter's stream (connection-state recovery
    // keeps what it sends there) and reach the socket only when Redis answers, after the answer to a request the
    // client queued before it connected (test/welcome-order.test.ts). A welcome is this connection's, recovered or
    // not, so nothing is lost by keeping it out of the stream.
    namespace.local
      .to(socket.id)
      .emit('welcome', { type: 'welcome', message: `Welcome, ${user.username}`, socketId: socket.id })
    events.attach(socket)
  })
}
