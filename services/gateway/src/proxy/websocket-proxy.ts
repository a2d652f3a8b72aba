// WebSocket pass-through on the routes that accept it (route-table.ts, `websocket`): the upgrade is routed like any
// request (request id, edge rate limit, CORS, route table), then the gateway asks an instance with the same request
// head (forwarded headers), reads its answer's head whole (upgrade-exchange.ts) and pipes the two sockets only after a
// `101 Switching Protocols`. Any other answer is relayed with `Connection: close` and both connections end: nothing
// the client sends after its upgrade request reaches a service that did not switch protocols. No frame is parsed.
//
// Every other Upgrade request is no upgrade at all for Node (acceptsWebSocketUpgrade, Node's shouldUpgradeCallback):
// it is served as plain HTTP, on its keep-alive connection, its Upgrade and Connection headers not forwarded.
import { type IncomingMessage, ServerResponse } from 'node:http'
import { connect, type Socket } from 'node:net'
import type { Duplex } from 'node:stream'
import { AppError } from '@meridian/contracts'
import type { ServiceInstance } from '@meridian/service-kit'
import type { FastifyBaseLogger, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type { UpstreamService } from '../upstreams/upstream-services.ts'
import {
  clientResponseHeaders,
  connectionListed,
  type ForwardingContext,
  type ResponseHeaders,
  upstreamRequestHeaders,
} from './forwarded-headers.ts'
import { ClientGoneError } from './response-relay.ts'
import type { RouteMatcher } from './route-table.ts'
import { exchangeUpgrade, type UpgradeAnswer, UpgradeAnswerTimeout } from './upgrade-exchange.ts'
import { badGateway, gatewayTimeout, recordUpstreamAnswer, upstreamUnavailable } from './upstream-failure.ts'

interface PendingUpgrade {
  socket: Socket
  /** what the client sent after its request head: held until the instance switches protocols, dropped otherwise */
  head: Buffer
  response: ServerResponse
}

const pendingUpgrades = new WeakMap<IncomingMessage, PendingUpgrade>()

/** Whether the request came as an upgrade (its socket is out of the HTTP server's hands). */
export const isUpgrade = (raw: IncomingMessage): boolean => pendingUpgrades.has(raw)

/** Whether a body is declared (RFC 9112 §6.3): a WebSocket handshake has none. */
const declaresBody = (request: IncomingMessage) =>
  request.headers['transfer-encoding'] !== undefined ||
  (request.headers['content-length'] !== undefined && request.headers['content-length'] !== '0')

/** A WebSocket opening handshake (RFC 6455 §4.1): GET, `Upgrade: websocket`, no body. */
export function isWebSocketHandshake(request: IncomingMessage): boolean {
  return (
    request.method === 'GET' &&
    connectionListed(request.headers.upgrade).includes('websocket') &&
    !declaresBody(request)
  )
}

/**
 * Node's shouldUpgradeCallback for the gateway's server: only a WebSocket handshake on a WebSocket route is an upgrade.
 * Any other request with `Upgrade` (an h2c attempt, a WebSocket on a REST path) is an ordinary request, which the
 * server parses and routes like every other, keep-alive included.
 */
export function acceptsWebSocketUpgrade(routes: RouteMatcher): (request: IncomingMessage) => boolean {
  return (request) => {
    if (!isWebSocketHandshake(request)) return false
    const url = request.url ?? '/'
    const queryAt = url.indexOf('?')
    return routes.match(queryAt === -1 ? url : url.slice(0, queryAt))?.websocket === true
  }
}

/**
 * An upgrade the gateway does not take. Only a Node without shouldUpgradeCallback (before 22.21 and 24.9) hands such a
 * request to the `upgrade` listener; its socket has left the HTTP parser, so it cannot be served as plain HTTP then.
 */
export const upgradeNotAccepted = () =>
  AppError.badRequest('Only a WebSocket handshake (GET) on a WebSocket route may ask for an upgrade')

/**
 * Sends every upgrade request of the server through Fastify's router, with a response bound to the raw socket: a
 * refusal (404, 429, 503...) or a relayed answer is an HTTP answer on it with `Connection: close`, after which the
 * socket is closed — never read again for a next request.
 */
export function routeUpgrades(app: FastifyInstance): void {
  app.server.on('upgrade', (raw: IncomingMessage, duplex: Duplex, head: Buffer) => {
    const socket = duplex as Socket
    socket.on('error', () => socket.destroy())
    const response = new ServerResponse(raw)
    response.shouldKeepAlive = false
    response.assignSocket(socket)
    // (the server's sockets are half-open: end() alone would leave one the client keeps open)
    response.on('finish', () => socket.destroySoon())
    pendingUpgrades.set(raw, { socket, head, response })
    app.routing(raw, response)
  })
}

export interface WebSocketPassThroughOptions {
  connectTimeoutMs: number
  /** how long the instance may take to answer the upgrade (its whole head), and then between body chunks, ms */
  timeoutMs: number
  maxAttempts: number
  forwarding(request: FastifyRequest): ForwardingContext
}

export interface WebSocketPassThrough {
  passThrough(
    request: FastifyRequest,
    reply: FastifyReply,
    service: UpstreamService,
    url: string,
  ): Promise<FastifyReply>
}

interface Connected {
  upstream: Socket
  instance: ServiceInstance
}

function connectTo(instance: ServiceInstance, timeoutMs: number): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: instance.address, port: instance.port })
    const timer = setTimeout(() => {
      socket.destroy()
      reject(Object.assign(new Error('connect timeout'), { code: 'UND_ERR_CONNECT_TIMEOUT' }))
    }, timeoutMs)
    socket.once('connect', () => {
      clearTimeout(timer)
      socket.removeAllListeners('error')
      resolve(socket)
    })
    socket.once('error', (error) => {
      clearTimeout(timer)
      reject(error)
    })
  })
}

