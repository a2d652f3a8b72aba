// Builds a Fastify instance with the chassis: the options that must be set at construction, then the plugin.
import type { IncomingMessage } from 'node:http'
import type { FastifyPluginAsyncTypebox, TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { AppError } from '@meridian/contracts'
import { chassisDatabase, type Queryable } from '@meridian/db'
import Fastify, {
  type FastifyBaseLogger,
  type FastifyInstance,
  LogController,
  type RawReplyDefaultExpression,
  type RawRequestDefaultExpression,
  type RawServerDefault,
} from 'fastify'
import type { Redis } from 'ioredis'
import { type DestinationStream, pino } from 'pino'
import { type AuthPluginOptions, authPlugin } from './auth/auth-plugin.ts'
import { authOptionsFromEnv } from './auth/env-options.ts'
import { clientErrorHandler, frameworkErrorHandler } from './client-errors.ts'
import { listOf, type ServiceEnv } from './config.ts'
import type { HealthCheck } from './health.ts'
import { useStrictJsonParser } from './json-body.ts'
import { loggerOptions, requestLogger } from './logging.ts'
import { type ServiceKitOptions, serviceKitPlugin } from './plugin.ts'
import { requestIdFrom } from './request-id.ts'
import { shapeCheckedSerializer } from './serialization.ts'
import { registerRequestTracing } from './tracing/request-tracing.ts'
import { ajvOptions, partAwareValidator } from './validation.ts'
import { registerWorkContext } from './work-context.ts'

export type ServiceApp = FastifyInstance<
  RawServerDefault,
  RawRequestDefaultExpression,
  RawReplyDefaultExpression,
  FastifyBaseLogger,
  TypeBoxTypeProvider
>

export interface ServiceAppOptions extends ServiceKitOptions {
  logLevel: string
  /**
   * TRUSTED_PROXIES: the peers whose X-Forwarded-For Fastify believes (proxy-addr's syntax, comma-separated);
   * empty or absent: the direct peer is the client
   */
  trustedProxies?: string
  /** where logs go (stdout by default); tests pass a stream to read what was logged */
  logStream?: DestinationStream
  /**
   * how long a client may take to send its whole request (headers and body), ms; then 408 and the connection is
   * closed. Default 30 s: a 1 MB body needs far less, and a client that stalls mid-upload ties nothing up for long.
   */
  requestTimeoutMs?: number
  /**
   * Which HTTP/1.1 upgrade requests go to the server's `upgrade` listeners; the others are served as ordinary
   * requests (Node's shouldUpgradeCallback, from Node 22.21 and 24.9; an older Node hands every upgrade to the
   * listeners, so they must check too). Default: every upgrade, once the server has an `upgrade` listener.
   */
  acceptsUpgrade?: (request: IncomingMessage) => boolean
  /**
   * The service's own database: its check joins readiness as `database`, and its errors are mapped before the error
   * table and any other mapper (chassisDatabase of @meridian/db gives both).
   */
  database?: { check: HealthCheck; mapError(error: unknown): AppError | undefined }
  /** further dependencies that /health and /health/ready check, by name (chassisOptions adds Redis) */
  healthChecks?: Readonly<Record<string, HealthCheck>>
  /** credentials verified by the kit's authPlugin (authOptionsFromEnv gives its options from the config) */
  authentication?: AuthPluginOptions
}

/** What a service's buildApp takes when it has a database of its own: config, the pool, Redis, a log stream (tests). */
export interface ServiceDependencies<Config, Pool> {
  config: Config
  sql: Pool
  redis: Redis
  /** tests read logs from here; stdout otherwise */
  logStream?: DestinationStream
}

export const defaultRequestTimeoutMs = 30_000

type ChassisEnv = Pick<
  ServiceEnv,
  | 'SERVICE_VERSION'
  | 'NODE_ENV'
  | 'LOG_LEVEL'
  | 'TRUSTED_PROXIES'
  | 'RATE_LIMIT_MAX'
  | 'RATE_LIMIT_WINDOW_MS'
  | 'RATE_LIMIT_SYNC_MS'
  | 'SERVICE_CREDENTIAL'
>

/**
 * The chassis options a service's validated config implies (version, environment, log level, trusted proxies, the
 * shared rate limit in `redis`, Redis in readiness, the service credential of /internal/ routes), so that no service
 * maps them by hand: `createServiceApp({ ...chassisOptions(config,
 * redis), name, description })`.
 */
export function chassisOptions(
  config: ChassisEnv,
  redis: Redis,
): Pick<
  ServiceAppOptions,
  | 'version'
  | 'environment'
  | 'logLevel'
  | 'trustedProxies'
  | 'rateLimit'
  | 'healthChecks'
  | 'serviceCredential'
> {
  return {
    version: config.SERVICE_VERSION,
    environment: config.NODE_ENV,
    logLevel: config.LOG_LEVEL,
    trustedProxies: config.TRUSTED_PROXIES,
    rateLimit: {
      redis,
      max: config.RATE_LIMIT_MAX,
      timeWindowMs: config.RATE_LIMIT_WINDOW_MS,
      syncIntervalMs: config.RATE_LIMIT_SYNC_MS,
    },
    serviceCredential: config.SERVICE_CREDENTIAL,
    // the limiter, sessions and revocations live there
    healthChecks: {
      redis: async () => {
        await redis.ping()
      },
    },
  }
}

/** What the platform's services all have: the chassis settings and the access-token settings of ServiceEnv. */
type PlatformEnv = ChassisEnv & Parameters<typeof authOptionsFromEnv>[0]

/**
 * createServiceApp's options for a service of the platform, from what its buildApp is given: chassisOptions, its
 * database in readiness and in error mapping, users authenticated as everywhere (bearer tokens, API keys introspected
 * at auth, auth's cookie sessions and its revocations followed at once, both in `redis`), logs to a test's stream.
 * `authentication: false` for a service that authenticates by itself (auth).
 *
 *     createServiceApp(serviceAppOptions(dependencies, { name: serviceName, description: '...' }))
 */
export function serviceAppOptions(
  {
    config,
    sql,
    redis,
    logStream,
  }: { config: PlatformEnv; sql?: Queryable; redis: Redis; logStream?: DestinationStream },
  {
    authentication = true,
    ...service
  }: Pick<ServiceAppOptions, 'name' | 'description'> &
    Partial<Omit<ServiceAppOptions, 'authentication'>> & { authentication?: boolean },
): ServiceAppOptions {
  return {
    ...chassisOptions(config, redis),
    ...(sql ? { database: chassisDatabase(sql) } : {}),
    ...(authentication
      ? { authentication: authOptionsFromEnv(config, { sessions: { redis }, revocations: { redis } }) }
      : {}),
    ...(logStream ? { logStream } : {}),
    ...service,
  }
}

export const bodyLimitBytes = 1024 * 1024

/**
 * The longest path parameter a service's router takes (Fastify's maxParamLength, its default): a longer one is 414
 * URI_TOO_LONG (client-errors.ts); the gateway refuses a path segment over it the same way.
 */
export const maxPathParameterLength = 100

export async function createServiceApp(options: ServiceAppOptions): Promise<ServiceApp> {
  const {
    logLevel,
    logStream,
    trustedProxies,
    requestTimeoutMs = defaultRequestTimeoutMs,
    acceptsUpgrade,
    database,
    healthChecks = {},
    authentication,
    ...kitOptions
  } = options
  const trusted = listOf(trustedProxies ?? '')
  const logger = pino(loggerOptions(options.name, logLevel), logStream ?? pino.destination(1))
  const app = Fastify({
    loggerInstance: logger as FastifyBaseLogger,
    genReqId: requestIdFrom,
    requestIdHeader: false,
    logController: new LogController({ requestIdLogLabel: 'requestId' }),
    childLoggerFactory: requestLogger,
    bodyLimit: bodyLimitBytes,
    routerOptions: { maxParamLength: maxPathParameterLength },
    return503OnClosing: true,
    // a plugin may wait on a broker: the event backbone's consumers join their groups, and a restarted instance's
    // joins wait until the coordinator gives up on the members of the instance that died (Kafka's session timeout,
    // 30 s); Fastify's default of 10 s would fail such a restart
    pluginTimeout: 90_000,
    requestTimeout: requestTimeoutMs,
    // Node takes the timeout only at construction (Fastify sets it later, too late), and checks for timed-out
    // requests at this interval (30 s by default, which could double the timeout)
    http: {
      requestTimeout: requestTimeoutMs,
      connectionsCheckingInterval: Math.min(requestTimeoutMs, 5000),
      ...(acceptsUpgrade ? { shouldUpgradeCallback: acceptsUpgrade } : {}),
    },
    // what the parser and the router refuse before any route also leaves in the envelope
    clientErrorHandler: clientErrorHandler(logger as FastifyBaseLogger),
    frameworkErrors: frameworkErrorHandler,
    ...(trusted.length > 0 ? { trustProxy: trusted } : {}),
    ajv: {
      // every problem at once, and unknown fields rejected rather than silently dropped (formats come with Fastify's Ajv)
      customOptions: { ...ajvOptions },
    },
    // query, path and headers coerced from text; the JSON body validated with the types it was sent with; responses
    // of exactly their schema's shape written by JSON.stringify (serialization.ts)
    schemaController: {
      compilersFactory: { buildValidator: partAwareValidator(), buildSerializer: shapeCheckedSerializer() },
    },
  }).withTypeProvider<TypeBoxTypeProvider>()
  // JSON only: a text/plain body is refused with 415 instead of reaching validation as a string
  app.removeContentTypeParser(['text/plain'])
  // strict UTF-8 and bounded nesting before JSON.parse (json-body.ts)
  useStrictJsonParser(app)
  // which request is running, for a fatal error's line (work-context.ts), then the request's span: both first, so
  // that they hold around every hook and route the chassis and the service add
  registerWorkContext(app)
  await registerRequestTracing(app)
  await app.register(serviceKitPlugin, {
    ...kitOptions,
    ...(database ? { errorMappers: [database.mapError, ...(kitOptions.errorMappers ?? [])] } : {}),
  })
  if (database) app.health.add('database', database.check)
  for (const [name, check] of Object.entries(healthChecks)) app.health.add(name, check)
  if (authentication) await app.register(authPlugin, authentication)
  return app
}

/**
 * Serves a resource plugin under /api/v1 (canonical, documented) and /api (alias of v1, hidden from OpenAPI); with
 * `atRoot`, also at the spec's unversioned paths (the same routes without a prefix, hidden as well).
 */
export async function registerVersionedApi<Options extends Record<string, unknown>>(
  app: ServiceApp,
  routes: FastifyPluginAsyncTypebox<Options>,
  options: Options,
  { atRoot = false }: { atRoot?: boolean } = {},
): Promise<void> {
  await app.register(routes, { ...options, prefix: '/api/v1' })
  await registerHidden(app, routes, options, '/api')
  if (atRoot) await registerHidden(app, routes, options)
}

/** An alias: the routes served again under `prefix`, documented only where they are canonical. */
async function registerHidden<Options extends Record<string, unknown>>(
  app: ServiceApp,
  routes: FastifyPluginAsyncTypebox<Options>,
  options: Options,
  prefix?: string,
): Promise<void> {
  await app.register(
    async (alias) => {
      alias.addHook('onRoute', (route) => {
        route.schema = { ...route.schema, hide: true }
      })
      await alias.register(routes, options)
    },
    prefix ? { prefix } : {},
  )
}
