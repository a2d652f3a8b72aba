import { Type } from 'typebox'
import { describe, expect, it } from 'vitest'
import { ConfigError, developmentOnlyDefault, loadConfig, ownStoresEnv, serviceEnv } from '../src/config.ts'
import { plaintextEngines } from '../src/engine-transport.ts'

const schema = serviceEnv({ JWT_TTL_MINUTES: Type.Integer({ minimum: 15, maximum: 60, default: 15 }) })
const minimal = {
  PORT: '3001',
  DATABASE_URL: 'postgres://u:p@h:5432/auth',
  REDIS_URL: 'redis://127.0.0.1:6379',
}

describe('loadConfig', () => {
  it('when the environment holds valid values, then they are converted and defaults filled in', () => {
    const config = loadConfig(schema, {
      ...minimal,
      NODE_ENV: 'development',
      CONSUL_REGISTER: 'false',
      JWT_TTL_MINUTES: '30',
    })
    expect(config).toMatchObject({
      PORT: 3001,
      NODE_ENV: 'development',
      LOG_LEVEL: 'info',
      CONSUL_REGISTER: false,
      JWT_TTL_MINUTES: 30,
      RATE_LIMIT_MAX: 300,
    })
  })

  it('when variables are missing or bad, then one error names every one of them, without echoing secrets', () => {
    let error: unknown
    try {
      loadConfig(schema, {
        PORT: 'eighty',
        DATABASE_URL: 'mysql://u:secretpw@h/db',
        LOG_LEVEL: 'loud',
        JWT_TTL_MINUTES: '5',
      })
    } catch (caught) {
      error = caught
    }
    expect(error).toBeInstanceOf(ConfigError)
    const message = (error as Error).message
    expect(message).toContain('REDIS_URL: required but not set')
    expect(message).toContain("PORT: must be an integer >= 0 and <= 65535 (got 'eighty')")
    expect(message).toContain('DATABASE_URL')
    expect(message).not.toContain('secretpw')
    expect(message).toContain(
      "LOG_LEVEL: must be one of fatal, error, warn, info, debug, trace, silent (got 'loud')",
    )
    expect(message).toContain("JWT_TTL_MINUTES: must be an integer >= 15 and <= 60 (got '5')")
  })
})

describe("a service's Kafka TLS and SASL variables", () => {
  it('when they are given, then they are read as the Kafka client takes them: the flag a boolean, the rest as given', () => {
    const config = loadConfig(schema, {
      ...minimal,
      NODE_ENV: 'test',
      KAFKA_TLS: 'true',
      KAFKA_TLS_CA: '/etc/meridian/kafka-ca.pem',
      KAFKA_SASL_MECHANISM: 'scram-sha-512',
      KAFKA_SASL_USERNAME: 'auth',
      KAFKA_SASL_PASSWORD: 'a-password',
    })
    expect(config).toMatchObject({
      KAFKA_TLS: true,
      KAFKA_TLS_CA: '/etc/meridian/kafka-ca.pem',
      KAFKA_SASL_MECHANISM: 'scram-sha-512',
      KAFKA_SASL_USERNAME: 'auth',
    })
    // unset: a plaintext broker without authentication
    expect(loadConfig(schema, { ...minimal, NODE_ENV: 'test' })).not.toHaveProperty('KAFKA_TLS')
  })

  it('when they are bad, then each is named, an unknown mechanism with the ones there are, and no password is shown', () => {
    let message = ''
    try {
      loadConfig(schema, {
        ...minimal,
        NODE_ENV: 'test',
        KAFKA_TLS: 'yes',
        KAFKA_TLS_CERT: `/${'c'.repeat(5000)}`,
        KAFKA_SASL_MECHANISM: 'gssapi',
        KAFKA_SASL_PASSWORD: `secretpw${'x'.repeat(2000)}`,
      })
    } catch (error) {
      expect(error).toBeInstanceOf(ConfigError)
      message = (error as Error).message
    }
    expect(message).toContain("KAFKA_TLS: must be true or false (got 'yes')")
    expect(message).toContain('KAFKA_TLS_CERT')
    expect(message).toContain(
      "KAFKA_SASL_MECHANISM: must be one of scram-sha-512, scram-sha-256, plain (got 'gssapi')",
    )
    expect(message).toContain('KAFKA_SASL_PASSWORD')
    expect(message).not.toContain('secretpw')
  })
})

/** The message of the ConfigError `load` throws. */
function refusal(load: () => unknown): string {
  try {
    load()
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError)
    return (error as ConfigError).message
  }
  throw new Error('the configuration was accepted')
}

