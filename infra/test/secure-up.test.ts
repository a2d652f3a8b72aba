// `scripts/infra up --secure`, `env` and `env --service` on the machine's secure engines (issue 45), started here on
// free ports and a temporary state folder (MERIDIAN_SECURE_DIR) beside the shared plaintext engines, which this test
// neither starts nor stops: every variable `env` prints is used with the real client of its engine, and a service's
// lines reach its own database, keys and Consul names only. Then the system runner on those engines: the services an
// order needs, started from the administrator's variables, each process given its own credentials (not the
// administrator's, nor ENGINES_PLAINTEXT_ALLOWED); an order placed through the gateway ships. One set of secure engines
// serves both (a set takes about 30 s to start on two cores).
import { randomUUID } from 'node:crypto'
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { kafkaSecurityFromEnv } from '@meridian/kafka-connection'
import { Redis } from 'ioredis'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { consulRequest, consulSettingsFromEnv } from '../src/consul-http.ts'
import { gatewayApi } from '../src/demo/gateway-api.ts'
import { freePort } from '../src/free-port.ts'
import { ensureInfra, ensureSecureInfra, infraEnv, infraStatus } from '../src/index.ts'
import { PidFile } from '../src/native/engine.ts'
import { editPostgresUrl, kafkaClient, postgresClient } from '../src/probes.ts'
import {
  downSecureEngines,
  freeSecurePorts,
  type SecureMachine,
  type SecureMachinePorts,
  securePortsFromEnv,
  standardSecurePorts,
} from '../src/secure/machine.ts'
import { redisTlsFromEnv } from '../src/secure/redis-tls.ts'
import { type MeridianSystem, startSystem, withoutEngineCredentials } from '../src/system/system.ts'
import { eventually } from './eventually.ts'

const dir = mkdtempSync(join(tmpdir(), 'meridian-secure-up-'))
/** The shell's environment without the shared engines' variables, and with the test's state folder. */
const env: NodeJS.ProcessEnv = Object.fromEntries(
  Object.entries({ ...process.env, MERIDIAN_SECURE_DIR: dir }).filter(
    ([name]) =>
      !/^(DATABASE_URL|KAFKA_|CONSUL_|REDIS_|OTEL_|SMTP_URL|MAILPIT_URL)/.test(name) &&
      !name.endsWith('_DATABASE_URL'),
  ),
)
let machine: SecureMachine
let ports: SecureMachinePorts
const redisClients: Redis[] = []
/** What an order to `shipped` needs: the provider of identities, the saga's services, the gateway. */
const services = ['auth', 'order', 'inventory', 'payment', 'shipping', 'gateway']
let system: MeridianSystem | undefined

/** The variables of `export NAME='value'` lines, as a shell's eval would set them. */
function parseExports(text: string): Record<string, string> {
  const variables: Record<string, string> = {}
  for (const line of text.trim().split('\n')) {
    const match = /^export ([A-Z0-9_]+)='(.*)'$/.exec(line)
    if (!match?.[1] || match[2] === undefined) throw new Error(`not an export line: ${line}`)
    variables[match[1]] = match[2].replaceAll(`'\\''`, "'")
  }
  return variables
}

async function sqlAs(url: string, query: string): Promise<string> {
  const sql = postgresClient(url, { max: 1, connect_timeout: 5, onnotice: () => {} })
  try {
    const [row] = await sql.unsafe(query)
    return String(Object.values(row ?? {})[0])
  } finally {
    await sql.end({ timeout: 2 })
  }
}

function redisOf(variables: Record<string, string>): Redis {
  const url = variables.REDIS_URL ?? ''
  const client = new Redis(url, {
    tls: redisTlsFromEnv(url, variables),
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
  })
  client.on('error', () => {})
  redisClients.push(client)
  return client
}

async function refusal(command: Promise<unknown>): Promise<string> {
  try {
    await command
    return ''
  } catch (error) {
    return String((error as Error).message)
  }
}

/** A running process's environment, as the kernel holds it. */
function environmentOf(pid: number): Record<string, string> {
  return Object.fromEntries(
    readFileSync(`/proc/${pid}/environ`, 'utf8')
      .split('\0')
      .filter(Boolean)
      .map((entry) => [entry.slice(0, entry.indexOf('=')), entry.slice(entry.indexOf('=') + 1)]),
  )
}

