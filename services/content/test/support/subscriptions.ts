// Speaking to a content app's subscriptions over WebSocket: its ws:// address, a raw connection of either subprotocol
// that keeps every message it receives, an upgrade the server refuses, the graphql-ws client's subscriptions
// collected, and the wait until an app's subscribers are listening on Redis (a subscription has no acknowledgement:
// a post created before the server listens would never reach it).
import type { AddressInfo } from 'node:net'
import { eventually } from '@meridian/testkit'
import type { FastifyInstance } from 'fastify'
import type { Client } from 'graphql-ws'
import type { Redis } from 'ioredis'
import WebSocket from 'ws'

/** graphql-transport-ws (the graphql-ws library) and the legacy graphql-ws (subscriptions-transport-ws). */
export const transportProtocol = 'graphql-transport-ws'
export const legacyProtocol = 'graphql-ws'

/** The subscriptions' address of an app listening on 127.0.0.1. */
export function subscriptionUrl(app: Pick<FastifyInstance, 'server'>): string {
  const { port } = app.server.address() as AddressInfo
  return `ws://127.0.0.1:${port}/graphql`
}

export interface WsMessage {
  type: string
  id?: string
  payload?: unknown
}

export interface ConnectionClosed {
  code: number
  reason: string
}

/** What a socket test waits for usually comes within milliseconds: polled every 20 ms, for the tests' scaled wait. */
export const soon = (what: string, check: () => boolean | Promise<boolean>, timeoutMs?: number) =>
  eventually(what, check, timeoutMs, 20)

export interface RawConnection {
  socket: WebSocket
  /** every message received, parsed, in order */
  messages: WsMessage[]
  send(message: WsMessage | unknown): void
  /** the first message (received already or to come) that matches, or a failure after `timeoutMs` */
  next(match: (message: WsMessage) => boolean, description: string, timeoutMs?: number): Promise<WsMessage>
  /** settles when the socket closes, with the close frame's code and reason */
  closed: Promise<ConnectionClosed>
  close(): void
}

export interface UpgradeOptions {
  protocol?: string
  headers?: Record<string, string>
}

/** Opens a WebSocket on `url` with a subprotocol (and headers) of the test's choosing, recording what arrives. */
export function openConnection(
  url: string,
  { protocol = legacyProtocol, headers = {} }: UpgradeOptions = {},
): Promise<RawConnection> {
  const socket = new WebSocket(url, protocol, { headers })
  const messages: WsMessage[] = []
  socket.on('message', (data) => messages.push(JSON.parse(String(data)) as WsMessage))
  const closed = new Promise<ConnectionClosed>((resolve) =>
    socket.once('close', (code, reason) => resolve({ code, reason: String(reason) })),
  )
  const connection: RawConnection = {
    socket,
    messages,
    closed,
    send: (message) => socket.send(JSON.stringify(message)),
    next: (match, description, timeoutMs) =>
      soon(description, () => messages.some(match), timeoutMs).then(() => messages.find(match)!),
    close: () => {
      if (socket.readyState !== WebSocket.CLOSED) socket.terminate()
    },
  }
  return new Promise((resolve, reject) => {
    socket.once('open', () => resolve(connection))
    socket.once('unexpected-response', (_request, response) =>
      reject(new Error(`upgrade refused with ${response.statusCode}`)),
    )
    socket.once('error', reject)
  })
}

export interface RefusedUpgrade {
  status: number
  body: string
  /** whether the socket ever opened (it must not) */
  opened: boolean
}

/** An upgrade the server is expected to refuse: its HTTP answer (101 and `opened` when it was accepted). */
export function refusedUpgrade(
  url: string,
  { protocol = transportProtocol, headers = {} }: UpgradeOptions = {},
) {
  const socket = new WebSocket(url, protocol, { headers })
  let opened = false
  return new Promise<RefusedUpgrade>((resolve, reject) => {
    // an accepted upgrade is answered too (101), so that the test's assertion shows what happened
    socket.once('open', () => {
      opened = true
      socket.terminate()
      resolve({ status: 101, body: '', opened })
    })
    // an error after the answer (the request destroyed) settles nothing more
    socket.on('error', (error) => reject(error))
    socket.once('unexpected-response', (request, response) => {
      let body = ''
      response.setEncoding('utf8')
      response.on('data', (chunk: string) => {
        body += chunk
      })
      response.once('end', () => {
        request.destroy()
        resolve({ status: response.statusCode ?? 0, body, opened })
      })
    })
  })
}

/** What one graphql-ws subscription has received so far. */
export interface CollectedSubscription<Data> {
  values: Data[]
  errors: unknown[]
  completed: boolean
  /** unsubscribes (the client sends complete) */
  stop(): void
}

/** Subscribes with a graphql-ws client, collecting what the sink receives. */
export function collect<Data = Record<string, unknown>>(
  client: Client,
  query: string,
): CollectedSubscription<Data> {
  const collected: CollectedSubscription<Data> = {
    values: [],
    errors: [],
    completed: false,
    stop: () => undefined,
  }
  collected.stop = client.subscribe<Data>(
    { query },
    {
      next: (value) => collected.values.push(value.data as Data),
      error: (error) => collected.errors.push(error),
      complete: () => {
        collected.completed = true
      },
    },
  )
  return collected
}

/** An app that is expected to have `listeners` postCreated subscriptions of its own. */
export interface ListeningApp {
  app: Pick<FastifyInstance, 'graphql'>
  listeners: number
}

/** The postCreated subscriptions an app holds on `topic` (mqemitter-redis counts them per topic). */
export function localListeners(app: Pick<FastifyInstance, 'graphql'>, topic: string): number {
  const { emitter } = app.graphql.pubsub as unknown as { emitter: { _topics: Record<string, number> } }
  return emitter._topics[topic] ?? 0
}

/**
 * Waits until each app holds its postCreated subscriptions and Redis has every one of these apps' subscribing
 * connections on `topic` (each instance subscribes once per topic, with a connection of its own), so that a post
 * published from now on reaches all of them.
 */
export async function untilListening(redis: Redis, topic: string, apps: ListeningApp[]): Promise<void> {
  const instances = apps.filter(({ listeners }) => listeners > 0).length
  await soon(
    `${apps.map(({ listeners }) => listeners).join('+')} postCreated listeners on ${topic}`,
    async () => {
      if (apps.some(({ app, listeners }) => localListeners(app, topic) < listeners)) return false
      const [, subscribed] = (await redis.pubsub('NUMSUB', topic)) as [string, number]
      return Number(subscribed) >= instances
    },
  )
}
