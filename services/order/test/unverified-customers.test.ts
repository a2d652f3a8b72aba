// The order limit for customers whose address is not verified (issue 44, point 5), on a real database, Consul and
// Redis: UNVERIFIED_CUSTOMER_ORDER_LIMIT is the largest total such a customer may order for themself (0: none at all,
// unset: no limit), read from what their credential says: a token's `email_verified` claim, a cookie session's record
// (written in the service's Redis as auth's session store writes it), auth's answer about an API key's owner (the
// kit asks auth's stand-in, found in Consul); a refused order is 403 in the error envelope and writes nothing. A
// verified customer, a credential that does not say, and an admin are not limited.
import { randomBytes, randomUUID } from 'node:crypto'
import { authNames, type ProductSummary } from '@meridian/contracts'
import { ConfigError } from '@meridian/service-kit'
import {
  type ApiKeysStandIn,
  accessToken,
  asAdmin,
  expectErrorEnvelope,
  serviceTestEnv,
  startApiKeysStandIn,
  tokenEnv,
} from '@meridian/testkit'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { loadOrderConfig } from '../src/config.ts'
import { buildOrderTestApp, type OrderTestApp } from './support/app.ts'
import { type InventoryStandIn, startInventoryStandIn } from './support/inventory-stand-in.ts'
import { testAddress } from './support/place.ts'

const mug: ProductSummary = { id: randomUUID(), name: 'Blue mug', price: 19.99, available: 100, active: true }

let inventory: InventoryStandIn
let keys: ApiKeysStandIn
beforeAll(async () => {
  inventory = await startInventoryStandIn([mug])
  keys = await startApiKeysStandIn()
})
afterAll(async () => {
  await inventory?.close()
  await keys?.close()
})

/** A customer's token: `email_verified` as given, or left out. */
const customer = (emailVerified?: boolean) => {
  const id = randomUUID()
  const token = accessToken('user', id, emailVerified === undefined ? {} : { emailVerified })
  return { id, headers: { authorization: `Bearer ${token}` } }
}

const saying = (emailVerified?: boolean) => (emailVerified === undefined ? {} : { emailVerified })

/** A customer signed in with a cookie session: its record as auth writes it, `emailVerified` as given or left out. */
async function sessionCustomer(app: OrderTestApp, emailVerified?: boolean) {
  const id = randomUUID()
  const sessionId = randomBytes(32).toString('base64url')
  const record = { userId: id, role: 'user', createdAt: new Date().toISOString(), ...saying(emailVerified) }
  await app.redis.set(`${authNames.sessionKeyPrefix}${sessionId}`, JSON.stringify(record), 'EX', 600)
  return { id, headers: { cookie: `${authNames.sessionCookie}=${sessionId}` } }
}

/** A customer's API key (orders:write), auth answering `emailVerified` about its owner as given or not at all. */
const keyCustomer = (emailVerified?: boolean) => {
  const id = randomUUID()
  const key = keys.keyFor({ scopes: ['orders:write'], role: 'user', subject: id, ...saying(emailVerified) })
  return { id, headers: { [authNames.apiKeyHeader]: key } }
}

const place = (app: OrderTestApp, customerId: string, mugs: number, headers: Record<string, string>) =>
  app.app.inject({
    method: 'POST',
    url: '/api/v1/orders',
    payload: {
      customerId,
      items: [{ productId: mug.id, quantity: mugs, price: 19.99 }],
      shippingAddress: testAddress,
    },
    headers,
  })

const ordersOf = async (app: OrderTestApp, customerId: string) =>
  (await app.sql<{ n: number }[]>`select count(*)::int as n from orders where customer_id = ${customerId}`)[0]
    ?.n

