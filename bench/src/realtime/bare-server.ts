// bench:realtime's bare baseline: a plain Socket.IO server (the gateway's own version, 4.8) on node:http — no
// authentication, no adapter, no connection-state recovery, no limits, no metrics — with the gateway's ping settings
// and the same events as far as the bench uses them: /chat's `chat:join` (into the room, no membership check, no
// history, no presence) and `chat:message` (the gateway's message fields, nothing stored, broadcast to the room, the
// sender included), /notifications to hold sockets on. Started over IPC by main.ts (serveOverIpc: ready, snapshots,
// stop).
import { randomUUID } from 'node:crypto'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { Server } from 'socket.io'
import { serveOverIpc } from '../servers/serve-over-ipc.ts'

const required = (name: string): number => {
  const value = Number(process.env[name])
  if (!Number.isInteger(value) || value <= 0)
    throw new Error(`${name} is not set; main.ts starts this process`)
  return value
}

function deflateOptions(mode: string | undefined) {
  if (mode === 'gateway')
    return { perMessageDeflate: { threshold: 1024 }, httpCompression: { threshold: 1024 } }
  if (mode === 'no-context-takeover')
    return {
      perMessageDeflate: { threshold: 1024, serverNoContextTakeover: true, clientNoContextTakeover: true },
      httpCompression: { threshold: 1024 },
    }
  return {}
}

type Ack = (answer: Record<string, unknown>) => void
const ackOf = (args: unknown[]): Ack | undefined =>
  typeof args.at(-1) === 'function' ? (args.at(-1) as Ack) : undefined

await serveOverIpc(async () => {
  const http = createServer()
  const io = new Server(http, {
    serveClient: false,
    pingInterval: required('BENCH_REALTIME_PING_INTERVAL_MS'),
    pingTimeout: required('BENCH_REALTIME_PING_TIMEOUT_MS'),
    // BENCH_REALTIME_BARE_DEFLATE: `gateway` gives bare the gateway's compression settings (permessage-deflate,
    // threshold 1 KB) to tell what they cost apart from the rest; `no-context-takeover` adds ws' no-context-takeover
    // on both sides, the negotiation under which ws applies the threshold (without it every frame is compressed)
    ...deflateOptions(process.env.BENCH_REALTIME_BARE_DEFLATE),
  })

  io.of('/chat').on('connection', (socket) => {
    // a user of its own per socket, named as the bench's tokens name theirs: the same message sizes as the gateway's
    const userId = randomUUID()
    const username = `bench user ${userId.slice(0, 8)}`
    socket.on('chat:join', async (...args: unknown[]) => {
      const { roomId } = (args[0] ?? {}) as { roomId?: string }
      if (typeof roomId === 'string') await socket.join(`chatroom:${roomId}`)
      ackOf(args)?.({ ok: true, history: [] })
    })
    socket.on('chat:message', (...args: unknown[]) => {
      const { roomId, text } = (args[0] ?? {}) as { roomId?: string; text?: string }
      const message = {
        id: randomUUID(),
        roomId,
        userId,
        username,
        text,
        createdAt: new Date().toISOString(),
      }
      io.of('/chat').to(`chatroom:${roomId}`).emit('chat:message', message)
      ackOf(args)?.({ ok: true, message })
    })
  })
  io.of('/notifications')

  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve))
  return {
    port: (http.address() as AddressInfo).port,
    close: async () => {
      io.disconnectSockets(true)
      await io.close()
    },
  }
})
