// Configuration from the environment, validated against a TypeBox schema at boot: the only reader of process.env.
import { KafkaSecurityEnv } from '@meridian/kafka-connection'
import { type Static, type TObject, type TProperties, type TSchema, Type } from 'typebox'
import { Value } from 'typebox/value'
import { type EngineVariables, plaintextEngineProblems } from './engine-transport.ts'
import { TracingEnv } from './tracing/tracing-env.ts'

/** The schema keyword that marks a variable's default as public and for development only (developmentOnlyDefault). */
const developmentOnlyKeyword = 'x-development-only-default'

/**
 * The options of a variable whose default is for development only: public (it is in this repository) or pointing at
 * what only a developer's machine has (the payment simulator). Production refuses to start while the variable holds
 * it, or, for a comma-separated list, while any entry is one of the default's: `Type.String({ minLength: 32,
 * ...developmentOnlyDefault('insecure-…') })`. Development and test accept it.
 */
export const developmentOnlyDefault = <Value extends string>(value: Value) =>
  ({ default: value, [developmentOnlyKeyword]: true }) as const

/**
 * One service credential, or several (`current,previous`): at least 32 characters each, no commas or white space,
 * at most four. Linear: the entry's class excludes the comma that ends it.
 */
const serviceCredentialFormat = '^[^,\\s]{32,}(?:,[^,\\s]{32,}){0,3}$'

/**
 * Redis over TLS (REDIS_URL rediss://<service>:<password>@host:port): paths of PEM files, read once by createRedis —
 * the CA that signed the server's certificate (unset: the system's), and a client certificate with its key for a
 * server that asks for one. A file given for a redis:// URL is refused.
 */
export const RedisTlsEnv = Type.Object({
  REDIS_TLS_CA: Type.Optional(Type.String({ minLength: 1, maxLength: 4096 })),
  REDIS_TLS_CERT: Type.Optional(Type.String({ minLength: 1, maxLength: 4096 })),
  REDIS_TLS_KEY: Type.Optional(Type.String({ minLength: 1, maxLength: 4096 })),
})

/**
 * Redis through its sentinels (a primary, replicas, and the sentinels that promote a replica when the primary dies):
 * REDIS_SENTINELS lists them, REDIS_NAME is the primary's name they monitor. REDIS_URL then gives the user, password,
 * database and scheme (rediss://: TLS to the sentinels and the servers alike); its host and port are not used.
 */
export const RedisSentinelEnv = Type.Object({
  REDIS_SENTINELS: Type.Optional(
    Type.String({
      maxLength: 2048,
      // host:port, at most nine, an IPv6 address in brackets; each entry's classes exclude the comma that ends it
      pattern:
        '^(?:\\[[0-9A-Fa-f:.]+\\]|[^,\\s:\\[\\]]+):\\d{1,5}(?:,(?:\\[[0-9A-Fa-f:.]+\\]|[^,\\s:\\[\\]]+):\\d{1,5}){0,8}$',
      expectation: 'must be host:port[,host:port…] (at most nine sentinels)',
    }),
  ),
  REDIS_NAME: Type.String({
    pattern: '^[A-Za-z0-9._-]{1,64}$',
    default: 'meridian',
    expectation: 'must be the name the sentinels monitor the primary under (letters, digits, . _ -)',
  }),
})

/** What a variable naming a PEM file expects (its contents are read and checked where the client is made). */
const pemPathExpectation = 'must be the path of a PEM file, at most 4096 characters'