beforeAll(async () => {
  ports = await freeSecurePorts()
  machine = await ensureSecureInfra({ env, ports })
}, 300_000)

afterAll(async () => {
  for (const client of redisClients) client.disconnect()
  await downSecureEngines(dir)
  rmSync(dir, { recursive: true, force: true })
}, 120_000)

describe('scripts/infra up --secure', () => {
  it('when the engines are up, then one CA serves them all and every secret is in a file only its owner reads', () => {
    expect(machine.caFile).toBe(join(dir, 'ca', 'ca.pem'))
    for (const engine of ['postgres', 'kafka', 'consul', 'redis']) {
      const credentials = join(dir, engine, 'credentials.json')
      expect(statSync(credentials).mode & 0o077).toBe(0)
    }
    expect(statSync(join(dir, 'ca', 'ca-key.pem')).mode & 0o077).toBe(0)
    expect(JSON.parse(readFileSync(join(dir, 'engines.json'), 'utf8')).ports).toEqual(ports)
  })

  it('when status is asked, then the four engines are healthy and shown as secure', async () => {
    const statuses = await infraStatus(env)
    const engines = statuses.filter((status) => status.secure)
    expect(engines.map((status) => status.name).sort()).toEqual(['consul', 'kafka', 'postgres', 'redis'])
    for (const status of engines) expect(status).toMatchObject({ healthy: true, mode: 'native' })
    expect(engines.find((status) => status.name === 'consul')?.endpoint).toBe(
      `https://127.0.0.1:${ports.consul.https}`,
    )
  })

  it('when up --secure runs again, then the running engines are reused with the same credentials', async () => {
    const before = await infraEnv(env)
    const again = await ensureSecureInfra({ env, ports })
    expect(again.caFile).toBe(machine.caFile)
    expect(await infraEnv(env)).toBe(before)
  }, 120_000)

  it('when up --secure is asked on the ports of the running plaintext engines, then it refuses naming scripts/infra down', async () => {
    const other = mkdtempSync(join(tmpdir(), 'meridian-secure-up-other-'))
    try {
      const plaintextRuns = (await infraStatus({ ...env, MERIDIAN_SECURE_DIR: other })).some(
        (status) => status.name === 'postgres' && status.mode === 'native' && status.process !== undefined,
      )
      if (!plaintextRuns) return
      await expect(
        ensureSecureInfra({ env: { ...env, MERIDIAN_SECURE_DIR: other }, ports: standardSecurePorts }),
      ).rejects.toThrow(/plaintext engines run .*scripts\/infra down/)
      expect(existsSync(join(other, 'engines.json'))).toBe(false)
    } finally {
      rmSync(other, { recursive: true, force: true })
    }
  })

  it('when up is asked while secure engines hold its ports, then it refuses naming scripts/infra down', async () => {
    // a state folder that says its Redis runs on the standard ports: this test's own process stands for it (only
    // its pid file and engines.json are read before the refusal; nothing here is ever stopped)
    const other = mkdtempSync(join(tmpdir(), 'meridian-secure-up-standard-'))
    try {
      mkdirSync(join(other, 'redis'))
      new PidFile(join(other, 'redis')).write(process.pid)
      writeFileSync(
        join(other, 'engines.json'),
        JSON.stringify({ host: '127.0.0.1', ports: standardSecurePorts, principals: {} }),
      )
      await expect(ensureInfra({ env: { ...env, MERIDIAN_SECURE_DIR: other } })).rejects.toThrow(
        /the secure engines run \(redis; .*scripts\/infra down/,
      )
    } finally {
      rmSync(other, { recursive: true, force: true })
    }
  })

  it('when MERIDIAN_SECURE_PORTS names some ports, then those change and the others stay standard', () => {
    const chosen = securePortsFromEnv({ MERIDIAN_SECURE_PORTS: 'postgres=15432, consul-serf=18301' })
    expect(chosen).toEqual({
      ...standardSecurePorts,
      postgres: 15432,
      consul: { ...standardSecurePorts.consul, serfLan: 18301 },
    })
    expect(() => securePortsFromEnv({ MERIDIAN_SECURE_PORTS: 'mysql=3306' })).toThrow(/MERIDIAN_SECURE_PORTS/)
  })
})

describe('scripts/infra env on the secure engines', () => {
  it("when the administrator's lines are used, then each engine's real client connects over TLS as its administrator", async () => {
    const admin = parseExports(await infraEnv(env))
    expect(admin.DATABASE_URL).toMatch(/sslmode=verify-full&sslrootcert=/)
    expect(await sqlAs(admin.DATABASE_URL ?? '', 'select current_user')).toBe('postgres')
    expect(
      await sqlAs(admin.DATABASE_URL ?? '', 'select ssl::text from pg_stat_ssl where pid = pg_backend_pid()'),
    ).toBe('true')
    // each service's database variable is its own role, on its own database
    expect(
      await sqlAs(admin.ORDER_DATABASE_URL ?? '', "select current_user || '@' || current_database()"),
    ).toBe('order@orders')

    expect(admin).toMatchObject({
      KAFKA_TLS: 'true',
      KAFKA_SASL_MECHANISM: 'scram-sha-512',
      KAFKA_SASL_USERNAME: 'admin',
    })
    const kafka = kafkaClient(
      admin.KAFKA_BROKERS ?? '',
      'secure-up-test',
      kafkaSecurityFromEnv(admin),
    ).admin()
    await kafka.connect()
    try {
      // up --secure created the declared topics as the administrator
      expect((await kafka.listTopics()).length).toBeGreaterThan(0)
    } finally {
      await kafka.disconnect()
    }

    expect(admin.REDIS_URL).toMatch(/^rediss:\/\/admin:/)
    expect(await redisOf(admin).ping()).toBe('PONG')

    expect(admin.CONSUL_HTTP_ADDR).toBe(`https://127.0.0.1:${ports.consul.https}`)
    expect(admin.CONSUL_CACERT).toBe(machine.caFile)
    const acl = await consulRequest(consulSettingsFromEnv(admin), 'GET', '/v1/acl/tokens')
    expect(acl.status).toBe(200)
    expect(admin.ENGINES_PLAINTEXT_ALLOWED).toBeUndefined()
  })

  it("when order's lines are used, then they reach order's database, keys and Consul names and no other service's", async () => {
    const order = parseExports(await infraEnv(env, { service: 'order' }))
    // nothing of the administrator's, nor of another service's
    const text = JSON.stringify(order)
    const admin = parseExports(await infraEnv(env))
    for (const secret of [
      admin.KAFKA_SASL_PASSWORD,
      admin.CONSUL_HTTP_TOKEN,
      new URL(admin.DATABASE_URL ?? '').password,
    ])
      expect(text).not.toContain(secret)
    expect(order.PAYMENT_DATABASE_URL).toBeUndefined()

    expect(await sqlAs(order.DATABASE_URL ?? '', "select current_user || '@' || current_database()")).toBe(
      'order@orders',
    )
    const payments = editPostgresUrl(order.DATABASE_URL ?? '', { database: 'payments' })
    expect(await refusal(sqlAs(payments, 'select 1'))).toMatch(/permission denied|not permitted/i)

    const kafka = kafkaClient(
      order.KAFKA_BROKERS ?? '',
      'secure-up-order',
      kafkaSecurityFromEnv(order),
    ).admin()
    await kafka.connect()
    await kafka.disconnect()
    const forged: Record<string, string> = { ...order, KAFKA_SASL_PASSWORD: 'x'.repeat(43) }
    const refused = kafkaClient(
      forged.KAFKA_BROKERS ?? '',
      'secure-up-forged',
      kafkaSecurityFromEnv(forged),
    ).admin()
    expect(await refusal(refused.connect())).toMatch(/SASL|authentication/i)

    const redis = redisOf(order)
    expect(await redis.set(`order:secure-up:${randomUUID()}`, '1')).toBe('OK')
    expect(await refusal(redis.set(`payment:secure-up:${randomUUID()}`, '1'))).toMatch(/NOPERM/)

    const consul = consulSettingsFromEnv(order)
    const register = (name: string) =>
      consulRequest(consul, 'PUT', '/v1/agent/service/register', {
        body: { ID: `${name}-${randomUUID()}`, Name: name, Address: '127.0.0.1', Port: 1 },
      })
    expect((await register('order')).status).toBe(200)
    expect((await register('payment')).status).toBe(403)
  })

  it('when a service without a database asks, then it gets no database line; an unknown name is refused', async () => {
    const gateway = parseExports(await infraEnv(env, { service: 'gateway' }))
    expect(gateway.DATABASE_URL).toBeUndefined()
    expect(gateway.REDIS_URL).toMatch(/^rediss:\/\/gateway:/)
    await expect(infraEnv(env, { service: 'nobody' })).rejects.toThrow(/'nobody' is no service/)
  })
})

describe('the system runner on secure engines', () => {
  beforeAll(async () => {
    system = await startSystem({
      prefix: 'secure',
      only: services,
      gatewayPort: await freePort(),
      simulatorPort: 0,
      // the shell's environment without even the plaintext allowance, and the administrator's lines
      baseEnv: { ...withoutEngineCredentials(env), ...machine.adminEnv() },
      log: () => {},
    })
  }, 900_000)

  afterAll(async () => {
    await system?.close()
  }, 180_000)

  it("when the services run, then each process has its own credentials, not the administrator's, and no plaintext allowance", () => {
    const admin = machine.adminEnv()
    for (const name of services) {
      const pid = system?.services[name]?.pid
      expect(pid, name).toBeDefined()
      const given = environmentOf(pid as number)
      expect(given.ENGINES_PLAINTEXT_ALLOWED, name).toBeUndefined()
      for (const secret of [admin.KAFKA_SASL_PASSWORD, admin.CONSUL_HTTP_TOKEN, admin.REDIS_URL]) {
        expect(Object.values(given), name).not.toContain(secret)
      }
      expect(given.KAFKA_SASL_USERNAME, name).toBe(name)
      expect(given.CONSUL_HTTP_TOKEN, name).toBe(machine.serviceEnv(name).CONSUL_HTTP_TOKEN)
      expect(given.CONSUL_HTTP_ADDR, name).toMatch(/^https:\/\//)
      expect(given.REDIS_URL, name).toMatch(new RegExp(`^rediss://${name}:`))
      if (name !== 'gateway') {
        const database = new URL(given.DATABASE_URL ?? '')
        expect(database.username, name).toBe(name)
        // the run's own database, not the standing one of `scripts/infra env --service`
        const runDatabase = new URL(system?.services[name]?.databaseUrl ?? '').pathname
        expect(runDatabase, name).toMatch(/^\/secure_/)
        expect(database.pathname, name).toBe(runDatabase)
        expect(database.searchParams.get('sslmode'), name).toBe('verify-full')
      }
    }
  })

  it('when a customer orders through the gateway, then the order reaches shipped', async () => {
    if (!system?.admin) throw new Error('the run has no administrator')
    // infra's client of the gateway and the provider (the demo seed's), as any client
    const api = gatewayApi(system.gatewayUrl, system.simulatorUrl)
    const login = async (email: string, password: string) =>
      (
        await api.call<{ accessToken: string }>('POST', '/login', {
          body: { email, password },
          expected: [200],
        })
      ).accessToken
    const adminToken = await login(system.admin.email, system.admin.password)
    const email = `customer-${Date.now().toString(36)}@example.com`
    const password = 'a-customer-password-1'
    const customer = await api.call<{ id: string }>('POST', '/api/v1/users', {
      body: { name: 'Secure Customer', email, password },
    })
    const token = await login(email, password)
    const product = await api.call<{ id: string; price: number }>('POST', '/api/v1/products', {
      token: adminToken,
      body: { sku: `secure-${Date.now().toString(36)}`, name: 'Secure product', price: 12.5, stock: 3 },
    })
    const placed = await api.call<{ orderId: string }>('POST', '/api/v1/orders', {
      token,
      body: {
        customerId: customer.id,
        items: [{ productId: product.id, quantity: 1, price: product.price }],
        shippingAddress: { street: '1 Test Street', city: 'Testville', zip: '12345' },
        payment: { token: await api.tokenizeCard('4242424242424242') },
      },
    })
    const status = await eventually(`order ${placed.orderId} shipped`, async () => {
      const order = await api.call<{ status: string }>('GET', `/api/v1/orders/${placed.orderId}`, { token })
      if (['cancelled', 'failed'].includes(order.status))
        throw new Error(`order ${placed.orderId} ended ${order.status}`)
      // delivered comes after shipped: a poll may find it there already
      return ['shipped', 'delivered'].includes(order.status) ? order.status : undefined
    })
    expect(['shipped', 'delivered']).toContain(status)
  })
})
