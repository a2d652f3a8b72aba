// Shipments over HTTP on a real database and Redis: reading one in its hypermedia form (the customer or an admin),
// the list (an admin's all, a customer's own), delivering (an admin, or a carrier with its key) with its
// shipment.delivered in the outbox, the /api alias, the OpenAPI document; and the carriers' keys of the config.
import { randomUUID } from 'node:crypto'
import { ConfigError } from '@meridian/service-kit'
import { asAdmin, asUser, expectErrorEnvelope, tokenEnv } from '@meridian/testkit'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { carrierKeysOf, loadShippingConfig } from '../src/config.ts'
import { carrierKeyMatcher } from '../src/routes/shipments/access.ts'
import { buildShippingTestApp, type ShippingTestApp } from './support/app.ts'
import { createTestShipment, outboxOf, testAddress } from './support/shipments.ts'

const carrierKey = `carrier-key-${randomUUID()}`
const otherCarrierKey = `other-carrier-${randomUUID()}`

let shipping: ShippingTestApp

beforeAll(async () => {
  shipping = await buildShippingTestApp({
    ...tokenEnv,
    SHIPPING_CARRIER_KEYS: ` ${otherCarrierKey} , ${carrierKey}`,
  })
})

afterAll(async () => {
  await shipping?.close()
})

type Headers = Record<string, string>
const get = (url: string, headers: Headers) => shipping.app.inject({ method: 'GET', url, headers })
const deliver = (id: string, headers: Headers, prefix = '/api/v1') =>
  shipping.app.inject({ method: 'POST', url: `${prefix}/shipments/${id}/deliver`, headers })
const asCarrier = (key = carrierKey) => ({ 'x-carrier-key': key })

async function eventTypesOf(orderId: string): Promise<string[]> {
  return (await outboxOf(shipping, orderId)).map((row) => row.eventType)
}

describe('GET /api/v1/shipments/{shipmentId}', () => {
  it('when the customer reads their shipment, then 200 with its details and links (self, order, deliver) (/api/v1 and /api)', async () => {
    const customerId = randomUUID()
    const shipment = await createTestShipment(shipping, { customerId })
    for (const path of [`/api/v1/shipments/${shipment.id}`, `/api/shipments/${shipment.id}`]) {
      const answer = await get(path, asUser(customerId))
      expect(answer.statusCode).toBe(200)
      expect(answer.json()).toEqual({
        id: shipment.id,
        orderId: shipment.orderId,
        customerId,
        status: 'created',
        carrier: 'meridian-post',
        trackingNumber: expect.stringMatching(/^MP[0-9A-Z]{12}$/),
        shippingAddress: testAddress,
        items: [{ productId: expect.any(String), quantity: 2 }],
        createdAt: expect.any(String),
        _links: {
          self: { href: `/api/v1/shipments/${shipment.id}`, method: 'GET' },
          order: { href: `/api/v1/orders/${shipment.orderId}`, method: 'GET' },
          deliver: { href: `/api/v1/shipments/${shipment.id}/deliver`, method: 'POST' },
        },
      })
      expect(answer.json().trackingNumber).toBe(shipment.trackingNumber)
    }
  })

  it('when an admin reads it, then 200; a shipment whose event had no customer or address has neither field', async () => {
    const shipment = await createTestShipment(shipping)
    expect((await get(`/api/v1/shipments/${shipment.id}`, asAdmin())).json().id).toBe(shipment.id)

    const anonymous = await createTestShipment(shipping, {
      customerId: undefined,
      shippingAddress: undefined,
    })
    const answer = await get(`/api/v1/shipments/${anonymous.id}`, asAdmin())
    expect(answer.statusCode).toBe(200)
    expect(answer.json()).not.toHaveProperty('shippingAddress')
    expect(answer.json()).not.toHaveProperty('customerId')
  })

  it('when another customer reads it, then 404 (its existence is not told); unknown is 404; no credentials 401; a bad id 422', async () => {
    const shipment = await createTestShipment(shipping)
    expectErrorEnvelope(await get(`/api/v1/shipments/${shipment.id}`, asUser()), 404, 'NOT_FOUND')
    expectErrorEnvelope(await get(`/api/v1/shipments/${randomUUID()}`, asAdmin()), 404, 'NOT_FOUND')
    expectErrorEnvelope(await get(`/api/v1/shipments/${shipment.id}`, {}), 401, 'UNAUTHORIZED')
    const bad = expectErrorEnvelope(
      await get('/api/v1/shipments/not-a-uuid', asAdmin()),
      422,
      'VALIDATION_ERROR',
    )
    expect(bad.details).toEqual([expect.objectContaining({ field: 'shipmentId' })])
    // a shipment without a customer is only an admin's to read
    const anonymous = await createTestShipment(shipping, { customerId: undefined })
    expectErrorEnvelope(await get(`/api/v1/shipments/${anonymous.id}`, asUser()), 404, 'NOT_FOUND')
  })
})

