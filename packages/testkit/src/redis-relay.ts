// A TCP relay to the real Redis for one client under test: the engines are shared, so whatever goes wrong goes wrong
// in this relay, never in the server. Down: it cuts its connections and refuses new ones at once (an outage). Late:
// on a connection that has sent a command `lateFrom` matches, Redis's answers (and its end) reach the client `lateMs`
// later, in order (a slow connection beside a fast one).
import { createServer, type Socket, connect as tcpConnect } from 'node:net'
import { infraEndpoints } from './endpoints.ts'

export interface RedisRelayOptions {
  /** answers on the matching connections are handed on this much later, ms */
  lateMs?: number
  /** which connections are late, from the first chunk of commands it matches on (default: none) */
  lateFrom?: (commands: string) => boolean
}

export interface RedisRelay {
  /** redis://127.0.0.1:<relay port>, with the target's database and credentials: give it to the client under test */
  url: string
  /** cuts every open connection and refuses new ones until end() */
  begin(): void
  end(): void
  close(): Promise<void>
}

export async function startRedisRelay(options: RedisRelayOptions = {}): Promise<RedisRelay> {
  const { lateMs = 0, lateFrom } = options
  const target = new URL(infraEndpoints().redisUrl)
  const open = new Set<Socket>()
  let down = false

  const server = createServer((client) => {
    if (down) {
      client.destroy()
      return
    }
    const upstream = tcpConnect(Number(target.port || 6379), target.hostname)
    let late = false
    /** hands on what Redis sent (its answers, then its end), `lateMs` later once the connection is a late one */
    const inTurn = (hand: () => void) => (late ? setTimeout(hand, lateMs) : hand())
    for (const socket of [client, upstream]) {
      open.add(socket)
      socket.on('error', () => {})
      socket.on('close', () => open.delete(socket))
    }
    client.on('close', () => upstream.destroy())
    upstream.on('close', () => inTurn(() => client.destroy()))
    client.on('data', (chunk: Buffer) => {
      if (!late && lateFrom?.(chunk.toString('latin1'))) late = true
      upstream.write(chunk)
    })
    upstream.on('data', (chunk: Buffer) => {
      inTurn(() => {
        if (!client.destroyed) client.write(chunk)
      })
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const address = server.address()
  if (!address || typeof address === 'string') throw new Error('the relay has no port')

  const url = new URL(target)
  url.hostname = '127.0.0.1'
  url.port = String(address.port)
  return {
    url: url.toString(),
    begin() {
      down = true
      for (const socket of open) socket.destroy()
    },
    end() {
      down = false
    },
    async close() {
      for (const socket of open) socket.destroy()
      await new Promise<void>((resolve) => server.close(() => resolve()))
    },
  }
}