/** A connection to an instance; one that fails is tried on another (nothing has been sent yet). 503 when none. */
async function connectToInstance(
  service: UpstreamService,
  probe: boolean,
  options: WebSocketPassThroughOptions,
  log: FastifyBaseLogger,
): Promise<Connected> {
  const tried = new Set<string>()
  while (tried.size < options.maxAttempts) {
    const picked = service.pick(tried)
    if (!picked.instance) break
    const instance = picked.instance
    tried.add(instance.id)
    try {
      return { upstream: await connectTo(instance, options.connectTimeoutMs), instance }
    } catch (error) {
      const code = (error as { code?: string }).code ?? 'UNKNOWN'
      service.attemptFailed(instance, code)
      log.warn({ upstream: service.name, instance: instance.id, code }, 'upstream attempt failed')
    }
  }
  if (tried.size > 0) service.requestFailed()
  else service.requestAbandoned(probe)
  throw upstreamUnavailable(service.retryAfterSeconds())
}

/** The 101 head for the client: the instance's headers (its WebSocket ones) with the edge's, hop-by-hop ones dropped. */
function switchingProtocolsHead(response: IncomingMessage, edge: ResponseHeaders): string {
  const lines = [
    'HTTP/1.1 101 Switching Protocols',
    'connection: Upgrade',
    `upgrade: ${response.headers.upgrade}`,
  ]
  for (const [name, value] of Object.entries(clientResponseHeaders(response.headers, edge))) {
    if (value === undefined) continue
    for (const item of Array.isArray(value) ? value : [value]) lines.push(`${name}: ${item}`)
  }
  return `${lines.join('\r\n')}\r\n\r\n`
}

