// The gateway's environment: the chassis variables without a database, plus routing, edge and upstream settings. Kafka
// (KAFKA_BROKERS, KAFKA_NAMESPACE) serves the admins' dead-letter pages only.
import { ConfigError, listOf, loadConfig, originProblems, ServiceEnv } from '@meridian/service-kit'
import { type Static, Type } from 'typebox'

// no database; the service credential is kept: API keys are introspected at auth's /internal/ route
const { DATABASE_URL: _database, ...chassisVariables } = ServiceEnv.properties

export const GatewayEnv = Type.Object({
  ...chassisVariables,
  PORT: Type.Integer({ minimum: 0, maximum: 65535, default: 8080 }),
  REDIS_URL: Type.String({ pattern: '^rediss?://', maxLength: 2048, default: 'redis://127.0.0.1:6379' }),
  /** comma-separated exact origins allowed to call the API from a browser (credentials allowed); '*' is refused */
  CORS_ORIGINS: Type.String({ default: '' }),
  /**
   * comma-separated addresses or CIDR blocks of proxies in front of the gateway; X-Forwarded-For/-Proto/-Host are
   * believed only from these peers (empty: from nobody)
   */
  TRUSTED_PROXIES: Type.String({ default: '' }),
  /**
   * Consul names of routed services when they differ from the logical ones, e.g. `auth=auth-bench-1,order=order-x`
   * (a benchmark or a test points the standard route table at its own instances this way)
   */
  GATEWAY_SERVICE_NAMES: Type.String({ default: '' }),
  /** how long an upstream may take to send its response headers (and then between body chunks), ms */
  UPSTREAM_TIMEOUT_MS: Type.Integer({ minimum: 100, maximum: 300_000, default: 5000 }),
  UPSTREAM_CONNECT_TIMEOUT_MS: Type.Integer({ minimum: 50, maximum: 60_000, default: 1000 }),
  /** attempts of an idempotent request that failed to connect, each on another instance when there is one */
  UPSTREAM_MAX_ATTEMPTS: Type.Integer({ minimum: 1, maximum: 5, default: 3 }),
  /** consecutive failures after which an instance is ejected (passive health checking) */
  EJECT_AFTER_FAILURES: Type.Integer({ minimum: 1, maximum: 100, default: 3 }),
  /** first ejection's cool-down; each further ejection of the same instance doubles it, up to EJECT_MAX_MS */
  EJECT_BASE_MS: Type.Integer({ minimum: 100, default: 5000 }),
  EJECT_MAX_MS: Type.Integer({ minimum: 100, default: 60_000 }),
  /** consecutive failed requests to one service that open its circuit */
  BREAKER_FAILURE_THRESHOLD: Type.Integer({ minimum: 1, maximum: 1000, default: 5 }),
  /** the built console (apps/console/dist; relative: from the working directory) to serve at /console/; empty: none */
  CONSOLE_DIR: Type.String({ default: '' }),
  /** the payment provider as a browser reaches it (the console makes payment methods of test cards there) */
  CONSOLE_PAYMENT_PROVIDER_URL: Type.String({ default: 'http://127.0.0.1:3099' }),
  /**
   * a line the console's sign-in page shows (./scripts/dev --demo: the demo accounts); development only, refused
   * in production, where it could show credentials to anyone
   */
  CONSOLE_SIGN_IN_HINT: Type.String({ default: '', maxLength: 500 }),
  /** how long an open circuit answers 503 before letting one probe through */
  BREAKER_OPEN_MS: Type.Integer({ minimum: 100, default: 10_000 }),
  /** how long the merged OpenAPI document of /docs is reused */
  DOCS_CACHE_MS: Type.Integer({ minimum: 0, default: 10_000 }),
})
export type GatewayConfig = Static<typeof GatewayEnv>

/** `auth=auth-bench-1,order=order-x` as a map from logical name to Consul name. */
export function serviceNameMap(value: string): Map<string, string> {
  const names = new Map<string, string>()
  for (const pair of listOf(value)) {
    const [logical, consulName] = pair.split('=').map((part) => part.trim())
    if (!logical || !consulName || pair.split('=').length !== 2) {
      throw new ConfigError([`GATEWAY_SERVICE_NAMES: '${pair}' is not logical=consul-name`])
    }
    names.set(logical, consulName)
  }
  return names
}

export function loadGatewayConfig(env: NodeJS.ProcessEnv = process.env): GatewayConfig {
  const config = loadConfig(GatewayEnv, env)
  assertGatewayConfig(config)
  return config
}

/** Rules that span or parse variables, which the per-variable schema cannot say; buildGatewayApp checks them too. */
export function assertGatewayConfig(config: GatewayConfig): void {
  const problems = originProblems('CORS_ORIGINS', listOf(config.CORS_ORIGINS))
  if (config.EJECT_MAX_MS < config.EJECT_BASE_MS) problems.push('EJECT_MAX_MS: must be >= EJECT_BASE_MS')
  try {
    serviceNameMap(config.GATEWAY_SERVICE_NAMES)
  } catch (error) {
    if (error instanceof ConfigError) problems.push(...error.problems)
  }
  if (config.JWT_ALGORITHM === 'HS256' && !config.JWT_SECRET) {
    problems.push('JWT_SECRET: required when JWT_ALGORITHM is HS256')
  }
  if (config.NODE_ENV === 'production' && config.CONSOLE_SIGN_IN_HINT) {
    problems.push(
      'CONSOLE_SIGN_IN_HINT: development only (it shows demo accounts to anyone); unset it in production',
    )
  }
  if (problems.length > 0) throw new ConfigError(problems)
}