describe('GET /api/v1/shipments', () => {
  it('when an admin filters by orderId, then the envelope holds that order’s one shipment', async () => {
    const shipment = await createTestShipment(shipping)
    await createTestShipment(shipping)
    const answer = await get(`/api/v1/shipments?orderId=${shipment.orderId}`, asAdmin())
    expect(answer.statusCode).toBe(200)
    const envelope = answer.json()
    expect(envelope.data.map((each: { id: string }) => each.id)).toEqual([shipment.id])
    expect(envelope.meta).toEqual({ page: 1, limit: 20, total: 1, totalPages: 1 })
    expect(envelope.links).toEqual({
      self: `/api/v1/shipments?orderId=${shipment.orderId}&page=1&limit=20`,
      first: `/api/v1/shipments?orderId=${shipment.orderId}&page=1&limit=20`,
      prev: null,
      next: null,
      last: `/api/v1/shipments?orderId=${shipment.orderId}&page=1&limit=20`,
    })
    expect(envelope.data[0]._links.self).toEqual({ href: `/api/v1/shipments/${shipment.id}`, method: 'GET' })
  })

  it('when a customer lists, then only their own shipments, newest first, paged; filters never reach another customer’s', async () => {
    const customerId = randomUUID()
    const first = await createTestShipment(shipping, { customerId })
    const second = await createTestShipment(shipping, { customerId })
    const someoneElses = await createTestShipment(shipping)

    const all = (await get('/api/v1/shipments', asUser(customerId))).json()
    expect(all.data.map((each: { id: string }) => each.id)).toEqual([second.id, first.id])
    expect(all.meta.total).toBe(2)

    const page2 = (await get('/api/shipments?limit=1&page=2', asUser(customerId))).json()
    expect(page2.data.map((each: { id: string }) => each.id)).toEqual([first.id])
    expect(page2.links.prev).toBe('/api/shipments?page=1&limit=1')

    const oldestFirst = (await get('/api/v1/shipments?sort=createdAt:asc', asUser(customerId))).json()
    expect(oldestFirst.data.map((each: { id: string }) => each.id)).toEqual([first.id, second.id])

    const theirs = (await get(`/api/v1/shipments?orderId=${someoneElses.orderId}`, asUser(customerId))).json()
    expect(theirs).toMatchObject({ data: [], meta: { total: 0 } })
  })

  it('when filtered by status, then only shipments in it; bad filters and unknown parameters are 422; no credentials 401', async () => {
    const customerId = randomUUID()
    const delivered = await createTestShipment(shipping, { customerId })
    const created = await createTestShipment(shipping, { customerId })
    expect((await deliver(delivered.id, asAdmin())).statusCode).toBe(200)

    const byStatus = async (status: string) =>
      (await get(`/api/v1/shipments?status=${status}`, asUser(customerId)))
        .json()
        .data.map((each: { id: string }) => each.id)
    expect(await byStatus('delivered')).toEqual([delivered.id])
    expect(await byStatus('created')).toEqual([created.id])

    for (const query of ['status=lost', 'orderId=nope', `customerId=${randomUUID()}`, 'sort=carrier:asc']) {
      expectErrorEnvelope(await get(`/api/v1/shipments?${query}`, asAdmin()), 422, 'VALIDATION_ERROR', {
        context: query,
      })
    }
    expectErrorEnvelope(await get('/api/v1/shipments', {}), 401, 'UNAUTHORIZED')
  })
})

