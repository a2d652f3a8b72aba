// The system runner on the machine's secure engines (issue 45): the engines `up --secure` runs, started here on free
// ports and a temporary state folder (not the shared plaintext ones), and the services an order needs started on them
// from the administrator's variables, as `eval "$(scripts/infra env)"` gives them. Each service process is given its
// own credentials, not the administrator's, nor ENGINES_PLAINTEXT_ALLOWED; an order placed through the gateway ships.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { freePort } from '../src/free-port.ts'
import { downSecureEngines, type SecureMachine, upSecureEngines } from '../src/secure/machine.ts'
import { type MeridianSystem, startSystem, withoutEngineCredentials } from '../src/system/system.ts'
import { eventually } from './eventually.ts'

const dir = mkdtempSync(join(tmpdir(), 'meridian-secure-system-'))
/** This process's environment without the shared engines' variables. */
const env: NodeJS.ProcessEnv = Object.fromEntries(
  Object.entries(withoutEngineCredentials({ ...process.env, MERIDIAN_SECURE_DIR: dir })).filter(
    ([name]) => !/^(KAFKA_BROKERS|CONSUL_HTTP_ADDR|OTEL_|SMTP_URL|MAILPIT_URL)/.test(name),
  ),
)
/** What an order to `shipped` needs: the provider of identities, the saga's services, the gateway. */
const services = ['auth', 'order', 'inventory', 'payment', 'shipping', 'gateway']
let machine: SecureMachine
let system: MeridianSystem | undefined

async function freePorts(count: number): Promise<number[]> {
  const found = new Set<number>()
  while (found.size < count) found.add(await freePort())
  return [...found]
}

/**
 * A request through the gateway (as tests/e2e's client makes it: infra's program cannot import that package's files);
 * fails unless it answers `expected`.
 */
async function gateway<Body>(
  method: string,
  path: string,
  init: { token?: string; body?: unknown; expected?: number } = {},
): Promise<Body> {
  const response = await fetch(`${system?.gatewayUrl}${path}`, {
    method,
    headers: {
      ...(init.body === undefined ? {} : { 'content-type': 'application/json' }),
      ...(init.token ? { authorization: `Bearer ${init.token}` } : {}),
    },
    ...(init.body === undefined ? {} : { body: JSON.stringify(init.body) }),
    signal: AbortSignal.timeout(30_000),
  })
  const text = await response.text()
  const expected = init.expected ?? (method === 'POST' ? 201 : 200)
  if (response.status !== expected) throw new Error(`${method} ${path} answered ${response.status}: ${text}`)
  return JSON.parse(text) as Body
}

const login = async (email: string, password: string): Promise<string> =>
  (await gateway<{ accessToken: string }>('POST', '/login', { body: { email, password }, expected: 200 }))
    .accessToken

/** A payment method of a good card at the provider (the simulator, which speaks Stripe's API). */
async function goodCardToken(): Promise<string> {
  const form = new URLSearchParams({
    key: 'pk_test_meridian_secure',
    type: 'card',
    'card[number]': '4242424242424242',
    'card[exp_month]': '12',
    'card[exp_year]': String(new Date().getUTCFullYear() + 2),
    'card[cvc]': '123',
  })
  const answer = await fetch(`${system?.simulatorUrl}/v1/payment_methods`, { method: 'POST', body: form })
  const body = (await answer.json()) as { id?: string }
  if (answer.status !== 200 || !body.id) throw new Error(`the simulator answered ${answer.status}`)
  return body.id
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
  const [postgres, sasl, controller, mtls, https, server, serfLan, redis, gatewayPort] = await freePorts(9)
  machine = await upSecureEngines({
    dir,
    env,
    ports: {
      postgres: postgres as number,
      kafka: { sasl: sasl as number, controller: controller as number, mtls: mtls as number },
      consul: { https: https as number, server: server as number, serfLan: serfLan as number },
      redis: redis as number,
    },
  })
  system = await startSystem({
    prefix: 'secure',
    only: services,
    gatewayPort,
    simulatorPort: 0,
    baseEnv: { ...env, ...machine.adminEnv() },
    log: () => {},
  })
}, 900_000)

afterAll(async () => {
  await system?.close()
  await downSecureEngines(dir)
  rmSync(dir, { recursive: true, force: true })
}, 180_000)

describe('the system runner on secure engines', () => {
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
    const adminToken = await login(system.admin.email, system.admin.password)
    const email = `customer-${Date.now().toString(36)}@example.com`
    const password = 'a-customer-password-1'
    const customer = await gateway<{ id: string }>('POST', '/api/v1/users', {
      body: { name: 'Secure Customer', email, password },
    })
    const token = await login(email, password)
    const product = await gateway<{ id: string; price: number }>('POST', '/api/v1/products', {
      token: adminToken,
      body: { sku: `secure-${Date.now().toString(36)}`, name: 'Secure product', price: 12.5, stock: 3 },
    })
    const placed = await gateway<{ orderId: string }>('POST', '/api/v1/orders', {
      token,
      body: {
        customerId: customer.id,
        items: [{ productId: product.id, quantity: 1, price: product.price }],
        shippingAddress: { street: '1 Test Street', city: 'Testville', zip: '12345' },
        payment: { token: await goodCardToken() },
      },
    })
    const status = await eventually(`order ${placed.orderId} shipped`, async () => {
      const order = await gateway<{ status: string }>('GET', `/api/v1/orders/${placed.orderId}`, { token })
      if (['cancelled', 'failed'].includes(order.status))
        throw new Error(`order ${placed.orderId} ended ${order.status}`)
      // delivered comes after shipped: a poll may find it there already
      return ['shipped', 'delivered'].includes(order.status) ? order.status : undefined
    })
    expect(['shipped', 'delivered']).toContain(status)
  })
})
