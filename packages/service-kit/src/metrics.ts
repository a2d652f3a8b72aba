// /metrics: the spec's JSON counters, and Prometheus text for scrapers; other packages add their own metrics.
import type { FastifyInstance } from 'fastify'
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client'
import { type Static, Type } from 'typebox'

export interface ServiceMetrics {
  /** this instance's registry (never prom-client's global one): packages register counters and gauges on it */
  registry: Registry
  totalConnections: Counter
  activeConnections: Gauge
  messagesReceived: Counter
  messagesSent: Counter
  requestDuration: Histogram<'method' | 'route' | 'status'>
  /**
   * What the JSON of /metrics reports: by default the counters above (TCP connections, HTTP requests and responses).
   * A service whose connections and messages are not HTTP requests (the realtime channel) replaces it with its own.
   */
  counters: () => Promise<MetricsCounters>
}

export function createServiceMetrics(service: string): ServiceMetrics {
  const registry = new Registry()
  registry.setDefaultLabels({ service })
  collectDefaultMetrics({ register: registry })
  const metrics: Omit<ServiceMetrics, 'counters'> = {
    registry,
    totalConnections: new Counter({
      name: 'connections_total',
      help: 'TCP connections accepted',
      registers: [registry],
    }),
    activeConnections: new Gauge({
      name: 'connections_active',
      help: 'TCP connections open',
      registers: [registry],
    }),
    messagesReceived: new Counter({
      name: 'http_requests_received_total',
      help: 'HTTP requests received',
      registers: [registry],
    }),
    messagesSent: new Counter({
      name: 'http_responses_sent_total',
      help: 'HTTP responses sent',
      registers: [registry],
    }),
    requestDuration: new Histogram({
      name: 'http_request_duration_seconds',
      help: 'HTTP request duration',
      labelNames: ['method', 'route', 'status'],
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
      registers: [registry],
    }),
  }
  return {
    ...metrics,
    counters: async () => ({
      totalConnections: await counterValue(metrics.totalConnections),
      activeConnections: await counterValue(metrics.activeConnections),
      messagesReceived: await counterValue(metrics.messagesReceived),
      messagesSent: await counterValue(metrics.messagesSent),
    }),
  }
}

/** The spec's JSON counters. */
export const MetricsCounters = Type.Object(
  {
    totalConnections: Type.Integer({ minimum: 0, description: 'TCP connections accepted' }),
    activeConnections: Type.Integer({ minimum: 0, description: 'TCP connections open' }),
    messagesReceived: Type.Integer({ minimum: 0, description: 'HTTP requests received' }),
    messagesSent: Type.Integer({ minimum: 0, description: 'HTTP responses sent' }),
  },
  { additionalProperties: false },
)
export type MetricsCounters = Static<typeof MetricsCounters>

const MetricsQuery = Type.Object(
  {
    format: Type.Optional(
      Type.Union([Type.Literal('json'), Type.Literal('prometheus')], {
        description: 'json (default; or Prometheus text when Accept asks for text/plain) or prometheus',
      }),
    ),
  },
  { additionalProperties: false },
)

const counterValue = async (metric: Counter | Gauge) => (await metric.get()).values[0]?.value ?? 0

export function metricsRoutes(app: FastifyInstance, metrics: ServiceMetrics): void {
  app.server.on('connection', (socket) => {
    metrics.totalConnections.inc()
    metrics.activeConnections.inc()
    socket.once('close', () => metrics.activeConnections.dec())
  })
  // callback hooks: no promise per request on the hot path
  app.addHook('onRequest', (_request, _reply, done) => {
    metrics.messagesReceived.inc()
    done()
  })
  // prom-client hashes the label set on every observe(); one bound child per method, route and status skips that
  const durations = new Map<string, ReturnType<ServiceMetrics['requestDuration']['labels']>>()
  app.addHook('onResponse', (request, reply, done) => {
    metrics.messagesSent.inc()
    const route = request.routeOptions.url ?? 'unmatched'
    const key = `${request.method} ${route} ${reply.statusCode}`
    let duration = durations.get(key)
    if (duration === undefined) {
      duration = metrics.requestDuration.labels({
        method: request.method,
        route,
        status: String(reply.statusCode),
      })
      durations.set(key, duration)
    }
    duration.observe(reply.elapsedTime / 1000)
    done()
  })

  app.get(
    '/metrics',
    {
      schema: {
        tags: ['operations'],
        description: 'JSON counters; Prometheus text with Accept: text/plain or ?format=prometheus',
        querystring: MetricsQuery,
        response: {
          200: {
            description: 'the counters as JSON, or every metric as Prometheus text',
            content: {
              'application/json': { schema: MetricsCounters },
              'text/plain': { schema: Type.String({ description: 'Prometheus exposition format 0.0.4' }) },
            },
          },
        },
      },
      config: { rateLimit: false },
    },
    async (request, reply) => {
      const { format } = request.query as Static<typeof MetricsQuery>
      const accept = request.headers.accept ?? ''
      if (format === 'prometheus' || (format !== 'json' && /text\/plain|openmetrics/.test(accept))) {
        return reply.type(metrics.registry.contentType).send(await metrics.registry.metrics())
      }
      return metrics.counters()
    },
  )
}