describe('loadConfig: production and the development-only defaults', () => {
  const storesSchema = serviceEnv({
    ...ownStoresEnv({ port: 3004, database: 'inventory' }),
    PROVIDER_URL: Type.String({ ...developmentOnlyDefault('http://127.0.0.1:3099') }),
  })
  const developmentValues = {
    SERVICE_CREDENTIAL: 'insecure-development-service-credential-0001',
    DATABASE_URL: 'postgres://postgres:postgres@127.0.0.1:5432/inventory',
    PROVIDER_URL: 'http://127.0.0.1:3099',
  }
  const realValues = {
    SERVICE_CREDENTIAL: 'a-real-service-credential-of-the-deployment-0001',
    DATABASE_URL: 'postgres://inventory:s3cret-pw@db.internal:5432/inventory',
    PROVIDER_URL: 'https://provider.example.com',
    // these tests are about the development defaults; the engines' transport has its own below
    ENGINES_PLAINTEXT_ALLOWED: 'true',
  }

  it('when NODE_ENV is not set and every development default is replaced, then the service runs as production', () => {
    expect(loadConfig(storesSchema, realValues).NODE_ENV).toBe('production')
  })

  it('when NODE_ENV is not set and development defaults are left, then the start is refused naming each, echoing none', () => {
    const message = refusal(() => loadConfig(storesSchema, {}))
    for (const name of Object.keys(developmentValues)) {
      expect(message).toContain(`${name}: must be set in production (its default is for development only)`)
    }
    for (const value of Object.values(developmentValues)) expect(message).not.toContain(value)
  })

  it('when production is told one development default at a time (left unset or set to it), then that one is refused', () => {
    for (const [name, value] of Object.entries(developmentValues)) {
      for (const env of [
        { ...realValues, NODE_ENV: 'production', [name]: value },
        Object.fromEntries(
          Object.entries({ ...realValues, NODE_ENV: 'production' }).filter(([key]) => key !== name),
        ),
      ]) {
        const message = refusal(() => loadConfig(storesSchema, env))
        expect(message, name).toBe(
          `invalid configuration:\n  - ${name}: must be set in production (its default is for development only)`,
        )
      }
    }
  })

  it('when production keeps the public credential beside a real one (a rotation away from it), then it is refused', () => {
    const message = refusal(() =>
      loadConfig(storesSchema, {
        ...realValues,
        SERVICE_CREDENTIAL: `${realValues.SERVICE_CREDENTIAL},${developmentValues.SERVICE_CREDENTIAL}`,
      }),
    )
    expect(message).toContain('SERVICE_CREDENTIAL: must be set in production')
  })

  it('when development or test use the defaults, then they are accepted', () => {
    for (const NODE_ENV of ['development', 'test']) {
      expect(loadConfig(storesSchema, { NODE_ENV })).toMatchObject({ NODE_ENV, ...developmentValues })
    }
  })

  it('when SERVICE_CREDENTIAL is too short, has white space or more than four entries, then refused without its value', () => {
    const long = (tag: string) => `${tag}-${'x'.repeat(40)}`
    for (const credential of [
      'short-credential',
      `${long('a')}, ${long('b')}`,
      `${long('a')},`,
      [long('a'), long('b'), long('c'), long('d'), long('e')].join(','),
    ]) {
      const message = refusal(() =>
        loadConfig(storesSchema, { NODE_ENV: 'test', SERVICE_CREDENTIAL: credential }),
      )
      expect(message, credential).toContain(
        'SERVICE_CREDENTIAL: must be one to four comma-separated credentials of at least 32 characters, without white space',
      )
      expect(message, credential).not.toContain(credential.slice(0, 10))
    }
    const rotated = [long('a'), long('b'), long('c'), long('d')].join(',')
    expect(
      loadConfig(storesSchema, { NODE_ENV: 'test', SERVICE_CREDENTIAL: rotated }).SERVICE_CREDENTIAL,
    ).toBe(rotated)
  })

  it('when a schema has no NODE_ENV (a command, not a service), then its development defaults are not judged', () => {
    const command = Type.Object({ DATABASE_URL: ownStoresEnv({ port: 1, database: 'auth' }).DATABASE_URL })
    expect(loadConfig(command, {}).DATABASE_URL).toBe('postgres://postgres:postgres@127.0.0.1:5432/auth')
  })
})

