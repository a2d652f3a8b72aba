// A Redis outage for one client only: a TCP relay to the real Redis that, while down, cuts its connections and
// drops new ones at once. The engines are shared, so the outage is this relay's, never the server's.
import { createServer, type Socket, connect as tcpConnect } from 'node:net'
import { infraEndpoints } from '@meridian/testkit'

export interface RedisOutage {
  /** redis://127.0.0.1:<relay port>: give it to the client that should suffer the outage */
  url: string
  /** cuts every open connection and refuses new ones until end() */
  begin(): void
  end(): void
  close(): Promise<void>
}

export async function startRedisRelay(): Promise<RedisOutage> {
  const target = new URL(infraEndpoints().redisUrl)
  const open = new Set<Socket>()
  let down = false

  const server = createServer((client) => {
    if (down) {
      client.destroy()
      return
    }
    const upstream = tcpConnect(Number(target.port || 6379), target.hostname)
    const pair = [client, upstream]
    for (const socket of pair) {
      open.add(socket)
      socket.on('error', () => {})
      socket.on('close', () => {
        open.delete(socket)
        for (const other of pair) other.destroy()
      })
    }
    client.pipe(upstream).pipe(client)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const address = server.address()
  if (!address || typeof address === 'string') throw new Error('the relay has no port')

  // the target's database and credentials, if any, on the relay's address
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
