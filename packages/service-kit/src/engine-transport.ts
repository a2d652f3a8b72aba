// Production reaches its engines encrypted and with credentials: which of a service's engine variables say otherwise.
// loadConfig refuses to start a production service whose configuration names any, unless ENGINES_PLAINTEXT_ALLOWED is
// true (engines on a network the operator trusts: a host's loopback, a private link); the service then says at start,
// in its log, which engines it reaches in plaintext.

/** One engine reached without TLS or without credentials: the variable that says so, and why, in words. */
export interface PlaintextEngine {
  variable: string
  reason: string
}

/** The engine variables of a service's configuration this check reads (each optional: a service reads its own). */
export interface EngineVariables {
  DATABASE_URL?: string | undefined
  REDIS_URL?: string | undefined
  CONSUL_HTTP_ADDR?: string | undefined
  CONSUL_HTTP_TOKEN?: string | undefined
  CONSUL_REGISTER?: boolean | undefined
  KAFKA_BROKERS?: string | undefined
  KAFKA_TLS?: boolean | string | undefined
  KAFKA_SASL_MECHANISM?: string | undefined
  KAFKA_TLS_CERT?: string | undefined
}

/** libpq's sslmode values that verify the server against a CA: the others may talk to anyone, or in plaintext. */
const verifyingSslModes = new Set(['verify-ca', 'verify-full'])

/**
 * A URL's query parameter, read from what follows its `?` (up to a `#`): a multi-host PostgreSQL URL
 * (`postgres://…@h1:5432,h2:5432,h3:5432/order?sslmode=verify-full…`, what a cluster's services are given), which
 * WHATWG's URL refuses to parse, is read too. (The schema's pattern bounded the URL's length already.)
 */
function queryParameter(url: string, name: string): string | undefined {
  const query = /^[^?#]*\?([^#]*)/.exec(url)?.[1]
  return query === undefined ? undefined : (new URLSearchParams(query).get(name) ?? undefined)
}

function hasPassword(url: string): boolean {
  try {
    return new URL(url).password !== ''
  } catch {
    return false
  }
}

const isTrue = (value: boolean | string | undefined): boolean => value === true || value === 'true'

/** Every engine these variables reach without TLS (or without verifying the server), or without credentials. */
export function plaintextEngines(config: EngineVariables): PlaintextEngine[] {
  const found: PlaintextEngine[] = []
  if (config.DATABASE_URL !== undefined) {
    const mode = queryParameter(config.DATABASE_URL, 'sslmode')
    if (!mode || !verifyingSslModes.has(mode)) {
      found.push({
        variable: 'DATABASE_URL',
        reason: `sslmode is ${mode ? `'${mode}'` : 'not set'}: PostgreSQL needs sslmode=verify-full (or verify-ca) with sslrootcert`,
      })
    }
  }
  if (config.REDIS_URL !== undefined) {
    if (!config.REDIS_URL.startsWith('rediss://')) {
      found.push({ variable: 'REDIS_URL', reason: 'redis:// is plaintext: Redis needs rediss:// (TLS)' })
    } else if (!hasPassword(config.REDIS_URL)) {
      found.push({
        variable: 'REDIS_URL',
        reason:
          'no user and password in the URL: Redis needs its ACL user (rediss://user:password@host:port)',
      })
    }
  }
  if (config.CONSUL_HTTP_ADDR !== undefined) {
    if (!/^https:\/\//i.test(config.CONSUL_HTTP_ADDR)) {
      found.push({ variable: 'CONSUL_HTTP_ADDR', reason: "not https://: Consul's HTTP API needs TLS" })
    } else if (!config.CONSUL_HTTP_TOKEN) {
      found.push({ variable: 'CONSUL_HTTP_TOKEN', reason: 'not set: Consul needs an ACL token per service' })
    }
  }
  if (config.KAFKA_BROKERS !== undefined) {
    if (!isTrue(config.KAFKA_TLS)) {
      found.push({
        variable: 'KAFKA_TLS',
        reason: 'not true: Kafka needs TLS (KAFKA_TLS=true, KAFKA_TLS_CA)',
      })
    } else if (!config.KAFKA_SASL_MECHANISM && !config.KAFKA_TLS_CERT) {
      found.push({
        variable: 'KAFKA_SASL_MECHANISM',
        reason: 'no SASL mechanism and no client certificate (KAFKA_TLS_CERT): Kafka needs credentials',
      })
    }
  }
  return found
}

/** loadConfig's problems for a production configuration: one line per plaintext engine, naming the way out. */
export function plaintextEngineProblems(
  config: EngineVariables & { ENGINES_PLAINTEXT_ALLOWED?: boolean },
): string[] {
  if (config.ENGINES_PLAINTEXT_ALLOWED === true) return []
  return plaintextEngines(config).map(
    ({ variable, reason }) =>
      `${variable}: ${reason} (production refuses plaintext engines; ENGINES_PLAINTEXT_ALLOWED=true allows them where the network is trusted)`,
  )
}