export function createWebSocketPassThrough(options: WebSocketPassThroughOptions): WebSocketPassThrough {
  /** An exchange that ended without an answer to relay: the client's error answer (thrown), or nothing if it left. */
  function failed(
    request: FastifyRequest,
    reply: FastifyReply,
    service: UpstreamService,
    connected: Connected,
    probe: boolean,
    error: unknown,
  ): FastifyReply {
    const log = { upstream: service.name, instance: connected.instance.id }
    if (error instanceof ClientGoneError) {
      service.requestAbandoned(probe)
      request.log.info(log, 'client went away during the upgrade')
      reply.hijack()
      pendingUpgrades.get(request.raw)?.socket.destroy()
      return reply
    }
    const code = (error as { code?: string }).code ?? 'UNKNOWN'
    service.attemptFailed(connected.instance, code)
    service.requestFailed()
    request.log.warn({ ...log, code }, 'upstream attempt failed')
    throw error instanceof UpgradeAnswerTimeout ? gatewayTimeout(options.timeoutMs) : badGateway()
  }

  /** Not switched: the answer goes to the client as it is, then both connections end. */
  function relayAnswer(reply: FastifyReply, response: IncomingMessage, upstream: Socket): FastifyReply {
    // a body that stalls is cut like a proxied one's; whatever ends the client's answer ends the instance's connection
    upstream.setTimeout(options.timeoutMs, () => upstream.destroy())
    response.once('end', () => upstream.destroy())
    reply.raw.once('close', () => upstream.destroy())
    reply
      .code(response.statusCode ?? 502)
      .headers(clientResponseHeaders(response.headers))
      .header('connection', 'close')
    return reply.send(response)
  }

  /** Switched: the 101 goes to the client, then the bytes held on either side; the sockets are piped until one ends. */
  function pipe(
    request: FastifyRequest,
    reply: FastifyReply,
    pending: PendingUpgrade,
    answer: UpgradeAnswer & { switched: true },
    log: Record<string, unknown>,
  ): FastifyReply {
    const edge = reply.getHeaders() as ResponseHeaders
    reply.hijack()
    pending.response.detachSocket(pending.socket)
    const client = pending.socket
    const upstream = answer.socket
    client.write(switchingProtocolsHead(answer.response, edge))
    if (answer.head.length > 0) client.write(answer.head)
    if (pending.head.length > 0) upstream.write(pending.head)
    upstream.pipe(client)
    client.pipe(upstream)
    request.log.info(log, 'upgrade passed through')

    const startedAt = Date.now()
    let closed = false
    const closeBoth = () => {
      if (closed) return
      closed = true
      client.destroy()
      upstream.destroy()
      request.log.info({ ...log, durationMs: Date.now() - startedAt }, 'upgraded connection closed')
    }
    for (const socket of [client, upstream]) {
      socket.on('close', closeBoth)
      socket.on('error', closeBoth)
    }
    // either may have closed before the listeners were there
    if (client.destroyed || upstream.destroyed) closeBoth()
    return reply
  }

  return {
    async passThrough(request, reply, service, url) {
      const pending = pendingUpgrades.get(request.raw)
      if (!pending) throw new Error('not an upgrade request')
      const admission = service.admit()
      if (!admission.admitted) throw upstreamUnavailable(Math.ceil(admission.retryAfterMs / 1000))
      const connected = await connectToInstance(service, admission.probe, options, request.log)
      const { upstream, instance } = connected
      upstream.on('error', () => upstream.destroy())

      const headers = upstreamRequestHeaders(request.headers, {
        ...options.forwarding(request),
        upgrade: 'websocket',
      })
      const host = instance.address.includes(':') ? `[${instance.address}]` : instance.address
      headers.host = `${host}:${instance.port}`
      const exchange = exchangeUpgrade(upstream, {
        method: 'GET',
        path: url,
        headers,
        timeoutMs: options.timeoutMs,
      })
      const clientGone = () => exchange.abort(new ClientGoneError())
      pending.socket.once('close', clientGone)
      let answer: UpgradeAnswer
      try {
        answer = await exchange.answer
      } catch (error) {
        upstream.destroy()
        return failed(request, reply, service, connected, admission.probe, error)
      } finally {
        pending.socket.off('close', clientGone)
      }
      recordUpstreamAnswer(service, instance, answer.response.statusCode ?? 0, answer.response.headers)
      const log = { upstream: service.name, instance: instance.id, status: answer.response.statusCode }
      if (pending.socket.destroyed) {
        // the client left as the answer came: nothing to relay or pipe
        upstream.destroy()
        reply.hijack()
        return reply
      }
      if (answer.switched) return pipe(request, reply, pending, answer, log)
      request.log.info(log, 'upgrade answered without switching protocols; relayed, connection closed')
      return relayAnswer(reply, answer.response, upstream)
    },
  }
}
