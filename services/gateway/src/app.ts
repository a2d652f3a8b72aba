// The gateway as a Fastify app: the chassis, CORS and edge rate limits, the proxied route table, WebSocket
// pass-through, health, merged docs and the AsyncAPI document. Never listens; main.ts and tests build it.
import { resolve } from 'node:path'
import { createKafka, kafkaSecurityFromEnv } from '@meridian/events'
import {
  authOptionsFromEnv,
  authPlugin,
  type ConsulClient,
  consulOptionsFromEnv,
  createConsulClient,
  createDiscovery,
  createServiceApp,
  type LogStream,
  listOf,
  type ServiceApp,
  type ServiceDiscovery,
} from '@meridian/service-kit'
import type { FastifyRequest } from 'fastify'
import type { Redis } from 'ioredis'
import { assertGatewayConfig, type GatewayConfig, serviceNameMap } from './config.ts'
import { clientAddress, forwardedForChain, trustedProxies } from './edge/client-address.ts'
import { registerCors } from './edge/cors.ts'
import { rateLimitKeyGenerator } from './edge/rate-limit-key.ts'
import { redisAuditTrail } from './operations/audit-stream.ts'
import { aggregateOpenApi } from './operations/openapi-aggregate.ts'
import { reportUpstreamsInHealth } from './operations/upstream-health.ts'
import type { ForwardingContext } from './proxy/forwarded-headers.ts'
import { proxyRoutes } from './proxy/http-proxy.ts'
import {
  createRouteMatcher,
  type GatewayRoute,
  publicRoutes,
  withVersionAliases,
} from './proxy/route-table.ts'
import {
  acceptsWebSocketUpgrade,
  createWebSocketPassThrough,
  routeUpgrades,
} from './proxy/websocket-proxy.ts'
import { adminAuditRoutes } from './routes/admin-audit/index.ts'
import { adminDeadLettersRoutes } from './routes/admin-dead-letters/index.ts'
import { adminServicesRoutes } from './routes/admin-services/index.ts'
import { asyncApiRoutes } from './routes/asyncapi/index.ts'
import { consoleRoutes } from './routes/console/index.ts'
import { createUpstreamServices, type UpstreamServices } from './upstreams/upstream-services.ts'

export const serviceName = 'gateway'

export { type GatewayConfig, loadGatewayConfig } from './config.ts'
export { defaultRoutes, type GatewayRoute } from './proxy/route-table.ts'

export interface GatewayDependencies {
  config: GatewayConfig
  redis: Redis
  /** follows one service's healthy instances by its Consul name; default: a blocking-query discovery on Consul */
  discovery?: (consulName: string) => ServiceDiscovery
  /**
   * the route table (canonical prefixes; /api aliases of /api/v1 are added); default: every public path, and in
   * development GraphiQL too (publicRoutes)
   */
  routes?: readonly GatewayRoute[]
  /** tests read logs from here; stdout otherwise */
  logStream?: LogStream
}

declare module 'fastify' {
  interface FastifyInstance {
    upstreams: UpstreamServices
  }
}

/** Retry-After when a service has no instance in Consul at all (a restart or deployment is the likely cause). */
const noInstanceRetryAfterSeconds = 5