describe('POST /api/v1/shipments/{shipmentId}/deliver', () => {
  it('when an admin delivers, then 200 delivered and shipment.delivered in the outbox; again, the same answer and no second event', async () => {
    const shipment = await createTestShipment(shipping)
    const answer = await deliver(shipment.id, asAdmin())
    expect(answer.statusCode).toBe(200)
    const delivered = answer.json()
    expect(delivered).toMatchObject({
      id: shipment.id,
      orderId: shipment.orderId,
      status: 'delivered',
      deliveredAt: expect.any(String),
      _links: {
        self: { href: `/api/v1/shipments/${shipment.id}`, method: 'GET' },
        order: { href: `/api/v1/orders/${shipment.orderId}`, method: 'GET' },
      },
    })
    expect(delivered._links).not.toHaveProperty('deliver')

    const events = await outboxOf(shipping, shipment.orderId)
    expect(events.map((row) => row.eventType)).toEqual(['shipment.created', 'shipment.delivered'])
    expect(events[1]?.payload).toMatchObject({
      type: 'shipment.delivered',
      source: 'shipping',
      data: { orderId: shipment.orderId, shipmentId: shipment.id, deliveredAt: delivered.deliveredAt },
    })

    const again = await deliver(shipment.id, asAdmin(), '/api')
    expect(again.statusCode).toBe(200)
    expect(again.json()).toEqual(delivered)
    expect(await eventTypesOf(shipment.orderId)).toEqual(['shipment.created', 'shipment.delivered'])
    expect((await get(`/api/v1/shipments/${shipment.id}`, asAdmin())).json()).toEqual(delivered)
  })

  it('when a carrier sends a right key, then 200 delivered; a wrong key is 401 and nothing changes', async () => {
    const shipment = await createTestShipment(shipping)
    expectErrorEnvelope(await deliver(shipment.id, asCarrier(`${carrierKey}x`)), 401, 'UNAUTHORIZED')
    expectErrorEnvelope(await deliver(shipment.id, asCarrier('')), 401, 'UNAUTHORIZED')
    // a wrong key is refused even beside an admin's token: the key was meant as the credential
    expectErrorEnvelope(
      await deliver(shipment.id, { ...asAdmin(), ...asCarrier('wrong-key-of-some-length') }),
      401,
      'UNAUTHORIZED',
    )
    expect(await eventTypesOf(shipment.orderId)).toEqual(['shipment.created'])

    const answer = await deliver(shipment.id, asCarrier())
    expect(answer.statusCode).toBe(200)
    expect(answer.json()).toMatchObject({ id: shipment.id, status: 'delivered' })
    expect(await eventTypesOf(shipment.orderId)).toEqual(['shipment.created', 'shipment.delivered'])
    // the other configured key is a carrier's too
    const another = await createTestShipment(shipping)
    expect((await deliver(another.id, asCarrier(otherCarrierKey))).statusCode).toBe(200)
  })

  it('when a user who is not an admin delivers (the customer too), then 403; no credentials 401; nothing changes', async () => {
    const customerId = randomUUID()
    const shipment = await createTestShipment(shipping, { customerId })
    expectErrorEnvelope(await deliver(shipment.id, asUser(customerId)), 403, 'FORBIDDEN')
    expectErrorEnvelope(await deliver(shipment.id, asUser()), 403, 'FORBIDDEN')
    expectErrorEnvelope(await deliver(shipment.id, {}), 401, 'UNAUTHORIZED')
    // credentials first: without them even a bad id is 401
    expectErrorEnvelope(await deliver('not-a-uuid', {}), 401, 'UNAUTHORIZED')
    expect((await get(`/api/v1/shipments/${shipment.id}`, asAdmin())).json().status).toBe('created')
    expect(await eventTypesOf(shipment.orderId)).toEqual(['shipment.created'])
  })

  it('when the shipment is unknown, then 404; a bad id is 422 (admin or carrier)', async () => {
    expectErrorEnvelope(await deliver(randomUUID(), asAdmin()), 404, 'NOT_FOUND')
    expectErrorEnvelope(await deliver(randomUUID(), asCarrier()), 404, 'NOT_FOUND')
    const bad = expectErrorEnvelope(await deliver('not-a-uuid', asCarrier()), 422, 'VALIDATION_ERROR')
    expect(bad.details).toEqual([expect.objectContaining({ field: 'shipmentId' })])
    expectErrorEnvelope(await deliver('not-a-uuid', asAdmin()), 422, 'VALIDATION_ERROR')
  })

  it('when a carrier delivers, then its key is in no log line (the request lines show it redacted)', async () => {
    const shipment = await createTestShipment(shipping)
    expect((await deliver(shipment.id, asCarrier())).statusCode).toBe(200)
    expectErrorEnvelope(await deliver(shipment.id, asCarrier(`${carrierKey}-wrong`)), 401, 'UNAUTHORIZED')
    expect(shipping.logs.some((line) => line.msg === 'incoming request')).toBe(true)
    expect(JSON.stringify(shipping.logs)).not.toContain(carrierKey)
  })
})

