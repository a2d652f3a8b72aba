// The /chat namespace: joining a room (members only, at most REALTIME_MAX_ROOMS_PER_SOCKET per socket) with its
// history, messages stored (at most REALTIME_CHAT_MESSAGES_PER_WINDOW per user and window, across instances) and
// broadcast to the room, typing notices, and presence; a member removed over REST leaves the room (room-access.ts).
// A user stays present in a room for the offline grace after their last socket left it (leave or disconnect), so a
// reconnect within it tells nobody anything; only when the grace ends is chat:user-left sent, by whichever instance
// claims the departure in Redis. The spec's "room membership is dropped" after the grace is read as this presence:
// the right to join (REST membership) is never dropped by going offline.
import {
  AppError,
  type ChatHistory,
  ChatJoin,
  ChatLeave,
  ChatMessageIn,
  type ChatPresence,
  ChatTypingIn,
  realtimeScopes,
} from '@meridian/contracts'
import type { FastifyBaseLogger } from 'fastify'
import {
  type ChatSpeaker,
  type ChatUseCases,
  chatRoomChannel,
  chatRoomChannelPrefix,
} from '../domain/chat.ts'
import type { Presence, UserRate } from '../domain/live-state.ts'
import { type ChannelNamespace, type ChannelSocket, ClientEvents, RoomCap } from './channel.ts'
import type { RoomAccess } from './room-access.ts'

type ChatSocket = ChannelSocket<'/chat'>

export interface ChatChannelDependencies {
  chat: ChatUseCases
  presence: Presence
  /** the chat messages each user may store (REALTIME_CHAT_MESSAGES_PER_WINDOW) */
  messageRate: UserRate
  /** REALTIME_MAX_ROOMS_PER_SOCKET */
  maxRooms: number
  /** where a removed member's sockets are made to leave */
  rooms: RoomAccess
  log: FastifyBaseLogger
}

/** The refusal of a message over the user's chat-message rate. */
export const tooManyMessages = 'Too many chat messages; wait before sending more'

/** The refusal of a message to a room this socket did not join. */
export const notJoinedMessage = 'Join the room first'

/** The safety net's period: departures whose own timer never fired (their instance stopped) are swept by another. */
const sweepIntervalOf = (graceMs: number) => Math.min(Math.max(graceMs, 250), 30_000)
/** After a departure's deadline, a little slack for the clocks of Redis and of this process. */
const deadlineSlackMs = 25

const speakerOf = (socket: ChannelSocket<'/chat'>): ChatSpeaker => ({
  userId: socket.data.user.userId.toLowerCase(),
  username: socket.data.user.username,
})

