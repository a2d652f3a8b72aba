// A client process of bench:realtime: holds its share of the sockets (each its own engine connection, WebSocket
// transport, its own user's token on the gateway), opens /chat on some of them to receive the broadcasts in a chat
// room, on the control process sends the broadcasts and runs the chatters, and on the flood process floods. Told what
// to do by main.ts over IPC (client-ipc.ts); never in a server's process. socket.io-client is the official client, the one the SDK wraps.
import { randomUUID } from 'node:crypto'
import { setTimeout as sleep } from 'node:timers/promises'
import { io, type Socket } from 'socket.io-client'
import { monotonicMs } from '../events/clock.ts'
import {
  answerParent,
  type BroadcastReply,
  type ChatStartRequest,
  type ChatStopReply,
  type ClientCommand,
  type ClientMessage,
  type ConnectReply,
  type ConnectRequest,
  type FloodStartRequest,
  type FloodStopReply,
  type JoinRoomReply,
  type JoinRoomRequest,
  type ReceiptsReply,
} from './client-ipc.ts'
import { mintToken } from './tokens.ts'

if (!process.send) throw new Error('a client process is started by bench/src/realtime/main.ts, over IPC')
const send = (message: ClientMessage) => process.send?.(message)

const connectTimeoutMs = 30_000
const held: Socket[] = []
const roomSockets: Socket[] = []
/** broadcast seq -> receive times */
const receipts = new Map<number, number[]>()
let payloadBytes = 0
let control: Socket | undefined
let chat: { stop: () => Promise<ChatStopReply> } | undefined
let flood: { stop: () => FloodStopReply } | undefined

const tally = (errors: Record<string, number>, error: unknown) => {
  const key = (error instanceof Error ? error.message : String(error)).slice(0, 120)
  errors[key] = (errors[key] ?? 0) + 1
}

/** Resolves when the socket has connected to its namespace; rejects with connect_error's message or on timeout. */
function connected(socket: Socket): Promise<void> {
  return new Promise((resolve, reject) => {
    if (socket.connected) return resolve()
    const timer = setTimeout(() => fail(new Error('connect timeout')), connectTimeoutMs)
    const done = () => {
      clearTimeout(timer)
      socket.off('connect', onConnect)
      socket.off('connect_error', fail)
    }
    const onConnect = () => {
      done()
      resolve()
    }
    function fail(error: Error) {
      done()
      reject(error)
    }
    socket.once('connect', onConnect)
    socket.once('connect_error', fail)
  })
}

/** Runs `work(i)` for i in [0, count), at most `limit` at once. */
async function pooled(count: number, limit: number, work: (i: number) => Promise<void>): Promise<void> {
  let next = 0
  await Promise.all(
    Array.from({ length: Math.max(1, Math.min(limit, count)) }, async () => {
      for (let i = next++; i < count; i = next++) await work(i)
    }),
  )
}

async function connect(request: ConnectRequest): Promise<ConnectReply> {
  const errors: Record<string, number> = {}
  let ok = 0
  const startedAt = monotonicMs()
  await pooled(request.count, request.concurrency, async (i) => {
    const token = request.tokens ? mintToken(request.tokens) : null
    const socket = io(`${request.url}${request.namespace}`, {
      transports: ['websocket'],
      forceNew: true,
      reconnection: false,
      timeout: connectTimeoutMs,
      localAddress: request.localAddresses[i % request.localAddresses.length],
      ...(token ? { auth: { token } } : {}),
    } as Parameters<typeof io>[1])
    try {
      await connected(socket)
      held.push(socket)
      ok += 1
    } catch (error) {
      tally(errors, error)
      socket.disconnect()
    }
  })
  return { connected: ok, failed: request.count - ok, errors, startedAt, endedAt: monotonicMs() }
}

type Answer = { ok?: boolean; error?: { message?: string } }

async function joinRoom(socket: Socket, roomId: string): Promise<void> {
  const answer = (await socket.timeout(30_000).emitWithAck('chat:join', { roomId })) as Answer
  if (answer?.ok !== true) throw new Error(`chat:join refused: ${answer?.error?.message ?? 'no answer'}`)
}

async function joinBroadcastRoom(request: JoinRoomRequest): Promise<JoinRoomReply> {
  const errors: Record<string, number> = {}
  const started = monotonicMs()
  const chosen = held.slice(0, request.count)
  let failed = request.count - chosen.length
  await pooled(chosen.length, 50, async (i) => {
    const socket = chosen[i]!
    // /chat on the same engine connection (Socket.IO multiplexes namespaces); the manager connects it at once (a
    // second connect() would send a second CONNECT: two sockets on the server)
    const chat = socket.io.socket('/chat', request.token ? { auth: { token: request.token } } : {})
    chat.on('chat:message', (message: { text?: unknown }) => {
      const at = monotonicMs()
      if (typeof message.text !== 'string' || !message.text.startsWith('b')) return
      const seq = Number.parseInt(message.text.slice(1), 10)
      if (payloadBytes === 0) payloadBytes = Buffer.byteLength(JSON.stringify(message))
      const times = receipts.get(seq) ?? []
      if (times.length === 0) receipts.set(seq, times)
      times.push(at)
      if (times.length === roomSockets.length) send({ type: 'received-all', seq })
    })
    try {
      await connected(chat)
      await joinRoom(chat, request.roomId)
      roomSockets.push(chat)
    } catch (error) {
      tally(errors, error)
      failed += 1
      chat.disconnect()
    }
  })
  return { joined: roomSockets.length, failed, errors, elapsedMs: monotonicMs() - started }
}

let broadcastRoom = ''

