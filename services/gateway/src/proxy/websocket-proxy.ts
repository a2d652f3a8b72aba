// WebSocket (and any HTTP/1.1 upgrade) passed through byte for byte: the upgrade is routed like any request (request
// id, rate limit, route table), then the gateway connects to an instance, replays the request head with forwarded
// headers and pipes both sockets. No frame is parsed here.
import { type IncomingMessage, ServerResponse } from 'node:http'
import { connect, type Socket } from 'node:net'
import type { Duplex } from 'node:stream'
import type { ServiceInstance } from '@meridian/service-kit'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type { UpstreamService } from '../upstreams/upstream-services.ts'
import type { ForwardingContext } from './forwarded-headers.ts'
import { upstreamRequestHeaders } from './forwarded-headers.ts'
import { failureStatuses, gatewayTimeout, upstreamUnavailable } from './upstream-failure.ts'

interface PendingUpgrade {
  socket: Duplex
  head: Buffer
  response: ServerResponse
}

const pendingUpgrades = new WeakMap<IncomingMessage, PendingUpgrade>()

export const isUpgrade = (raw: IncomingMessage): boolean => pendingUpgrades.has(raw)

/**
 * Sends every upgrade request of the server through Fastify's router, with a response bound to the raw socket: a
 * refusal (404, 429, 503...) is an ordinary HTTP answer on it, after which the socket is closed.
 */
export function routeUpgrades(app: FastifyInstance): void {
  app.server.on('upgrade', (raw: IncomingMessage, socket: Duplex, head: Buffer) => {
    socket.on('error', () => socket.destroy())
    const response = new ServerResponse(raw)
    response.assignSocket(socket as Socket)
    response.on('finish', () => socket.end())
    pendingUpgrades.set(raw, { socket, head, response })
    app.routing(raw, response)
  })
}

export interface WebSocketPassThroughOptions {
  connectTimeoutMs: number
  /** how long the instance may take to answer the upgrade, ms */
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

/** The first chunk the instance sends (its status line among it), or undefined after `timeoutMs`. */
function firstChunk(socket: Socket, timeoutMs: number): Promise<Buffer | undefined> {
  return new Promise((resolve) => {
    const done = (chunk: Buffer | undefined) => {
      clearTimeout(timer)
      socket.off('data', onData)
      socket.off('close', onClose)
      socket.pause()
      resolve(chunk)
    }
    const onData = (chunk: Buffer) => done(chunk)
    const onClose = () => done(undefined)
    const timer = setTimeout(() => done(undefined), timeoutMs)
    socket.on('data', onData)
    socket.once('close', onClose)
  })
}

function requestHead(method: string, url: string, headers: Record<string, string | string[]>): string {
  const lines = [`${method} ${url} HTTP/1.1`]
  for (const [name, value] of Object.entries(headers)) {
    for (const item of Array.isArray(value) ? value : [value]) lines.push(`${name}: ${item}`)
  }
  return `${lines.join('\r\n')}\r\n\r\n`
}

export function createWebSocketPassThrough(options: WebSocketPassThroughOptions): WebSocketPassThrough {
  return {
    async passThrough(request, reply, service, url) {
      const pending = pendingUpgrades.get(request.raw)
      if (!pending) throw new Error('not an upgrade request')
      const admission = service.admit()
      if (!admission.admitted) throw upstreamUnavailable(Math.ceil(admission.retryAfterMs / 1000))

      const tried = new Set<string>()
      let upstream: Socket | undefined
      let instance: ServiceInstance | undefined
      // a connection that fails is retried on another instance: nothing has been sent yet
      while (upstream === undefined && tried.size < options.maxAttempts) {
        const picked = service.pick(tried)
        if (!picked.instance) break
        instance = picked.instance
        tried.add(instance.id)
        try {
          upstream = await connectTo(instance, options.connectTimeoutMs)
        } catch (error) {
          const code = (error as { code?: string }).code ?? 'UNKNOWN'
          service.attemptFailed(instance, code)
          request.log.warn({ upstream: service.name, instance: instance.id, code }, 'upstream attempt failed')
        }
      }
      if (upstream === undefined || instance === undefined) {
        if (tried.size > 0) service.requestFailed()
        else service.requestAbandoned(admission.probe)
        throw upstreamUnavailable(service.retryAfterSeconds())
      }

      const headers = upstreamRequestHeaders(request.headers, {
        ...options.forwarding(request),
        upgrade: String(request.headers.upgrade ?? 'websocket'),
      })
      headers.host = `${instance.address}:${instance.port}`
      upstream.on('error', () => upstream.destroy())
      upstream.write(requestHead(request.method, url, headers))
      if (pending.head.length > 0) upstream.write(pending.head)

      const answer = await firstChunk(upstream, options.timeoutMs)
      if (answer === undefined) {
        upstream.destroy()
        service.attemptFailed(instance, 'timeout')
        service.requestFailed()
        throw gatewayTimeout(options.timeoutMs)
      }
      const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(answer.toString('latin1', 0, 16))?.[1] ?? 0)
      if (status === 0 || failureStatuses.has(status)) {
        service.attemptFailed(instance, `status ${status}`)
        service.requestFailed()
      } else {
        service.attemptSucceeded(instance)
        service.requestSucceeded()
      }

      // from here on the sockets belong to the pass-through
      reply.hijack()
      pending.response.detachSocket(pending.socket as Socket)
      const client = pending.socket
      client.write(answer)
      upstream.pipe(client)
      client.pipe(upstream)
      upstream.resume()
      const startedAt = Date.now()
      const log = { upstream: service.name, instance: instance.id, status }
      request.log.info(log, 'upgrade passed through')
      let closed = false
      const closeBoth = () => {
        if (closed) return
        closed = true
        client.destroy()
        upstream.destroy()
        request.log.info({ ...log, durationMs: Date.now() - startedAt }, 'upgraded connection closed')
      }
      client.on('close', closeBoth)
      client.on('error', closeBoth)
      upstream.on('close', closeBoth)
      upstream.on('error', closeBoth)
      return reply
    },
  }
}