/** What every service reads (docs/explanation/architecture.md, "The processes"); a service extends it with its own variables. */
export const ServiceEnv = Type.Object({
  /**
   * Unset is production: stacks in 500 bodies, GraphiQL and the public development defaults are only for a service
   * told it runs in development (`./scripts/dev` does) or under test.
   */
  NODE_ENV: Type.Union([Type.Literal('development'), Type.Literal('test'), Type.Literal('production')], {
    default: 'production',
  }),
  LOG_LEVEL: Type.Union(
    ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'].map((level) => Type.Literal(level)),
    { default: 'info' },
  ),
  SERVICE_HOST: Type.String({
    minLength: 1,
    default: '127.0.0.1',
    description: 'address announced in Consul',
  }),
  HOST: Type.String({ minLength: 1, default: '0.0.0.0', description: 'address to listen on' }),
  PORT: Type.Integer({ minimum: 0, maximum: 65535 }),
  DATABASE_URL: Type.String({ pattern: '^postgres(ql)?://', maxLength: 8192 }),
  REDIS_URL: Type.String({ pattern: '^rediss?://', maxLength: 2048 }),
  ...RedisTlsEnv.properties,
  ...RedisSentinelEnv.properties,
  /** `https://host:port` for an agent with TLS on its HTTP API (CONSUL_CACERT names its CA), else plain HTTP */
  CONSUL_HTTP_ADDR: Type.String({
    minLength: 1,
    maxLength: 2048,
    pattern: '^(?:[Hh][Tt][Tt][Pp][Ss]?://)?[^\\s/?#]+(?:/(?:[^\\s?#/][^\\s?#]*)?)?$',
    expectation: 'must be host:port, http://host:port or https://host:port (a path may follow)',
    default: 'http://127.0.0.1:8500',
  }),
  /** the service's own ACL token (sent as X-Consul-Token): only its service, its key prefix, reading the others */
  CONSUL_HTTP_TOKEN: Type.Optional(Type.String({ minLength: 1, maxLength: 512 })),
  /** the PEM file of the CA the agent's HTTPS certificate is checked against (default: the system's CAs) */
  CONSUL_CACERT: Type.Optional(
    Type.String({ minLength: 1, maxLength: 4096, expectation: pemPathExpectation }),
  ),
  /** a client certificate (PEM file) for an agent that verifies HTTPS clients, with CONSUL_CLIENT_KEY */
  CONSUL_CLIENT_CERT: Type.Optional(
    Type.String({ minLength: 1, maxLength: 4096, expectation: pemPathExpectation }),
  ),
  /** the PEM file of CONSUL_CLIENT_CERT's private key */
  CONSUL_CLIENT_KEY: Type.Optional(
    Type.String({ minLength: 1, maxLength: 4096, expectation: pemPathExpectation }),
  ),
  KAFKA_BROKERS: Type.String({ minLength: 1, default: '127.0.0.1:9092' }),
  /**
   * Prepended to every topic and consumer group: a whole system run in a namespace of its own (end-to-end tests,
   * fault runs, benchmarks) shares a broker without reading anyone else's events. Empty: topic = event type.
   */
  KAFKA_NAMESPACE: Type.String({ default: '', pattern: '^[A-Za-z0-9._-]*$', maxLength: 100 }),
  /**
   * The Kafka client's TLS (KAFKA_TLS, and the PEM files KAFKA_TLS_CA, KAFKA_TLS_CERT, KAFKA_TLS_KEY) and SASL
   * (KAFKA_SASL_MECHANISM, KAFKA_SASL_USERNAME, KAFKA_SASL_PASSWORD): checked here, the files read and the whole
   * checked together by kafkaSecurityFromEnv when the client is made (the same parsing as the tools').
   */
  ...KafkaSecurityEnv.properties,
  /** set to false to run without Consul (a single process on a laptop) */
  CONSUL_REGISTER: Type.Boolean({ default: true }),
  /**
   * On SIGTERM, how long an instance that has turned not-ready and left Consul keeps serving before it stops accepting
   * connections: callers and load balancers that have not noticed yet still find it answering. 0 where the platform
   * pauses before SIGTERM (Kubernetes' preStop, as the chart does); a second or two on hosts without one.
   */
  DRAIN_PAUSE_MS: Type.Integer({ minimum: 0, maximum: 30_000, default: 0 }),
  /**
   * The name this instance registers under in Consul; default the service's name. A whole system run of its own
   * (end-to-end tests, fault runs, benchmarks) registers as `<name>-<run>` and points the others at those names
   * (`<NAME>_SERVICE_NAME`, the gateway's `GATEWAY_SERVICE_NAMES`).
   */
  CONSUL_SERVICE_NAME: Type.Optional(
    Type.String({ minLength: 1, maxLength: 200, pattern: '^[A-Za-z0-9._-]+$' }),
  ),
  SERVICE_VERSION: Type.String({ default: '0.2.0-dev' }),
  SERVICE_REGION: Type.String({ default: 'local' }),
  SERVICE_AZ: Type.String({ default: 'local-a' }),
  SERVICE_WEIGHT: Type.Integer({ minimum: 1, maximum: 1000, default: 1 }),
  RATE_LIMIT_MAX: Type.Integer({ minimum: 1, default: 300, description: 'requests per window per client' }),
  RATE_LIMIT_WINDOW_MS: Type.Integer({ minimum: 1000, default: 60_000 }),
  /**
   * Peers whose X-Forwarded-For is believed (comma-separated addresses, CIDR blocks, or `loopback`, `linklocal`,
   * `uniquelocal`): the gateway's. Behind it, request.ip — rate limits, login throttling, logs — is then the client,
   * not the gateway. Empty: nobody is believed.
   */
  TRUSTED_PROXIES: Type.String({ default: 'loopback' }),
  /** how often local rate-limit counts are added to Redis; 0 = a Redis round trip per request (exact) */
  RATE_LIMIT_SYNC_MS: Type.Integer({ minimum: 0, maximum: 10_000, default: 100 }),
  // Access tokens (verified by every service, signed by auth). Only JWT_ALGORITHM is ever accepted.
  JWT_ALGORITHM: Type.Union([Type.Literal('RS256'), Type.Literal('HS256')], { default: 'RS256' }),
  /** the shared secret of HS256 (small deployments); at least 32 characters; unused with RS256 */
  JWT_SECRET: Type.Optional(Type.String({ minLength: 32 })),
  /**
   * where RS256 public keys are published (auth serves it): one URL, or several comma-separated — auth's instances on
   * several hosts — asked in turn when one does not answer
   */
  AUTH_JWKS_URL: Type.String({ minLength: 1, default: 'http://127.0.0.1:3001/.well-known/jwks.json' }),
  /**
   * `iss` of every token auth signs, and the OpenID Connect issuer: the public address clients reach auth by, which
   * is the gateway's origin (auth's provider advertises every endpoint there). The same value in every service.
   */
  JWT_ISSUER: Type.String({ minLength: 1, default: 'http://127.0.0.1:8080' }),
  JWT_AUDIENCE: Type.String({ minLength: 1, default: 'meridian' }),
  /**
   * The secret the services share to call each other's /internal/ routes (sent in X-Service-Credential). A
   * comma-separated list rotates it: the first is sent, every one is accepted (`old,new`, then `new,old`, then `new`,
   * each rolled out to every service before the next).
   */
  SERVICE_CREDENTIAL: Type.String({
    pattern: serviceCredentialFormat,
    expectation:
      'must be one to four comma-separated credentials of at least 32 characters, without white space',
    ...developmentOnlyDefault('insecure-development-service-credential-0001'),
  }),
  /** auth's name in Consul: where API keys are introspected (and content creates users) */
  AUTH_SERVICE_NAME: Type.String({
    minLength: 1,
    maxLength: 200,
    pattern: '^[A-Za-z0-9._-]+$',
    default: 'auth',
    description: "auth's name in Consul: API keys are introspected there",
  }),
  AUTH_DISCOVERY_WAIT_MS: Type.Integer({
    minimum: 1,
    maximum: 60_000,
    default: 3000,
    description: 'how long a call to auth waits for the first list of its instances from Consul, ms',
  }),
  /**
   * Production refuses engines reached in plaintext or without credentials (engine-transport.ts names each); true
   * allows them, for engines on a network the operator trusts (a host's loopback, a private link), and the service
   * names them in its log at start.
   */
  ENGINES_PLAINTEXT_ALLOWED: Type.Boolean({ default: false }),
  // OpenTelemetry's standard variables (docs/how-to/operations.md, Tracing): read first by tracing/preload.ts
  ...TracingEnv.properties,
})
export type ServiceEnv = Static<typeof ServiceEnv>

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`)
    this.name = 'ConfigError'
  }
}

/** A comma-separated variable as a list: entries trimmed, empty ones dropped. */
export const listOf = (value: string): string[] =>
  value
    .split(',')
    .map((item) => item.trim())
    .filter(Boolean)

/**
 * What is wrong with a variable listing the origins browsers may call from with credentials: each must be an exact
 * origin (scheme://host[:port], no path) — a wildcard would let any page use a visitor's cookie.
 */
export function originProblems(variable: string, origins: readonly string[]): string[] {
  return origins.flatMap((origin) =>
    origin.includes('*')
      ? [`${variable}: '${origin}': wildcards are refused (credentials are allowed, so origins are exact)`]
      : /^https?:\/\/[^/\s]+$/i.test(origin)
        ? []
        : [`${variable}: '${origin}' is not an origin (scheme://host[:port], no path)`],
  )
}