async function controlConnect(url: string, token: string | null, roomId: string): Promise<void> {
  broadcastRoom = roomId
  control = io(`${url}/chat`, {
    transports: ['websocket'],
    forceNew: true,
    reconnection: false,
    ...(token ? { auth: { token } } : {}),
  })
  await connected(control)
  await joinRoom(control, roomId)
}

async function broadcast(seq: number, textBytes: number): Promise<BroadcastReply> {
  if (!control) throw new Error('no control socket')
  const head = `b${seq}:`
  const text = head + 'x'.repeat(Math.max(1, textBytes - head.length))
  const sentAt = monotonicMs()
  const answer = (await control
    .timeout(30_000)
    .emitWithAck('chat:message', { roomId: broadcastRoom, text })) as Answer
  return { sentAt, ok: answer?.ok === true }
}

async function chatStart(request: ChatStartRequest): Promise<void> {
  const errors: Record<string, number> = {}
  const roundTripsMs: number[] = []
  let failed = 0
  let running = true
  const chatters = request.tokens.map((token) =>
    io(`${request.url}/chat`, {
      transports: ['websocket'],
      forceNew: true,
      reconnection: false,
      ...(token ? { auth: { token } } : {}),
    }),
  )
  await Promise.all(chatters.map(connected))
  for (const chatter of chatters) await joinRoom(chatter, request.roomId)
  const loops = chatters.map(async (chatter, index) => {
    // chatters start spread over the interval
    await sleep((request.intervalMs * index) / chatters.length)
    while (running) {
      const text = `bench ${randomUUID()}`
      const echo = new Promise<number>((resolve, reject) => {
        const timer = setTimeout(() => {
          chatter.off('chat:message', onMessage)
          reject(new Error('no echo within 10 s'))
        }, 10_000)
        const onMessage = (message: { text?: string }) => {
          if (message.text !== text) return
          clearTimeout(timer)
          chatter.off('chat:message', onMessage)
          resolve(monotonicMs())
        }
        chatter.on('chat:message', onMessage)
      })
      const sentAt = monotonicMs()
      chatter.emit('chat:message', { roomId: request.roomId, text })
      try {
        roundTripsMs.push((await echo) - sentAt)
      } catch (error) {
        failed += 1
        tally(errors, error)
      }
      await sleep(request.intervalMs)
    }
  })
  chat = {
    async stop() {
      running = false
      await Promise.all(loops)
      for (const chatter of chatters) chatter.disconnect()
      return { roundTripsMs, failed, errors }
    },
  }
}

/** The flooder (FloodStartRequest): every 10 ms it sends what the rate owes since it started. */
async function floodStart(request: FloodStartRequest): Promise<void> {
  const counts = { sent: 0, skipped: 0, accepted: 0, refused: 0, connections: 0 }
  const text = `f${'x'.repeat(Math.max(0, request.textBytes - 1))}`
  const message = { roomId: request.roomId, text }
  let running = true
  let socket: Socket | undefined
  const open = async (): Promise<void> => {
    counts.connections += 1
    const current = io(`${request.url}/chat`, {
      transports: ['websocket'],
      forceNew: true,
      reconnection: false,
      ...(request.token ? { auth: { token: request.token } } : {}),
    })
    socket = current
    current.on('error', (error: { code?: string }) => {
      if (error?.code === 'RATE_LIMITED') counts.refused += 1
    })
    current.on('chat:message', (received: { text?: string }) => {
      if (received.text === text) counts.accepted += 1
    })
    // closed by the server: an attacker comes straight back (and again, should a connection be refused)
    current.on('disconnect', reopen)
    await connected(current)
    await joinRoom(current, request.roomId).catch(() => {})
  }
  function reopen(): void {
    if (running) open().catch(() => setTimeout(reopen, 100))
  }
  await open()
  const startedAt = monotonicMs()
  let due = 0
  const timer = setInterval(() => {
    const owed = Math.floor(((monotonicMs() - startedAt) * request.ratePerSecond) / 1000)
    for (; due < owed; due++) {
      // socket.io-client would buffer an emit while disconnected: due then, not sent
      if (socket?.connected) {
        socket.emit('chat:message', message)
        counts.sent += 1
      } else counts.skipped += 1
    }
  }, 10)
  flood = {
    stop() {
      running = false
      clearInterval(timer)
      socket?.disconnect()
      return { ...counts, seconds: (monotonicMs() - startedAt) / 1000 }
    },
  }
}

async function handle(command: ClientCommand): Promise<unknown> {
  switch (command.type) {
    case 'connect':
      return connect(command)
    case 'join-room':
      return joinBroadcastRoom(command)
    case 'control-connect':
      return controlConnect(command.url, command.token, command.roomId)
    case 'broadcast':
      return broadcast(command.seq, command.textBytes)
    case 'chat-start':
      return chatStart(command)
    case 'chat-stop': {
      const stopped = (await chat?.stop()) ?? { roundTripsMs: [], failed: 0, errors: {} }
      chat = undefined
      return stopped
    }
    case 'flood-start':
      return floodStart(command)
    case 'flood-stop': {
      const stopped = flood?.stop()
      flood = undefined
      return stopped ?? { sent: 0, skipped: 0, accepted: 0, refused: 0, connections: 0, seconds: 0 }
    }
    case 'receipts':
      return { receipts: Object.fromEntries(receipts), payloadBytes } satisfies ReceiptsReply
    case 'disconnect': {
      await chat?.stop()
      control?.disconnect()
      for (const socket of roomSockets) socket.disconnect()
      for (const socket of held) socket.disconnect()
      roomSockets.length = 0
      held.length = 0
      return {}
    }
  }
}

answerParent<ClientCommand>(handle)