describe('UNVERIFIED_CUSTOMER_ORDER_LIMIT=50', () => {
  let app: OrderTestApp
  beforeAll(async () => {
    app = await buildOrderTestApp({
      ...tokenEnv,
      INVENTORY_SERVICE_NAME: inventory.name,
      AUTH_SERVICE_NAME: keys.name,
      UNVERIFIED_CUSTOMER_ORDER_LIMIT: '50',
    })
  })
  afterAll(async () => {
    await app?.close()
  })

  it('when an unverified customer orders up to the limit, then 201; over it, then 403 naming the limit and nothing is written', async () => {
    const unverified = customer(false)
    expect((await place(app, unverified.id, 2, unverified.headers)).statusCode).toBe(201)
    const over = await place(app, unverified.id, 3, unverified.headers)
    const error = expectErrorEnvelope(over, 403, 'FORBIDDEN')
    expect(error.message).toBe(
      'Until your e-mail address is confirmed, an order may total at most 50 (use the link mailed to it)',
    )
    expect(await ordersOf(app, unverified.id)).toBe(1)
  })

  it('when a verified customer, a token that does not say, or an admin for an unverified customer orders over it, then 201', async () => {
    const verified = customer(true)
    expect((await place(app, verified.id, 3, verified.headers)).statusCode).toBe(201)
    const unsaid = customer()
    expect((await place(app, unsaid.id, 3, unsaid.headers)).statusCode).toBe(201)
    const unverified = customer(false)
    expect((await place(app, unverified.id, 3, asAdmin())).statusCode).toBe(201)
  })

  it('when an unverified customer orders over it with a cookie session or an API key, then 403 naming the limit and nothing is written', async () => {
    for (const [credential, unverified] of [
      ['cookie session', await sessionCustomer(app, false)],
      ['API key', keyCustomer(false)],
    ] as const) {
      const over = await place(app, unverified.id, 3, unverified.headers)
      const error = expectErrorEnvelope(over, 403, 'FORBIDDEN', { context: credential })
      expect(error.message, credential).toBe(
        'Until your e-mail address is confirmed, an order may total at most 50 (use the link mailed to it)',
      )
      expect(await ordersOf(app, unverified.id), credential).toBe(0)
      expect((await place(app, unverified.id, 2, unverified.headers)).statusCode, credential).toBe(201)
    }
  })

  it('when a verified customer orders over it with a cookie session or an API key, or with one that does not say (a session record from before it said), then 201', async () => {
    for (const [credential, verified] of [
      ['verified cookie session', await sessionCustomer(app, true)],
      ['verified API key', keyCustomer(true)],
      ['cookie session that does not say', await sessionCustomer(app)],
    ] as const) {
      expect((await place(app, verified.id, 3, verified.headers)).statusCode, credential).toBe(201)
      expect(await ordersOf(app, verified.id), credential).toBe(1)
    }
  })
})

describe('UNVERIFIED_CUSTOMER_ORDER_LIMIT=0', () => {
  let app: OrderTestApp
  beforeAll(async () => {
    app = await buildOrderTestApp({
      ...tokenEnv,
      INVENTORY_SERVICE_NAME: inventory.name,
      UNVERIFIED_CUSTOMER_ORDER_LIMIT: '0',
    })
  })
  afterAll(async () => {
    await app?.close()
  })

  it('when an unverified customer orders anything, then 403 and nothing is written; a verified one orders', async () => {
    const unverified = customer(false)
    const refused = await place(app, unverified.id, 1, unverified.headers)
    expect(expectErrorEnvelope(refused, 403, 'FORBIDDEN').message).toBe(
      'Confirm your e-mail address before placing an order (use the link mailed to it)',
    )
    expect(await ordersOf(app, unverified.id)).toBe(0)
    const verified = customer(true)
    expect((await place(app, verified.id, 1, verified.headers)).statusCode).toBe(201)
  })
})

describe('the limit as configured', () => {
  it('when it is unset, then there is none; when it is no amount of money, then the service refuses to start', () => {
    const env = { ...serviceTestEnv(), ...tokenEnv }
    expect(loadOrderConfig(env).UNVERIFIED_CUSTOMER_ORDER_LIMIT).toBeUndefined()
    expect(
      loadOrderConfig({ ...env, UNVERIFIED_CUSTOMER_ORDER_LIMIT: '12.5' }).UNVERIFIED_CUSTOMER_ORDER_LIMIT,
    ).toBe(12.5)
    for (const wrong of ['0.001', '-1', 'lots']) {
      expect(() => loadOrderConfig({ ...env, UNVERIFIED_CUSTOMER_ORDER_LIMIT: wrong }), wrong).toThrow(
        ConfigError,
      )
    }
  })
})