export async function buildGatewayApp({
  config,
  redis,
  discovery,
  routes,
  logStream,
}: GatewayDependencies): Promise<ServiceApp> {
  assertGatewayConfig(config)
  const table = withVersionAliases(routes ?? publicRoutes(config.NODE_ENV))
  const trusted = trustedProxies(listOf(config.TRUSTED_PROXIES))
  const consulNames = serviceNameMap(config.GATEWAY_SERVICE_NAMES)

  const addressOf = (request: FastifyRequest) =>
    clientAddress(
      request.raw.socket.remoteAddress ?? '',
      forwardedForChain(request.headers['x-forwarded-for']),
      trusted,
    )

  // declared before the app so that the rate limiter's key generator can reach the auth plugin once it exists
  let bearerSubject: (request: FastifyRequest) => Promise<string | undefined> = async () => undefined

  const app = await createServiceApp({
    name: serviceName,
    version: config.SERVICE_VERSION,
    description: 'The public entry: every service of Meridian behind one address',
    environment: config.NODE_ENV,
    logLevel: config.LOG_LEVEL,
    ...(logStream ? { logStream } : {}),
    // only a WebSocket handshake on a WebSocket route is an upgrade; any other Upgrade request is plain HTTP
    acceptsUpgrade: acceptsWebSocketUpgrade(createRouteMatcher(table)),
    rateLimit: {
      redis,
      max: config.RATE_LIMIT_MAX,
      timeWindowMs: config.RATE_LIMIT_WINDOW_MS,
      syncIntervalMs: config.RATE_LIMIT_SYNC_MS,
      keyGenerator: rateLimitKeyGenerator({
        clientAddress: addressOf,
        bearerSubject: (request) => bearerSubject(request),
      }),
    },
  })
  // the gateway's /metrics is the public one of the spec (Health and operations): its JSON counters unless the
  // request asks for Prometheus text (Accept: text/plain, application/openmetrics-text, or ?format=prometheus)
  app.metrics.defaultFormat = 'json'

  // Bearer tokens are verified (auth's JWKS) to count a signed-in user's requests together (a token that fails is not
  // refused for that: the service behind answers 401 itself) and on the gateway's own admin routes, which take bearer
  // tokens only (no cookie, no API key). auth's revocations are followed, so that a demoted, suspended or deleted
  // admin's token stops opening them at once, as in every service.
  await app.register(authPlugin, authOptionsFromEnv(config, { revocations: { redis } }))
  bearerSubject = async (request) => {
    try {
      const principal = await app.principalOf(request)
      return principal.method === 'bearer' ? principal.subject : undefined
    } catch {
      return undefined
    }
  }

  const corsResponseHeaders = registerCors(app, { origins: listOf(config.CORS_ORIGINS) })

  // read at build time: a bad CONSUL_CACERT stops the start, not the first request routed
  const consulSettings = consulOptionsFromEnv(config)
  let consul: ConsulClient | undefined
  const consulClient = () => {
    consul ??= createConsulClient({ ...consulSettings, requestTimeoutMs: 2000 })
    return consul
  }
  const discover =
    discovery ?? ((name: string) => createDiscovery({ consul: consulClient(), name, logger: app.log }))

  const serviceNames = new Map<string, string>()
  for (const route of table) serviceNames.set(route.service, consulNames.get(route.service) ?? route.service)
  const upstreams = createUpstreamServices({
    services: serviceNames,
    discover,
    policy: {
      ejection: {
        failuresToEject: config.EJECT_AFTER_FAILURES,
        baseEjectionMs: config.EJECT_BASE_MS,
        maxEjectionMs: config.EJECT_MAX_MS,
      },
      breaker: { failureThreshold: config.BREAKER_FAILURE_THRESHOLD, openMs: config.BREAKER_OPEN_MS },
      noInstanceRetryAfterSeconds,
    },
    logger: app.log,
  })
  app.decorate('upstreams', upstreams)
  app.addHook('onClose', async () => {
    await upstreams.close()
    await consul?.close()
  })

  app.health.add('redis', async () => {
    await redis.ping()
  })
  app.health.add('consul', async () => {
    await consulClient().get('/v1/status/leader', { timeoutMs: 1500 })
  })
  reportUpstreamsInHealth(app, upstreams)
  aggregateOpenApi(app, { upstreams, routes: table, cacheMs: config.DOCS_CACHE_MS })
  await app.register(asyncApiRoutes)

  const forwarding = (request: FastifyRequest): ForwardingContext => {
    const peer = request.raw.socket.remoteAddress ?? ''
    return {
      requestId: String(request.id),
      clientAddress: addressOf(request),
      peerAddress: peer,
      peerTrusted: trusted.trusts(peer),
      protocol: 'encrypted' in request.raw.socket && request.raw.socket.encrypted ? 'https' : 'http',
      host: request.headers.host,
    }
  }
  const timeouts = {
    timeoutMs: config.UPSTREAM_TIMEOUT_MS,
    connectTimeoutMs: config.UPSTREAM_CONNECT_TIMEOUT_MS,
    maxAttempts: config.UPSTREAM_MAX_ATTEMPTS,
  }
  const audit = redisAuditTrail(redis)
  await app.register(adminServicesRoutes, { consul: consulClient, services: serviceNames, audit })
  await app.register(adminAuditRoutes, {
    trails: table.map((route) => route.prefix).filter((prefix) => prefix.startsWith('/api/v1/admin/audit/')),
    own: audit,
  })
  let kafka: ReturnType<typeof createKafka> | undefined
  // the files of KAFKA_TLS_* are read at start: one that cannot be read stops the start, not an admin's first page
  const kafkaSecurity = kafkaSecurityFromEnv(config)
  await app.register(adminDeadLettersRoutes, {
    kafka: () => {
      kafka ??= createKafka({
        brokers: config.KAFKA_BROKERS,
        clientId: 'gateway',
        connectionTimeoutMs: 2000,
        ...kafkaSecurity,
      })
      return kafka
    },
    namespace: config.KAFKA_NAMESPACE,
    audit,
  })
  if (config.CONSOLE_DIR) {
    await app.register(consoleRoutes, {
      // relative to the working directory: the production build serves its own copy as CONSOLE_DIR=console
      dir: resolve(config.CONSOLE_DIR),
      paymentProviderUrl: config.CONSOLE_PAYMENT_PROVIDER_URL,
      signInHint: config.CONSOLE_SIGN_IN_HINT,
    })
  }
  routeUpgrades(app)
  await app.register(proxyRoutes, {
    routes: table,
    upstreams,
    ...timeouts,
    forwarding,
    relayedResponseHeaders: corsResponseHeaders,
    websocket: createWebSocketPassThrough({ ...timeouts, forwarding }),
  })
  return app
}

/** How long startup waits for the first instance lists before listening anyway (requests then get 503 meanwhile). */
const discoveryStartupWaitMs = 5000

/** The app as main.ts runs it: built, then given a few seconds to learn where each service's instances are. */
export async function buildGatewayService(dependencies: GatewayDependencies): Promise<ServiceApp> {
  const app = await buildGatewayApp(dependencies)
  await app.upstreams.ready(discoveryStartupWaitMs)
  return app
}
