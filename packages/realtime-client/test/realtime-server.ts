// A real Socket.IO server on an ephemeral loopback port, one per test, for the client to talk to.
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { Server, type ServerOptions, type Socket as ServerSocket } from 'socket.io'
import { inject } from 'vitest'
import {
  type ConnectionEventName,
  type ConnectionEvents,
  createRealtimeClient,
  type RealtimeClient,
  type RealtimeClientOptions,
} from '../src/index.ts'

export interface RealtimeServer {
  io: Server
  url: string
  close(): Promise<void>
}

export async function startRealtimeServer(options: Partial<ServerOptions> = {}): Promise<RealtimeServer> {
  const http = createServer()
  const io = new Server(http, options)
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve))
  const { port } = http.address() as AddressInfo
  return {
    io,
    url: `http://127.0.0.1:${port}`,
    close: () => new Promise<void>((resolve) => io.close(() => resolve())),
  }
}

/** Reconnection fast enough for tests: same shape as the spec's policies, shorter delays. */
export const fastReconnection = { attempts: 3, initialDelayMs: 20, maxDelayMs: 50, randomizationFactor: 0.5 }

export function clientOf(
  server: RealtimeServer,
  options: Partial<RealtimeClientOptions> = {},
): RealtimeClient {
  return createRealtimeClient({ url: server.url, reconnection: fastReconnection, ...options })
}

declare module 'vitest' {
  export interface ProvidedContext {
    /** MERIDIAN_TEST_TIME_SCALE as vitest.config.ts read it (infra's testTimeScale) */
    timeScale: number
  }
}

/** `ms` times the tests' time scale: a deadline this package's tests give by hand. */
export const scaledMs = (ms: number): number => Math.ceil(ms * inject('timeScale'))

/** How long a test waits for what the other side does before it calls it missing. */
export const waitMs = scaledMs(30_000)

/** Resolves with the arguments of the client's next `name` event. */
export function nextEvent<Name extends ConnectionEventName>(
  client: RealtimeClient,
  name: Name,
  timeoutMs = waitMs,
): Promise<Parameters<ConnectionEvents[Name]>> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      stop()
      reject(new Error(`no ${name} within ${timeoutMs} ms`))
    }, timeoutMs)
    const stop = client.on(name, ((...args: Parameters<ConnectionEvents[Name]>) => {
      stop()
      clearTimeout(timer)
      resolve(args)
    }) as ConnectionEvents[Name])
  })
}

/** Resolves with the server's next connection on `namespace`. */
export function nextConnection(server: RealtimeServer, namespace = '/'): Promise<ServerSocket> {
  return new Promise((resolve) => server.io.of(namespace).once('connection', resolve))
}
