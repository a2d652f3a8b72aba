// A small real service for the gateway's tests, run as its own process: the chassis, a few routes under
// /api/v1/<segment>, a WebSocket echo at /ws, registered in Consul under the name the test gives it.
import { AppError, ErrorCode, loadShedHeader, Text } from '@meridian/contracts'
import { createDiscoveredUpstream, createServiceApp, registerService } from '@meridian/service-kit'
import { Type } from 'typebox'
import { WebSocketServer } from 'ws'

const env = process.env
const name = env.UPSTREAM_NAME ?? 'test-upstream'
const label = env.UPSTREAM_LABEL ?? 'a'
const segment = env.UPSTREAM_SEGMENT ?? 'test'
const weight = Number(env.UPSTREAM_WEIGHT ?? 1)

const app = await createServiceApp({
  name,
  version: '0.0.1',
  environment: 'test',
  logLevel: 'info',
  rateLimit: false,
})
const consul = {
  address: env.CONSUL_HTTP_ADDR ?? '127.0.0.1:8500',
  ...(env.CONSUL_HTTP_TOKEN ? { token: env.CONSUL_HTTP_TOKEN } : {}),
}
// a dependency Consul lists no instance of (its name is this run's own)
const missingDependency = createDiscoveredUpstream({
  consul,
  name: 'ledger',
  serviceName: `${name}-ledger-absent`,
  logger: app.log,
  discoveryWaitMs: 500,
  serviceCredential: 'test-upstream-credential',
})
const hits: Record<string, number> = {}
app.addHook('onRequest', (request, _reply, done) => {
  const key = `${request.method} ${request.url.split('?')[0]}`
  hits[key] = (hits[key] ?? 0) + 1
  done()
})

await app.register(
  async (api) => {
    api.get('/whoami', async (request) => ({
      instance: label,
      requestId: request.id,
      headers: request.headers,
    }))
    api.post('/echo', async (request) => ({ instance: label, requestId: request.id, body: request.body }))
    api.put('/echo', async (request) => ({ instance: label, body: request.body }))
    // a text field as the services declare them (contracts' Text: no NUL)
    api.post(
      '/notes',
      { schema: { body: Type.Object({ title: Text({ minLength: 1 }) }, { additionalProperties: false }) } },
      async (request) => ({ instance: label, body: request.body }),
    )
    api.get('/hang', () => new Promise(() => {}))
    // a body of `bytes` bytes (a repeated pattern, so the test can check it), sent in 64 KiB chunks
    api.get('/bytes/:count', (request, reply) => {
      const count = Number((request.params as { count: string }).count)
      const chunk = Buffer.alloc(64 * 1024, 'meridian/')
      reply.hijack()
      reply.raw.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': count })
      let left = count
      const more = () => {
        while (left > 0) {
          const piece = chunk.subarray(0, Math.min(left, chunk.length))
          left -= piece.length
          if (!reply.raw.write(piece)) return void reply.raw.once('drain', more)
        }
        reply.raw.end()
      }
      more()
    })
    // three pieces 20 ms apart, no content-length: chunked transfer coding
    api.get('/chunked', (_request, reply) => {
      reply.hijack()
      reply.raw.writeHead(200, { 'content-type': 'text/plain' })
      const pieces = ['one ', 'two ', 'three']
      const next = () => {
        const piece = pieces.shift()
        if (piece === undefined) return void reply.raw.end()
        reply.raw.write(piece)
        setTimeout(next, 20)
      }
      next()
    })
    // announces 1 MB, sends 64 KiB and drops the connection
    api.get('/broken', (_request, reply) => {
      reply.hijack()
      reply.raw.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': 1024 * 1024 })
      reply.raw.write(Buffer.alloc(64 * 1024, 'x'), () => reply.raw.destroy())
    })
    // a call to a service that has no instance, through the kit's own client: its 503 names that dependency
    api.get('/dependency-down', async () => {
      await missingDependency.upstream.request({ method: 'GET', path: '/anything' })
      return { instance: label }
    })
    // a refusal on purpose, as the order service's admission sheds new orders: a 503 marked as shed
    api.get('/shedding', async () => {
      throw new AppError(503, ErrorCode.SERVICE_UNAVAILABLE, {
        message: 'Orders are arriving faster than they can be fulfilled: try again shortly',
        retryAfter: 1,
        headers: { [loadShedHeader]: 'orders' },
      })
    })
    api.get('/status/:code', async (request, reply) =>
      reply.code(Number((request.params as { code: string }).code)).send({ instance: label }),
    )
    api.get('/items/:id', async (request) => ({
      id: (request.params as { id: string }).id,
      url: request.url,
    }))
  },
  { prefix: `/api/v1/${segment}` },
)
// an audit trail's page as a service answers it (service-kit's audit routes), from UPSTREAM_AUDIT's entries: newest
// first, older than `before`, `limit` of them; 401 without a credential, which the gateway passes on as it came
const auditEntries = JSON.parse(env.UPSTREAM_AUDIT ?? '[]') as { at: string }[]
app.get('/api/v1/admin/audit/:service', async (request, reply) => {
  if (request.headers.authorization === undefined)
    return reply.code(401).send({ error: { code: 'UNAUTHORIZED' } })
  const { limit = '50', before } = request.query as { limit?: string; before?: string }
  const data = auditEntries
    .filter((entry) => before === undefined || entry.at < before)
    .sort((a, b) => (a.at < b.at ? 1 : -1))
    .slice(0, Number(limit))
  return { data, next: null }
})
// the hits of every route, read by the test directly (not through the gateway)
app.get('/hits', async () => hits)
// the maintenance switch, as Consul KV would set it (runtime settings), from the test over IPC
process.on('message', (message: { maintenance?: boolean }) => {
  if (message.maintenance === undefined) return
  app.runtime.apply({
    maintenance: message.maintenance ? { message: 'Planned maintenance', retryAfterSeconds: 30 } : undefined,
    logLevel: undefined,
  })
  process.send?.({ maintenanceApplied: message.maintenance })
})

const sockets = new WebSocketServer({ noServer: true })
sockets.on('connection', (socket, request) => {
  socket.send(JSON.stringify({ instance: label, requestId: request.headers['x-request-id'] ?? null }))
  socket.on('message', (data, binary) => socket.send(binary ? data : `echo:${String(data)}`))
})
app.server.on('upgrade', (request, socket, head) => {
  if (!request.url?.startsWith('/ws')) {
    socket.end('HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\n\r\n')
    return
  }
  sockets.handleUpgrade(request, socket, head, (client) => sockets.emit('connection', client, request))
})

await app.listen({ host: '127.0.0.1', port: 0 })
const address = app.server.address()
const port = typeof address === 'object' && address ? address.port : 0
const registration = await registerService({
  consul,
  name,
  address: '127.0.0.1',
  port,
  meta: { version: '0.0.1', region: 'test', az: 'test-a', weight },
  readiness: async () => true,
  logger: app.log,
  timing: {
    ttl: '2s',
    heartbeatIntervalMs: 500,
    httpCheckInterval: '1s',
    httpCheckTimeout: '1s',
    failuresBeforeCritical: 1,
    deregisterCriticalServiceAfter: '1m',
  },
})
process.send?.({ ready: true, port, id: registration.id })

process.once('SIGTERM', () => {
  // requests left hanging (the timeout tests) would hold the close forever
  setTimeout(() => process.exit(0), 1000).unref()
  void (async () => {
    await registration.deregister().catch(() => {})
    await app.close()
    process.exit(0)
  })()
})