/** The variable's exact origins, lower-cased (as browsers send them); a ConfigError when one is not exact. */
export function exactOrigins(variable: string, value: string): string[] {
  const origins = listOf(value)
  const problems = originProblems(variable, origins)
  if (problems.length > 0) throw new ConfigError(problems)
  return origins.map((origin) => origin.toLowerCase())
}

/** The service's env schema: ServiceEnv plus its own variables. */
export const serviceEnv = <Extra extends TProperties>(extra: Extra) =>
  Type.Object({ ...ServiceEnv.properties, ...extra })

/**
 * The defaults of a service with a database of its own and Redis (docs/explanation/architecture.md, "The processes"): its port, its database on the local
 * server, the pool size, Redis. Spread into serviceEnv: `serviceEnv({ ...ownStoresEnv({ port: 3004, database:
 * 'inventory' }), ...its own })`.
 */
export const ownStoresEnv = ({ port, database }: { port: number; database: string }) => ({
  PORT: Type.Integer({ minimum: 0, maximum: 65535, default: port }),
  // the local server's superuser and its well-known password: a developer's machine only
  DATABASE_URL: Type.String({
    pattern: '^postgres(ql)?://',
    maxLength: 8192,
    ...developmentOnlyDefault(`postgres://postgres:postgres@127.0.0.1:5432/${database}`),
  }),
  DATABASE_POOL_MAX: Type.Integer({ minimum: 1, maximum: 100, default: 10 }),
  /** how long a connection may sit idle in an open transaction before PostgreSQL ends it and frees its locks, ms */
  DATABASE_IDLE_TRANSACTION_TIMEOUT_MS: Type.Integer({ minimum: 1000, maximum: 3_600_000, default: 60_000 }),
  REDIS_URL: Type.String({ pattern: '^rediss?://', maxLength: 2048, default: 'redis://127.0.0.1:6379' }),
})