describe('the OpenAPI document', () => {
  it('when read, then the three shipment routes are in it with their error statuses, the /api alias is not', async () => {
    const document = (await get('/docs/json', {})).json()
    const paths = Object.keys(document.paths)
    expect(paths).toEqual(
      expect.arrayContaining([
        '/api/v1/shipments',
        '/api/v1/shipments/{shipmentId}',
        '/api/v1/shipments/{shipmentId}/deliver',
      ]),
    )
    expect(paths.filter((path) => path.startsWith('/api/shipments'))).toEqual([])
    const statuses = (path: string, method: string) =>
      Object.keys(document.paths[path][method].responses).filter((status) =>
        /^(200|40[134]|422)$/.test(status),
      )
    // 403: a credential limited to scopes without shipments:read (the chassis' INSUFFICIENT_SCOPE)
    expect(statuses('/api/v1/shipments', 'get')).toEqual(['200', '401', '403', '422'])
    expect(statuses('/api/v1/shipments/{shipmentId}', 'get').sort()).toEqual([
      '200',
      '401',
      '403',
      '404',
      '422',
    ])
    expect(statuses('/api/v1/shipments/{shipmentId}/deliver', 'post')).toEqual([
      '200',
      '401',
      '403',
      '404',
      '422',
    ])
    const parameters = document.paths['/api/v1/shipments/{shipmentId}/deliver'].post.parameters
    expect(parameters).toEqual(
      expect.arrayContaining([expect.objectContaining({ in: 'header', name: 'x-carrier-key' })]),
    )
  })
})

describe('the carriers’ keys', () => {
  it('when configured, then each trimmed key is one; none by default; a key under 16 characters is a ConfigError', () => {
    expect(
      carrierKeysOf({ SHIPPING_CARRIER_KEYS: ' a-key-of-16-chars , b-key-of-16-chars,a-key-of-16-chars' }),
    ).toEqual(['a-key-of-16-chars', 'b-key-of-16-chars'])
    const env = {
      NODE_ENV: 'test',
      DATABASE_URL: 'postgres://localhost/shipping',
      REDIS_URL: 'redis://localhost',
    }
    expect(carrierKeysOf(loadShippingConfig(env))).toEqual([])
    expect(() => loadShippingConfig({ ...env, SHIPPING_CARRIER_KEYS: 'short' })).toThrow(ConfigError)
    // the bad value is a secret: the message names the variable, never the value
    expect(() => loadShippingConfig({ ...env, SHIPPING_CARRIER_KEYS: 'short,secret-value' })).toThrow(
      /^(?![\s\S]*secret-value)[\s\S]*SHIPPING_CARRIER_KEYS/,
    )
  })

  it('when matched, then only a configured key matches; with none configured nothing does', () => {
    const matches = carrierKeyMatcher(['first-key-0123456789', 'second-key-0123456789'])
    expect(matches('second-key-0123456789')).toBe(true)
    expect(matches('second-key-012345678')).toBe(false)
    expect(matches('')).toBe(false)
    expect(carrierKeyMatcher([])('first-key-0123456789')).toBe(false)
  })
})
