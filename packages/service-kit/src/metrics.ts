// /metrics: every metric as Prometheus text (what operators and scrapers expect) and the spec's JSON counters, chosen
// by ?format or by the Accept header, each service with its own default; other packages add their own metrics.
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
  /**
   * What /metrics answers when the request does not choose (no ?format, an Accept that prefers neither, such as a
   * bare curl's): Prometheus text by default. The public gateway, whose /metrics is the spec's, and the realtime
   * channel, whose connections and messages the spec's counters are, answer the JSON counters.
   */
  defaultFormat: MetricsFormat
}

/** What /metrics answers: every metric as Prometheus text, or the spec's JSON counters. */
export type MetricsFormat = 'prometheus' | 'json'

export function createServiceMetrics(service: string): ServiceMetrics {
  const registry = new Registry()
  registry.setDefaultLabels({ service })
  collectDefaultMetrics({ register: registry })
  const metrics: Omit<ServiceMetrics, 'counters' | 'defaultFormat'> = {
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
    defaultFormat: 'prometheus',
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
        description:
          "json or prometheus; without it, the Accept header's preference, else the service's default (Prometheus text; the gateway's and the realtime channel's: the JSON counters)",
      }),
    ),
  },
  { additionalProperties: false },
)

/** The longest Accept header read, and the most media ranges of it weighed: the rest is ignored. */
const acceptLimits = { length: 1024, ranges: 32 }

/** The q of a media range's parameters (`;q=0.5`); 1 when absent, 0 when it is not a number between 0 and 1. */
function qualityOf(parameters: string[]): number {
  const q = parameters.find((parameter) => /^\s*q\s*=/i.test(parameter))
  if (q === undefined) return 1
  const value = Number(q.slice(q.indexOf('=') + 1).trim())
  return Number.isFinite(value) && value >= 0 && value <= 1 ? value : 0
}

interface MediaRange {
  range: string
  q: number
}

/**
 * How acceptable a media type is (RFC 9110 §12.5.1): the q of the most specific range that matches it (the type
 * itself, then `type/*`, then `*\/*`); 0 when none does.
 */
function acceptabilityOf(mediaType: string, ranges: readonly MediaRange[]): number {
  const candidates = [mediaType, `${mediaType.slice(0, mediaType.indexOf('/'))}/*`, '*/*']
  for (const candidate of candidates) {
    const matching = ranges.filter(({ range }) => range === candidate)
    if (matching.length > 0) return Math.max(...matching.map(({ q }) => q))
  }
  return 0
}

/**
 * What a request to /metrics is answered with: `?format` when given; else the format its Accept header prefers
 * (application/json for the JSON counters; text/plain or application/openmetrics-text, as Prometheus asks, for the
 * text); else, when it weighs both the same (`*\/*`, no Accept, neither acceptable), `fallback`.
 */
export function metricsFormat(
  format: MetricsFormat | undefined,
  accept: string | undefined,
  fallback: MetricsFormat,
): MetricsFormat {
  if (format !== undefined) return format
  const ranges = (accept ?? '')
    .slice(0, acceptLimits.length)
    .split(',')
    .slice(0, acceptLimits.ranges)
    .map((text): MediaRange => {
      const [range = '', ...parameters] = text.split(';')
      return { range: range.trim().toLowerCase(), q: qualityOf(parameters) }
    })
  const json = acceptabilityOf('application/json', ranges)
  // the text is sent as text/plain (format 0.0.4), which Prometheus takes too when it names OpenMetrics first: the
  // OpenMetrics type counts when it is named, not through a wildcard
  const named = ranges.filter(({ range }) => range === 'application/openmetrics-text').map(({ q }) => q)
  const prometheus = Math.max(acceptabilityOf('text/plain', ranges), ...named)
  if (json === prometheus) return fallback
  return json > prometheus ? 'json' : 'prometheus'
}

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
  // prom-client hashes the label set on every observe(); one bound child per method, route and status skips that.
  // Found by method, route and status in turn: the method and the route are the same strings on every request (their
  // hashes kept), where one key joining the three was a new string to hash each time.
  type Duration = ReturnType<ServiceMetrics['requestDuration']['labels']>
  const durations = new Map<string, Map<string, Map<number, Duration>>>()
  app.addHook('onResponse', (request, reply, done) => {
    metrics.messagesSent.inc()
    const { method } = request
    const route = request.routeOptions.url ?? 'unmatched'
    const status = reply.statusCode
    let byRoute = durations.get(method)
    if (byRoute === undefined) {
      byRoute = new Map()
      durations.set(method, byRoute)
    }
    let byStatus = byRoute.get(route)
    if (byStatus === undefined) {
      byStatus = new Map()
      byRoute.set(route, byStatus)
    }
    let duration = byStatus.get(status)
    if (duration === undefined) {
      duration = metrics.requestDuration.labels({ method, route, status: String(status) })
      byStatus.set(status, duration)
    }
    duration.observe(reply.elapsedTime / 1000)
    done()
  })

  app.get(
    '/metrics',
    {
      schema: {
        tags: ['operations'],
        description:
          'Every metric as Prometheus text (Accept: text/plain or application/openmetrics-text, or ?format=prometheus), ' +
          "or the spec's JSON counters (Accept: application/json, or ?format=json); without a preference, the " +
          "service's default: Prometheus text, the JSON counters at the gateway and the realtime channel",
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
      // the answer depends on Accept: caches must keep one per Accept
      reply.header('vary', 'Accept')
      if (metricsFormat(format, request.headers.accept, metrics.defaultFormat) === 'prometheus') {
        return reply.type(metrics.registry.contentType).send(await metrics.registry.metrics())
      }
      return metrics.counters()
    },
  )
}