describe('loadConfig: production and engines reached in plaintext', () => {
  const storesSchema = serviceEnv({ ...ownStoresEnv({ port: 3004, database: 'inventory' }) })
  const secrets = {
    SERVICE_CREDENTIAL: 'a-real-service-credential-of-the-deployment-0001',
    DATABASE_URL: 'postgres://inventory:s3cret-pw@db.internal:5432/inventory',
  }

  it('when production reaches its engines in plaintext, then the start is refused naming each engine and the way out', () => {
    const message = refusal(() => loadConfig(storesSchema, { ...secrets, NODE_ENV: 'production' }))
    expect(message).toContain('DATABASE_URL: sslmode is not set: PostgreSQL needs sslmode=verify-full')
    expect(message).toContain('REDIS_URL: redis:// is plaintext')
    expect(message).toContain("CONSUL_HTTP_ADDR: not https://: Consul's HTTP API needs TLS")
    expect(message).toContain('KAFKA_TLS: not true')
    expect(message).toContain('ENGINES_PLAINTEXT_ALLOWED=true allows them')
    // the database URL's password is never echoed
    expect(message).not.toContain('s3cret-pw')
  })

  it('when ENGINES_PLAINTEXT_ALLOWED is true, then production starts on plaintext engines', () => {
    expect(
      loadConfig(storesSchema, { ...secrets, NODE_ENV: 'production', ENGINES_PLAINTEXT_ALLOWED: 'true' }),
    ).toMatchObject({ NODE_ENV: 'production', ENGINES_PLAINTEXT_ALLOWED: true })
  })

  it('when development or test reach plaintext engines, then nothing is refused', () => {
    for (const NODE_ENV of ['development', 'test']) {
      expect(loadConfig(storesSchema, { NODE_ENV }).ENGINES_PLAINTEXT_ALLOWED).toBe(false)
    }
  })
})

describe('plaintextEngines: what counts as plaintext or without credentials', () => {
  const secure = {
    DATABASE_URL:
      'postgres://order:pw@db.internal:5432/order?sslmode=verify-full&sslrootcert=/etc/meridian/ca.pem',
    REDIS_URL: 'rediss://order:pw@redis.internal:6380',
    CONSUL_HTTP_ADDR: 'https://consul.internal:8501',
    CONSUL_HTTP_TOKEN: 'a-token',
    KAFKA_BROKERS: 'kafka.internal:9094',
    KAFKA_TLS: true,
    KAFKA_SASL_MECHANISM: 'scram-sha-512',
  }

  it('when every engine is reached over verified TLS with credentials, then none is named', () => {
    expect(plaintextEngines(secure)).toEqual([])
    // a multi-host URL (the primary among three servers), which WHATWG's URL does not parse, is read as well
    const multiHost = 'postgres://order:pw@198.18.0.11:5432,198.18.0.12:5432,198.18.0.13:5432/order'
    expect(
      plaintextEngines({
        ...secure,
        DATABASE_URL: `${multiHost}?target_session_attrs=primary&sslmode=verify-full&sslrootcert=/etc/meridian/ca.pem`,
      }),
    ).toEqual([])
    expect(
      plaintextEngines({
        ...secure,
        DATABASE_URL: `${multiHost}?target_session_attrs=primary&sslmode=require`,
      }),
    ).toEqual([
      expect.objectContaining({ variable: 'DATABASE_URL', reason: expect.stringContaining("'require'") }),
    ])
    expect(plaintextEngines({ ...secure, DATABASE_URL: multiHost })).toEqual([
      expect.objectContaining({ variable: 'DATABASE_URL', reason: expect.stringContaining('not set') }),
    ])
    expect(
      plaintextEngines({
        ...secure,
        DATABASE_URL: `${secure.DATABASE_URL.replace('verify-full', 'verify-ca')}`,
      }),
    ).toEqual([])
    // mutual TLS is Kafka's credential too
    expect(
      plaintextEngines({
        ...secure,
        KAFKA_SASL_MECHANISM: undefined,
        KAFKA_TLS_CERT: '/etc/meridian/order.pem',
      }),
    ).toEqual([])
  })

  it('when one engine falls short, then exactly that one is named', () => {
    const cases: [Partial<typeof secure> & Record<string, unknown>, string][] = [
      [{ DATABASE_URL: 'postgres://order:pw@db:5432/order' }, 'DATABASE_URL'],
      [{ DATABASE_URL: 'postgres://order:pw@db:5432/order?sslmode=require' }, 'DATABASE_URL'],
      [{ DATABASE_URL: 'postgres://order:pw@db:5432/order?sslmode=prefer' }, 'DATABASE_URL'],
      [{ REDIS_URL: 'redis://order:pw@redis:6379' }, 'REDIS_URL'],
      [{ REDIS_URL: 'rediss://redis:6380' }, 'REDIS_URL'],
      [{ CONSUL_HTTP_ADDR: 'http://consul:8500' }, 'CONSUL_HTTP_ADDR'],
      [{ CONSUL_HTTP_ADDR: 'consul:8500' }, 'CONSUL_HTTP_ADDR'],
      [{ CONSUL_HTTP_TOKEN: undefined }, 'CONSUL_HTTP_TOKEN'],
      [{ KAFKA_TLS: false }, 'KAFKA_TLS'],
      [{ KAFKA_SASL_MECHANISM: undefined }, 'KAFKA_SASL_MECHANISM'],
    ]
    for (const [change, variable] of cases) {
      expect(
        plaintextEngines({ ...secure, ...change }).map((engine) => engine.variable),
        JSON.stringify(change),
      ).toEqual([variable])
    }
  })

  it('when a service does not read an engine, then that engine is not judged', () => {
    expect(plaintextEngines({ REDIS_URL: secure.REDIS_URL })).toEqual([])
  })
})