export function chatChannel(
  namespace: ChannelNamespace<'/chat'>,
  { chat, presence, messageRate, maxRooms, rooms, log }: ChatChannelDependencies,
): { close(): Promise<void> } {
  const cap = new RoomCap(maxRooms, chatRoomChannelPrefix)
  const timers = new Set<NodeJS.Timeout>()
  let sweeping: Promise<void> = Promise.resolve()
  let closed = false

  /** Claims due departures and tells each room who left (only the instance that claimed one tells it). */
  function sweep(): Promise<void> {
    sweeping = sweeping
      .then(async () => {
        for (const left of await presence.sweep()) {
          const user: ChatPresence = { roomId: left.roomId, userId: left.userId, username: left.username }
          namespace.to(chatRoomChannel(left.roomId)).emit('chat:user-left', user)
        }
      })
      .catch((error: unknown) => log.warn({ err: error }, 'chat presence sweep failed; the next one retries'))
    return sweeping
  }

  const interval = setInterval(sweep, sweepIntervalOf(presence.graceMs))

  /** One socket of the user left the room; their last one starts the grace, swept when it ends. */
  async function depart(roomId: string, userId: string): Promise<void> {
    const { lastSocket } = await presence.depart(roomId, userId)
    if (!lastSocket || closed) return
    const timer = setTimeout(() => {
      timers.delete(timer)
      void sweep()
    }, presence.graceMs + deadlineSlackMs)
    timers.add(timer)
  }

  /** the rooms each socket counts in, by room id (made at its first join) */
  const joinedRooms = new WeakMap<object, Set<string>>()
  const joinedOf = (socket: ChatSocket): Set<string> => {
    let joined = joinedRooms.get(socket)
    if (!joined) {
      joined = new Set()
      joinedRooms.set(socket, joined)
    }
    return joined
  }
  const hasJoined = (socket: ChatSocket, roomId: string) => joinedRooms.get(socket)?.has(roomId) === true

  /** Counts the socket in the room; tells the others when the user was not present yet. */
  async function arrive(socket: ChatSocket, roomId: string): Promise<void> {
    const speaker = speakerOf(socket)
    joinedOf(socket).add(roomId)
    // sent before anything is awaited: a disconnect's departure, sent later on the same connection, comes after it
    const arrival = presence.arrive({ roomId, ...speaker })
    await socket.join(chatRoomChannel(roomId))
    const { wasPresent } = await arrival
    if (!wasPresent) socket.to(chatRoomChannel(roomId)).emit('chat:user-joined', { roomId, ...speaker })
  }

  /** The socket leaves the room (chat:leave, or a membership it lost); its user departs if it was their last. */
  async function leave(socket: ChatSocket, roomId: string): Promise<void> {
    // leaving a room this socket is not in changes nothing
    const counted = joinedRooms.get(socket)?.delete(roomId) === true
    const room = chatRoomChannel(roomId)
    if (socket.rooms.has(room)) await socket.leave(room)
    if (counted) await depart(roomId, speakerOf(socket).userId)
  }

  rooms.onRevoked('/chat', (socket, room) => leave(socket, room.slice(chatRoomChannelPrefix.length)))

  const events = new ClientEvents<ChatSocket>(log, realtimeScopes.namespaces['/chat'].events)
    .on('chat:join', ChatJoin, async (socket, { roomId }) => {
      const history = await cap.join(socket, chatRoomChannel(roomId), async (): Promise<ChatHistory> => {
        const joined = await chat.joinRoom(speakerOf(socket), roomId)
        if (!hasJoined(socket, roomId)) await arrive(socket, roomId)
        return joined
      })
      socket.emit('chat:history', history)
      return { history, online: await presence.online(roomId) }
    })
    .on('chat:message', ChatMessageIn, async (socket, { roomId, text }) => {
      if (!hasJoined(socket, roomId)) throw AppError.forbidden(notJoinedMessage)
      const speaker = speakerOf(socket)
      const taken = await messageRate.take(speaker.userId)
      if (!taken.allowed) throw AppError.rateLimited(taken.retryAfterSeconds, tooManyMessages)
      const message = await chat.postMessage(speaker, roomId, text)
      // the sender too: every tab shows the stored message, with its id and time
      namespace.to(chatRoomChannel(roomId)).emit('chat:message', message)
      return { message }
    })
    .on('chat:typing', ChatTypingIn, (socket, { roomId, isTyping }) => {
      // volatile: a notice missed on a slow link is worth nothing a moment later; not joined, silently ignored
      if (hasJoined(socket, roomId)) {
        socket.volatile
          .to(chatRoomChannel(roomId))
          .emit('chat:typing', { roomId, ...speakerOf(socket), isTyping })
      }
      return undefined
    })
    .on('chat:leave', ChatLeave, async (socket, { roomId }) => {
      // a room this socket is not in: acknowledged all the same
      await leave(socket, roomId)
      return {}
    })

  /** `this` is the socket leaving: its user departs from every room it counted in. */
  function departAll(this: ChatSocket): void {
    const joined = joinedRooms.get(this)
    if (!joined) return
    const { userId } = speakerOf(this)
    for (const roomId of joined) {
      depart(roomId, userId).catch((error: unknown) =>
        log.warn({ err: error, roomId, userId }, 'chat departure failed: the user stays present'),
      )
    }
    joinedRooms.delete(this)
  }

  namespace.on('connection', (socket) => {
    // a client back with its state recovered is in its rooms again without joining them: it counts again
    if (socket.recovered) {
      for (const room of socket.rooms) {
        const roomId = room.startsWith(chatRoomChannelPrefix)
          ? room.slice(chatRoomChannelPrefix.length)
          : undefined
        if (roomId)
          void arrive(socket, roomId).catch((error: unknown) =>
            log.warn({ err: error, roomId }, 'chat rejoin failed'),
          )
      }
    }
    events.attach(socket)
    socket.on('disconnecting', departAll)
  })

  return {
    async close() {
      closed = true
      clearInterval(interval)
      for (const timer of timers) clearTimeout(timer)
      timers.clear()
      await sweeping
    },
  }
}