/** A variable name whose value is never shown in a message. */
const secretName = /URL|TOKEN|SECRET|PASSWORD|KEY|CREDENTIAL/

/**
 * Reads the variables the schema names from `env`, applies defaults, converts strings to numbers and booleans,
 * and fails with one message naming every bad or missing variable. A schema with NODE_ENV (every service's) that
 * resolves to production also fails for every variable that holds its development-only default
 * (developmentOnlyDefault), whether left unset or set to it, and, for the kit's schemas (ServiceEnv's), for every
 * engine reached in plaintext or without credentials unless ENGINES_PLAINTEXT_ALLOWED is true (engine-transport.ts).
 */
export function loadConfig<Schema extends TObject>(
  schema: Schema,
  env: NodeJS.ProcessEnv = process.env,
): Static<Schema> {
  const raw: Record<string, unknown> = {}
  for (const key of Object.keys(schema.properties)) {
    const value = env[key]
    if (value !== undefined && value !== '') raw[key] = value
  }
  const candidate = Value.Convert(schema, Value.Default(schema, raw)) as Record<string, unknown>
  const required = new Set(schema.required ?? [])
  const problems: string[] = []
  // each variable on its own, so that one message names every bad one
  for (const [name, property] of Object.entries(schema.properties) as [string, TSchema][]) {
    const value = candidate[name]
    if (value === undefined) {
      if (required.has(name)) problems.push(`${name}: required but not set`)
      continue
    }
    if (Value.Check(property, value)) continue
    const secret = secretName.test(name)
    problems.push(`${name}: ${describeExpectation(property)}${secret ? '' : ` (got '${String(raw[name])}')`}`)
  }
  if (candidate.NODE_ENV === 'production') {
    problems.push(...developmentDefaultProblems(schema, candidate))
    // a schema of the kit's (every service's) says how it reaches its engines: production refuses plaintext
    if ('ENGINES_PLAINTEXT_ALLOWED' in schema.properties)
      problems.push(...plaintextEngineProblems(candidate as EngineVariables))
  }
  if (problems.length > 0) throw new ConfigError(problems)
  return candidate as Static<Schema>
}

/** The variables that hold their public development default (any entry of it, for a list), by name, never by value. */
function developmentDefaultProblems(schema: TObject, values: Record<string, unknown>): string[] {
  return Object.entries(schema.properties as Record<string, Record<string, unknown>>).flatMap(
    ([name, property]) => {
      const value = values[name]
      if (property[developmentOnlyKeyword] !== true || value === undefined) return []
      const publicValues = new Set(listOf(String(property.default)))
      return listOf(String(value)).some((entry) => publicValues.has(entry))
        ? [`${name}: must be set in production (its default is for development only)`]
        : []
    },
  )
}

function describeExpectation(schema: TSchema): string {
  // a pattern says little to an operator: a variable may say what it expects in words
  const { expectation } = schema as { expectation?: unknown }
  if (typeof expectation === 'string') return expectation
  const options = (schema as { anyOf?: { const?: unknown }[] }).anyOf
  if (options?.every((option) => option.const !== undefined)) {
    return `must be one of ${options.map((option) => String(option.const)).join(', ')}`
  }
  const [first] = Value.Errors(schema, undefined)
  const { type, minimum, maximum, pattern } = schema as {
    type?: string
    minimum?: number
    maximum?: number
    pattern?: string
  }
  if (type === 'integer' || type === 'number') {
    const range = [minimum !== undefined ? `>= ${minimum}` : '', maximum !== undefined ? `<= ${maximum}` : '']
    return `must be ${type === 'integer' ? 'an integer' : 'a number'}${range.some(Boolean) ? ` ${range.filter(Boolean).join(' and ')}` : ''}`
  }
  if (type === 'boolean') return 'must be true or false'
  if (pattern) return `must match ${pattern}`
  return first?.message ?? 'is invalid'
}
