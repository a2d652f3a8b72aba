// Returns at the order service: asking for one (who may, which order, how much of each line), reading them, the
// goods received (an admin or a carrier) and rejected, and the return's process on the module: the stock asked back,
// then exactly the returned lines refunded under the return's own key, completed — never read by the order saga as
// a compensation; a declined refund retried then escalated to operators; deadlines; two returns racing for the rest.
import { randomUUID } from 'node:crypto'
import type { EventType, ProcessStamp, ProductSummary } from '@meridian/contracts'
import { transaction } from '@meridian/db'
import { type CatalogueEvent, createEvent } from '@meridian/events'
import { asAdmin, asUser, eventually, expectErrorEnvelope, tokenEnv } from '@meridian/testkit'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { loadOrderConfig } from '../src/config.ts'
import type { SagaFact } from '../src/domain/saga-machine.ts'
import { buildOrderTestApp, type OrderTestApp } from './support/app.ts'
import { type InventoryStandIn, startInventoryStandIn } from './support/inventory-stand-in.ts'
import { testAddress } from './support/place.ts'

const mug: ProductSummary = { id: randomUUID(), name: 'Blue mug', price: 19.99, available: 100, active: true }
const plate: ProductSummary = { id: randomUUID(), name: 'Plate', price: 5.5, available: 100, active: true }
const carrierKey = 'returns-carrier-key-0123456789'
/** another carrier of the deployment: its key is right, but for its own returns only */
const otherCarrierKey = 'parcel-co-carrier-key-0123456789'
const carriersSetting = `meridian-post=${carrierKey}, parcel-co=${otherCarrierKey}`

let inventory: InventoryStandIn
let order: OrderTestApp
/** deadlines of 100 ms, two attempts, fired by the tests themselves */
let hurried: OrderTestApp

beforeAll(async () => {
  inventory = await startInventoryStandIn([mug, plate])
  const env = { ...tokenEnv, INVENTORY_SERVICE_NAME: inventory.name, RETURNS_CARRIER_KEYS: carriersSetting }
  order = await buildOrderTestApp({ ...env, RETURN_STEP_ATTEMPTS: '2' })
  hurried = await buildOrderTestApp({
    ...env,
    RETURN_STEP_TIMEOUT_MS: '100',
    RETURN_STEP_ATTEMPTS: '2',
    SAGA_SWEEP_INTERVAL_MS: '60000',
  })
})

afterAll(async () => {
  await hurried?.close()
  await order?.close()
  await inventory?.close()
})

/** Three mugs and one plate: 3 × 19.99 + 5.50 = 65.47. */
async function placeOrder(app: OrderTestApp, customerId: string): Promise<string> {
  const answer = await app.app.inject({
    method: 'POST',
    url: '/api/v1/orders',
    payload: {
      customerId,
      items: [
        { productId: mug.id, quantity: 3, price: mug.price },
        { productId: plate.id, quantity: 1, price: plate.price },
      ],
      shippingAddress: testAddress,
      payment: { token: 'tok_test_visa' },
    },
    headers: asUser(customerId),
  })
  expect(answer.statusCode, answer.body).toBe(201)
  return answer.json().orderId as string
}

async function applySaga(app: OrderTestApp, orderId: string, fact: SagaFact): Promise<void> {
  await transaction(app.sql, (tx) =>
    app.saga.onEvent(orderId, fact, tx, { eventType: fact.kind, eventId: randomUUID() }),
  )
}

/** An order of `customerId` taken through its saga to shipped. */
async function shippedOrder(app: OrderTestApp = order, customerId = randomUUID()) {
  const orderId = await placeOrder(app, customerId)
  const paymentId = randomUUID()
  await applySaga(app, orderId, { kind: 'payment.processed', paymentId })
  await applySaga(app, orderId, { kind: 'inventory.reserved', reservationId: randomUUID() })
  await applySaga(app, orderId, { kind: 'shipment.created', shipmentId: randomUUID() })
  return { orderId, customerId, paymentId }
}

/**
 * An event delivered as order's consumer delivers it: through the processes' handler, in a transaction; an answer
 * with the stamp its command carried (`answerTo`), as the answering service's consumer sends it back.
 */
async function deliver<Type extends EventType>(
  app: OrderTestApp,
  type: Type,
  data: CatalogueEvent<Type>['data'],
  answerTo?: ProcessStamp,
) {
  const event = createEvent(type, data, { source: 'test' })
  const handler = app.processes.handlers()[type]
  if (!handler) throw new Error(`no handler of ${type}`)
  const consumed = { topic: type, partition: 0, offset: '0', attempt: 1, ...(answerTo ? { answerTo } : {}) }
  await transaction(app.sql, (tx) => handler(event as never, tx, consumed))
}

/** The stamp of the last command a return asked (its restock or its refund), as its answer carries it back. */
async function askedBy(app: OrderTestApp, returnId: string): Promise<ProcessStamp> {
  const [row] = await app.sql<{ stamp: ProcessStamp }[]>`
    select process_command::jsonb as stamp from outbox
    where process_command::jsonb ->> 'type' = 'return' and process_command::jsonb ->> 'key' = ${returnId}
    order by id desc limit 1`
  if (!row) throw new Error(`return ${returnId} asked nothing yet`)
  return row.stamp
}

const requestReturn = (
  app: OrderTestApp,
  orderId: string,
  headers: Record<string, string>,
  payload: object,
  prefix = '/api/v1',
) => app.app.inject({ method: 'POST', url: `${prefix}/orders/${orderId}/returns`, headers, payload })

/** A shipped order of its customer with a return of `items` requested (reason `r`), and the return's id. */
async function returnOfShipped(items: { productId: string; quantity: number }[], app: OrderTestApp = order) {
  const shipped = await shippedOrder(app)
  const { returnId } = (
    await requestReturn(app, shipped.orderId, asUser(shipped.customerId), { items, reason: 'r' })
  ).json() as { returnId: string }
  return { ...shipped, returnId }
}

async function outboxOf(app: OrderTestApp, aggregateId: string) {
  return app.sql<{ eventType: string; payload: { data: Record<string, unknown> } }[]>`
    select event_type, payload from outbox where aggregate_id = ${aggregateId} order by id`
}
/** The events that name the return: its news and its commands (a restock names it as its restockId). */
const eventsOfReturn = async (app: OrderTestApp, orderId: string, returnId: string) =>
  (await outboxOf(app, orderId)).filter(
    (row) => row.payload.data.returnId === returnId || row.payload.data.restockId === returnId,
  )

const processOf = async (app: OrderTestApp, type: string, id: string) =>
  (
    await app.app.inject({ method: 'GET', url: `/api/v1/admin/processes/${type}/${id}`, headers: asAdmin() })
  ).json()

describe('asking for a return', () => {
  it('when the customer returns two of three mugs of a shipped order, then 202 with the return, its Location, exactly those lines refunded-to-be, and return.requested', async () => {
    const { orderId, customerId } = await shippedOrder()
    const read = await order.app.inject({
      method: 'GET',
      url: `/api/v1/orders/${orderId}`,
      headers: asUser(customerId),
    })
    expect(read.json()._links.returns).toEqual({ href: `/api/v1/orders/${orderId}/returns`, method: 'POST' })

    const answer = await requestReturn(order, orderId, asUser(customerId), {
      items: [{ productId: mug.id, quantity: 2 }],
      reason: 'chipped',
    })
    expect(answer.statusCode, answer.body).toBe(202)
    const created = answer.json()
    expect(answer.headers.location).toBe(`/api/v1/returns/${created.returnId}`)
    expect(created).toMatchObject({
      orderId,
      customerId,
      status: 'requested',
      items: [{ productId: mug.id, quantity: 2, price: 19.99, name: 'Blue mug' }],
      refundAmount: 39.98,
      reason: 'chipped',
    })
    expect(created._links.self).toEqual({ href: `/api/v1/returns/${created.returnId}`, method: 'GET' })
    expect(created._links.receive).toEqual({
      href: `/api/v1/returns/${created.returnId}/receive`,
      method: 'POST',
    })
    expect(Date.parse(created.createdAt)).not.toBeNaN()

    const events = await eventsOfReturn(order, orderId, created.returnId)
    expect(events.map((row) => row.eventType)).toEqual(['return.requested'])
    expect(events[0]?.payload.data).toMatchObject({ customerId, refundAmount: 39.98, reason: 'chipped' })

    const again = await order.app.inject({
      method: 'GET',
      url: `/api/v1/returns/${created.returnId}`,
      headers: asUser(customerId),
    })
    expect(again.json()).toEqual(created)
    const process = await processOf(order, 'return', created.returnId)
    expect(process).toMatchObject({ type: 'return', id: created.returnId, state: 'requested', step: null })
    expect(process.log[0]).toMatchObject({ step: 'return', outcome: 'started', detail: 'requested' })
  })

  it('when the order has not shipped, then 409 and nothing is written; under /api too', async () => {
    const customerId = randomUUID()
    const orderId = await placeOrder(order, customerId)
    for (const prefix of ['/api/v1', '/api']) {
      const answer = await requestReturn(
        order,
        orderId,
        asUser(customerId),
        { items: [{ productId: mug.id, quantity: 1 }], reason: 'changed my mind' },
        prefix,
      )
      expectErrorEnvelope(answer, 409, 'CONFLICT')
    }
    expect(await order.sql`select 1 from returns where order_id = ${orderId}`).toHaveLength(0)
  })

  it('when a line is asked beyond what was ordered and not yet returned, then 422 names it and nothing is written', async () => {
    const { orderId, customerId } = await shippedOrder()
    const tooMany = await requestReturn(order, orderId, asUser(customerId), {
      items: [
        { productId: plate.id, quantity: 1 },
        { productId: mug.id, quantity: 4 },
      ],
      reason: 'all of it',
    })
    const error = expectErrorEnvelope(tooMany, 422, 'VALIDATION_ERROR')
    expect(error.details).toEqual([
      expect.objectContaining({
        field: 'items.1.quantity',
        received: '4',
        message: expect.stringContaining('at most 3'),
      }),
    ])
    const unknown = randomUUID()
    const notOrdered = await requestReturn(order, orderId, asUser(customerId), {
      items: [{ productId: unknown, quantity: 1 }],
      reason: 'not mine',
    })
    expect(expectErrorEnvelope(notOrdered, 422, 'VALIDATION_ERROR').details).toEqual([
      expect.objectContaining({ field: 'items.0.productId', received: unknown }),
    ])
    const twice = await requestReturn(order, orderId, asUser(customerId), {
      items: [
        { productId: mug.id, quantity: 1 },
        { productId: mug.id, quantity: 1 },
      ],
      reason: 'twice',
    })
    expect(expectErrorEnvelope(twice, 422, 'VALIDATION_ERROR').details).toEqual([
      expect.objectContaining({ field: 'items.1.productId' }),
    ])
    expect(await order.sql`select 1 from returns where order_id = ${orderId}`).toHaveLength(0)

    // two now, then only one is left: three is 422, one is 202; a rejected return gives its lines back
    const first = await requestReturn(order, orderId, asUser(customerId), {
      items: [{ productId: mug.id, quantity: 2 }],
      reason: 'chipped',
    })
    expect(first.statusCode).toBe(202)
    const beyond = await requestReturn(order, orderId, asUser(customerId), {
      items: [{ productId: mug.id, quantity: 2 }],
      reason: 'more',
    })
    expect(expectErrorEnvelope(beyond, 422, 'VALIDATION_ERROR').details?.[0]?.message).toContain('at most 1')
    const rejected = await order.app.inject({
      method: 'POST',
      url: `/api/v1/returns/${first.json().returnId}/reject`,
      headers: asAdmin(),
      payload: { reason: 'not chipped on the photo' },
    })
    expect(rejected.statusCode).toBe(202)
    const all = await requestReturn(order, orderId, asUser(customerId), {
      items: [{ productId: mug.id, quantity: 3 }],
      reason: 'all three, then',
    })
    expect(all.statusCode, all.body).toBe(202)
  })

  it("when another customer asks for a return of someone's order, then 404; without credentials 401; a malformed body is refused and nothing is written", async () => {
    const { orderId, customerId } = await shippedOrder()
    const body = { items: [{ productId: mug.id, quantity: 1 }], reason: 'x' }
    expectErrorEnvelope(await requestReturn(order, orderId, asUser(randomUUID()), body), 404, 'NOT_FOUND')
    expectErrorEnvelope(await requestReturn(order, orderId, {}, body), 401, 'UNAUTHORIZED')
    expectErrorEnvelope(await requestReturn(order, randomUUID(), asUser(customerId), body), 404, 'NOT_FOUND')
    for (const bad of [
      { items: [], reason: 'x' },
      { items: [{ productId: mug.id, quantity: 0 }], reason: 'x' },
      { items: [{ productId: mug.id, quantity: 1 }] },
      { items: [{ productId: mug.id, quantity: 1 }], reason: '' },
      { items: [{ productId: mug.id, quantity: 1 }], reason: 'x', refundAmount: 1000 },
      { items: [{ productId: 'not-a-uuid', quantity: 1 }], reason: 'x' },
      { items: [{ productId: mug.id, quantity: 1 }], reason: 'x'.repeat(501) },
    ]) {
      const answer = await requestReturn(order, orderId, asUser(customerId), bad)
      expect([400, 422], JSON.stringify(bad)).toContain(answer.statusCode)
      expect(answer.json().error.code).toMatch(/VALIDATION_ERROR|BAD_REQUEST/)
    }
    expect(await order.sql`select 1 from returns where order_id = ${orderId}`).toHaveLength(0)
    // an admin may return for the customer
    expect((await requestReturn(order, orderId, asAdmin(), body)).statusCode).toBe(202)
  })

  it('when two returns of the last mugs race, then one is accepted and the other is 422 (the order is locked)', async () => {
    const { orderId, customerId } = await shippedOrder()
    const body = { items: [{ productId: mug.id, quantity: 3 }], reason: 'race' }
    const answers = await Promise.all([
      requestReturn(order, orderId, asUser(customerId), body),
      requestReturn(order, orderId, asUser(customerId), body),
    ])
    expect(answers.map((answer) => answer.statusCode).sort()).toEqual([202, 422])
  })
})

describe('reading returns', () => {
  it("when the customer lists an order's returns, then newest first, paginated; another customer's order is 404", async () => {
    const { orderId, customerId } = await shippedOrder()
    const ids: string[] = []
    for (const productId of [mug.id, plate.id]) {
      const answer = await requestReturn(order, orderId, asUser(customerId), {
        items: [{ productId, quantity: 1 }],
        reason: 'one each',
      })
      ids.push(answer.json().returnId)
    }
    const page = await order.app.inject({
      method: 'GET',
      url: `/api/v1/orders/${orderId}/returns?limit=1`,
      headers: asUser(customerId),
    })
    expect(page.statusCode).toBe(200)
    const listed = page.json()
    expect(listed.meta).toEqual({ page: 1, limit: 1, total: 2, totalPages: 2 })
    expect(listed.data.map((each: { returnId: string }) => each.returnId)).toEqual([ids[1]])
    expect(listed.links.next).toContain('page=2')
    const other = asUser(randomUUID())
    expectErrorEnvelope(
      await order.app.inject({ method: 'GET', url: `/api/v1/orders/${orderId}/returns`, headers: other }),
      404,
      'NOT_FOUND',
    )
    expectErrorEnvelope(
      await order.app.inject({ method: 'GET', url: `/api/v1/returns/${ids[0]}`, headers: other }),
      404,
      'NOT_FOUND',
    )
    expectErrorEnvelope(
      await order.app.inject({
        method: 'GET',
        url: `/api/v1/orders/${orderId}/returns?limit=0`,
        headers: asUser(customerId),
      }),
      422,
      'VALIDATION_ERROR',
    )
    const admin = await order.app.inject({ method: 'GET', url: `/api/returns/${ids[0]}`, headers: asAdmin() })
    expect(admin.json().returnId).toBe(ids[0])
  })
})

describe('receiving and rejecting', () => {
  it('when an admin marks the goods received, then received, return.received and the restock go out; the same receipt again answers the same and sends nothing', async () => {
    const { orderId, customerId } = await shippedOrder()
    const { returnId } = (
      await requestReturn(order, orderId, asUser(customerId), {
        items: [{ productId: mug.id, quantity: 2 }],
        reason: 'r',
        carrier: 'meridian-post',
      })
    ).json()
    const receive = (headers: Record<string, string>) =>
      order.app.inject({ method: 'POST', url: `/api/v1/returns/${returnId}/receive`, headers })
    expectErrorEnvelope(await receive(asUser(customerId)), 403, 'FORBIDDEN')
    expectErrorEnvelope(await receive({}), 401, 'UNAUTHORIZED')
    expectErrorEnvelope(await receive({ 'x-carrier-key': 'wrong-key-0123456789' }), 401, 'UNAUTHORIZED')
    expect(await eventsOfReturn(order, orderId, returnId)).toHaveLength(1)

    const first = await receive(asAdmin())
    expect(first.statusCode, first.body).toBe(202)
    expect(first.json()).toMatchObject({ status: 'received' })
    expect(first.json()._links.receive).toBeUndefined()
    const second = await receive({ 'x-carrier-key': carrierKey })
    expect(second.statusCode).toBe(202)
    expect(second.json().status).toBe('received')
    const events = await eventsOfReturn(order, orderId, returnId)
    expect(events.map((row) => row.eventType)).toEqual([
      'return.requested',
      'return.received',
      'inventory.restock_requested.v2',
    ])
    expect(events[2]?.payload.data).toMatchObject({ items: [{ productId: mug.id, quantity: 2 }], attempt: 1 })

    // received: no longer rejected
    const reject = await order.app.inject({
      method: 'POST',
      url: `/api/v1/returns/${returnId}/reject`,
      headers: asAdmin(),
      payload: { reason: 'late' },
    })
    expectErrorEnvelope(reject, 409, 'CONFLICT')
    expectErrorEnvelope(
      await order.app.inject({
        method: 'POST',
        url: `/api/v1/returns/${randomUUID()}/receive`,
        headers: asAdmin(),
      }),
      404,
      'NOT_FOUND',
    )
  })

  it("when carriers are named, then a carrier's key receives only the returns that name it, another's is 404 and moves nothing, and who received each is kept", async () => {
    const { orderId, customerId } = await shippedOrder()
    const ask = async (carrier?: string) => {
      const answer = await requestReturn(order, orderId, asUser(customerId), {
        items: [{ productId: mug.id, quantity: 1 }],
        reason: 'r',
        ...(carrier === undefined ? {} : { carrier }),
      })
      expect(answer.statusCode, answer.body).toBe(202)
      return answer.json() as { returnId: string; carrier?: string }
    }
    const receive = (returnId: string, headers: Record<string, string>) =>
      order.app.inject({ method: 'POST', url: `/api/v1/returns/${returnId}/receive`, headers })
    const receivedBy = async (returnId: string) =>
      (
        await order.sql<
          { receivedBy: string | null }[]
        >`select received_by from returns where id = ${returnId}`
      )[0]?.receivedBy

    // a252e60: any key of RETURNS_CARRIER_KEYS received any return (and so started its refund), recorded as "carrier"
    const posted = await ask('meridian-post')
    expect(posted.carrier).toBe('meridian-post')
    expectErrorEnvelope(
      await receive(posted.returnId, { 'x-carrier-key': otherCarrierKey }),
      404,
      'NOT_FOUND',
    )
    expect((await eventsOfReturn(order, orderId, posted.returnId)).map((row) => row.eventType)).toEqual([
      'return.requested',
    ])
    expect(await receivedBy(posted.returnId)).toBeNull()
    const received = await receive(posted.returnId, { 'x-carrier-key': carrierKey })
    expect(received.statusCode, received.body).toBe(202)
    expect(received.json()).toMatchObject({
      status: 'received',
      carrier: 'meridian-post',
      receivedBy: 'carrier:meridian-post',
    })
    expect(await receivedBy(posted.returnId)).toBe('carrier:meridian-post')

    // a return naming no carrier: no carrier's key receives it; an admin does, recorded by subject (the customer
    // sees only "admin")
    const unbound = await ask()
    for (const key of [carrierKey, otherCarrierKey]) {
      expectErrorEnvelope(await receive(unbound.returnId, { 'x-carrier-key': key }), 404, 'NOT_FOUND')
    }
    expect((await receive(unbound.returnId, asAdmin())).statusCode).toBe(202)
    expect(await receivedBy(unbound.returnId)).toMatch(/^user:.+/)
    const seen = await order.app.inject({
      method: 'GET',
      url: `/api/v1/returns/${unbound.returnId}`,
      headers: asUser(customerId),
    })
    expect(seen.json()).toMatchObject({ status: expect.any(String), receivedBy: 'admin' })
    expect(seen.json().carrier).toBeUndefined()

    // and the audit trail has each receipt with who made it (a refused carrier's try changes nothing, so none)
    const trail = await order.app.inject({
      method: 'GET',
      url: '/api/v1/admin/audit/order?action=return.received&limit=100',
      headers: asAdmin(),
    })
    expect(trail.statusCode, trail.body).toBe(200)
    const receipts = (trail.json() as { data: { actor: string; target: string }[] }).data.filter((entry) =>
      [posted.returnId, unbound.returnId].some((id) => entry.target === `return:${id}`),
    )
    expect(receipts.map((entry) => [entry.target, entry.actor.split(':')[0]])).toEqual([
      [`return:${unbound.returnId}`, 'user'],
      [`return:${posted.returnId}`, 'carrier'],
    ])
    expect(receipts[1]?.actor).toBe('carrier:meridian-post')
  })

  it('when a return names a carrier the deployment does not have (or no carrier name at all), then 422 naming carrier and nothing is written', async () => {
    const { orderId, customerId } = await shippedOrder()
    for (const carrier of ['unknown-co', 'Meridian Post', 'x'.repeat(41)]) {
      const answer = await requestReturn(order, orderId, asUser(customerId), {
        items: [{ productId: plate.id, quantity: 1 }],
        reason: 'r',
        carrier,
      })
      const error = expectErrorEnvelope(answer, 422, 'VALIDATION_ERROR')
      expect(error.details?.map((detail) => detail.field)).toContain('carrier')
    }
    const [count] = await order.sql<
      { n: number }[]
    >`select count(*)::int as n from returns where order_id = ${orderId}`
    expect(count?.n).toBe(0)
  })

  it("when RETURNS_CARRIER_KEYS holds a key without its carrier's name, then the start is refused naming the variable, never the key", () => {
    expect(() => loadOrderConfig({ NODE_ENV: 'test', RETURNS_CARRIER_KEYS: carrierKey })).toThrow(
      /^(?![\s\S]*returns-carrier-key)[\s\S]*RETURNS_CARRIER_KEYS: must be comma-separated name=key pairs/,
    )
    expect(
      loadOrderConfig({ NODE_ENV: 'test', RETURNS_CARRIER_KEYS: carriersSetting }).RETURNS_CARRIER_KEYS,
    ).toBe(carriersSetting)
  })

  it('when an admin rejects a requested return, then rejected with its reason and return.rejected; receiving it then is 409; only admins reject', async () => {
    const { orderId, customerId, returnId } = await returnOfShipped([{ productId: plate.id, quantity: 1 }])
    const reject = (headers: Record<string, string>, payload: object) =>
      order.app.inject({ method: 'POST', url: `/api/v1/returns/${returnId}/reject`, headers, payload })
    expectErrorEnvelope(await reject(asUser(customerId), { reason: 'mine' }), 403, 'FORBIDDEN')
    expectErrorEnvelope(
      await reject({ 'x-carrier-key': carrierKey }, { reason: 'carrier' }),
      401,
      'UNAUTHORIZED',
    )
    expect([400, 422]).toContain((await reject(asAdmin(), {})).statusCode)
    const answer = await reject(asAdmin(), { reason: 'outside the return window' })
    expect(answer.statusCode).toBe(202)
    expect(answer.json()).toMatchObject({ status: 'rejected', rejectionReason: 'outside the return window' })
    expect((await reject(asAdmin(), { reason: 'again' })).json().status).toBe('rejected')
    expectErrorEnvelope(
      await order.app.inject({
        method: 'POST',
        url: `/api/v1/returns/${returnId}/receive`,
        headers: asAdmin(),
      }),
      409,
      'CONFLICT',
    )
    const events = await eventsOfReturn(order, orderId, returnId)
    expect(events.map((row) => row.eventType)).toEqual(['return.requested', 'return.rejected'])
    expect(events[1]?.payload.data).toMatchObject({ customerId, reason: 'outside the return window' })
  })
})

describe("the return's process", () => {
  it('when operators read a return, then it offers only the actions its decision takes: compensate (reject) while requested, retry but no compensate once received, in the list as one by one', async () => {
    const { returnId } = await returnOfShipped([{ productId: mug.id, quantity: 1 }])
    const actions = (links: Record<string, unknown>) =>
      ['retry', 'compensate'].filter((name) => name in links)
    const listed = async () =>
      (
        await order.app.inject({
          method: 'GET',
          url: '/api/v1/admin/processes?type=return&limit=100',
          headers: asAdmin(),
        })
      )
        .json()
        .data.find((each: { id: string }) => each.id === returnId)
    expect(actions((await processOf(order, 'return', returnId))._links)).toEqual(['compensate'])
    expect(actions((await listed())._links)).toEqual(['compensate'])
    await order.app.inject({ method: 'POST', url: `/api/v1/returns/${returnId}/receive`, headers: asAdmin() })
    expect(actions((await processOf(order, 'return', returnId))._links)).toEqual(['retry'])
    expect(actions((await listed())._links)).toEqual(['retry'])
    // what is not offered is refused
    const refused = await order.app.inject({
      method: 'POST',
      url: `/api/v1/admin/processes/return/${returnId}/compensate`,
      headers: asAdmin(),
      payload: { reason: 'no' },
    })
    expectErrorEnvelope(refused, 409, 'CONFLICT')
  })

  it('when an answer names the return in its data but carries no stamp, then neither the return nor the order saga moves: an answer finds its instance by the stamp its command carried', async () => {
    const { orderId, paymentId, returnId } = await returnOfShipped([{ productId: mug.id, quantity: 1 }])
    await order.app.inject({ method: 'POST', url: `/api/v1/returns/${returnId}/receive`, headers: asAdmin() })
    const items = [{ productId: mug.id, quantity: 1 }]
    const before = {
      back: await processOf(order, 'return', returnId),
      saga: await processOf(order, 'order', orderId),
    }
    // what a service answering on its own would send, naming the return: the return's process follows no data route
    await deliver(order, 'inventory.restocked.v2', { restockId: returnId, orderId, items })
    await deliver(order, 'payment.refunded', {
      orderId,
      paymentId,
      amount: 19.99,
      refundKey: `return-${returnId}`,
    })
    const after = {
      back: await processOf(order, 'return', returnId),
      saga: await processOf(order, 'order', orderId),
    }
    expect(after.back).toMatchObject({ state: 'received', step: 'restock', attempt: 1 })
    expect(after.back.log).toHaveLength(before.back.log.length)
    expect(after.saga.log).toHaveLength(before.saga.log.length)
    // the same restock carried back with the stamp of the command that asked it moves the return on
    await deliver(
      order,
      'inventory.restocked.v2',
      { restockId: returnId, orderId, items },
      await askedBy(order, returnId),
    )
    expect(await processOf(order, 'return', returnId)).toMatchObject({ state: 'received', step: 'refund' })
  })

  it('when the stock is back and the refund answers, then exactly the returned lines are asked refunded under the return, it completes, and the order saga hears nothing', async () => {
    const { orderId, customerId, paymentId } = await shippedOrder()
    const { returnId } = (
      await requestReturn(order, orderId, asUser(customerId), {
        items: [
          { productId: mug.id, quantity: 1 },
          { productId: plate.id, quantity: 1 },
        ],
        reason: 'r',
      })
    ).json()
    await order.app.inject({ method: 'POST', url: `/api/v1/returns/${returnId}/receive`, headers: asAdmin() })
    const items = [
      { productId: mug.id, quantity: 1 },
      { productId: plate.id, quantity: 1 },
    ]
    await deliver(
      order,
      'inventory.restocked.v2',
      { restockId: returnId, orderId, items },
      await askedBy(order, returnId),
    )
    const refund = (await eventsOfReturn(order, orderId, returnId)).at(-1)
    expect(refund?.eventType).toBe('payment.refund_requested')
    expect(refund?.payload.data).toMatchObject({
      orderId,
      refundKey: `return-${returnId}`,
      amount: 25.49,
      attempt: 1,
    })

    const sagaBefore = (await processOf(order, 'order', orderId)).log.length
    await deliver(
      order,
      'payment.refunded',
      { orderId, paymentId, amount: 25.49, refundKey: `return-${returnId}` },
      await askedBy(order, returnId),
    )
    const read = await order.app.inject({
      method: 'GET',
      url: `/api/v1/returns/${returnId}`,
      headers: asUser(customerId),
    })
    expect(read.json()).toMatchObject({ status: 'completed', paymentId, refundAmount: 25.49 })
    const completed = (await eventsOfReturn(order, orderId, returnId)).at(-1)
    expect(completed?.eventType).toBe('return.completed')
    expect(completed?.payload.data).toMatchObject({ customerId, refundAmount: 25.49, paymentId })
    // the saga of the order: neither its log nor the order's status moved
    expect((await processOf(order, 'order', orderId)).log).toHaveLength(sagaBefore)
    const status = await order.app.inject({
      method: 'GET',
      url: `/api/v1/orders/${orderId}`,
      headers: asAdmin(),
    })
    expect(status.json().status).toBe('shipped')

    // a late second answer changes nothing
    await deliver(
      order,
      'payment.refunded',
      { orderId, paymentId, amount: 25.49, refundKey: `return-${returnId}` },
      await askedBy(order, returnId),
    )
    expect((await eventsOfReturn(order, orderId, returnId)).at(-1)?.eventType).toBe('return.completed')
  })

  it('when the provider declines the refund on every attempt, then the return is escalated and listed for operators; a retry asks again from the first attempt', async () => {
    const { orderId, returnId } = await returnOfShipped([{ productId: plate.id, quantity: 1 }])
    await order.app.inject({ method: 'POST', url: `/api/v1/returns/${returnId}/receive`, headers: asAdmin() })
    await deliver(
      order,
      'inventory.restocked.v2',
      { restockId: returnId, orderId, items: [{ productId: plate.id, quantity: 1 }] },
      await askedBy(order, returnId),
    )
    const declined = { orderId, refundKey: `return-${returnId}`, reason: 'charge_already_refunded' }
    await deliver(
      order,
      'payment.refund_failed.v2',
      { ...declined, attempt: 1 },
      await askedBy(order, returnId),
    )
    expect(await processOf(order, 'return', returnId)).toMatchObject({
      step: 'refund',
      attempt: 1,
      escalated: false,
    })
    // the clock asks again (RETURN_STEP_ATTEMPTS is 2 here): attempt 2 declined too
    await order.sql`update process_instances set deadline = now() where type = 'return' and key = ${returnId}`
    await eventually('the refund asked again', async () => {
      await order.saga.fireDeadlines()
      return (await processOf(order, 'return', returnId)).attempt === 2
    })
    await deliver(
      order,
      'payment.refund_failed.v2',
      { ...declined, attempt: 2 },
      await askedBy(order, returnId),
    )
    const escalated = await processOf(order, 'return', returnId)
    expect(escalated).toMatchObject({ step: 'refund', attempt: 2, escalated: true, deadline: null })
    expect(escalated.escalation).toContain('charge_already_refunded')
    const listed = await order.app.inject({
      method: 'GET',
      url: '/api/v1/admin/processes?type=return&escalated=true&limit=100',
      headers: asAdmin(),
    })
    expect(listed.json().data.map((each: { id: string }) => each.id)).toContain(returnId)
    const metrics = await order.app.inject({ method: 'GET', url: '/metrics' })
    expect(metrics.body).toMatch(
      /meridian_process_escalations_total\{[^}]*type="return"[^}]*step="refund"[^}]*\} [1-9]/,
    )

    const retried = await order.app.inject({
      method: 'POST',
      url: `/api/v1/admin/processes/return/${returnId}/retry`,
      headers: asAdmin(),
    })
    expect(retried.statusCode, retried.body).toBe(202)
    expect(retried.json()).toMatchObject({ step: 'refund', attempt: 1, escalated: false })
    const asked = (await eventsOfReturn(order, orderId, returnId)).filter(
      (row) => row.eventType === 'payment.refund_requested',
    )
    expect(asked.map((row) => row.payload.data.attempt)).toEqual([1, 2, 1])
    // the operator's retry is in the audit trail, with the process it was on
    const audited = await order.app.inject({
      method: 'GET',
      url: '/api/v1/admin/audit/order?action=process.retried&limit=100',
      headers: asAdmin(),
    })
    expect(
      (audited.json() as { data: { target: string; actor: string }[] }).data.find(
        (entry) => entry.target === `process:return:${returnId}`,
      )?.actor,
    ).toMatch(/^user:/)
    // compensating a received return is refused: its stock and refund are not undone
    expectErrorEnvelope(
      await order.app.inject({
        method: 'POST',
        url: `/api/v1/admin/processes/return/${returnId}/compensate`,
        headers: asAdmin(),
        payload: {},
      }),
      409,
      'CONFLICT',
    )
  })

  it('when the restock does not answer, then it is asked again after its deadline and escalated after the last attempt', async () => {
    const { orderId, customerId } = await shippedOrder(hurried)
    const { returnId } = (
      await requestReturn(hurried, orderId, asUser(customerId), {
        items: [{ productId: mug.id, quantity: 1 }],
        reason: 'r',
      })
    ).json()
    await hurried.app.inject({
      method: 'POST',
      url: `/api/v1/returns/${returnId}/receive`,
      headers: asAdmin(),
    })
    await eventually('the restock escalated', async () => {
      await hurried.saga.fireDeadlines()
      const process = await processOf(hurried, 'return', returnId)
      return process.step === 'restock' && process.escalated === true
    })
    const asked = (await eventsOfReturn(hurried, orderId, returnId)).filter(
      (row) => row.eventType === 'inventory.restock_requested.v2',
    )
    expect(asked.map((row) => row.payload.data.attempt)).toEqual([1, 2])
    const log = (await processOf(hurried, 'return', returnId)).log.map(
      (line: { step: string; outcome: string }) => `${line.step} ${line.outcome}`,
    )
    expect(log).toEqual([
      'return started',
      'return succeeded',
      'restock requested',
      'restock timed_out',
      'restock requested',
      'restock timed_out',
      'restock escalated',
    ])
  })

  it('when an operator compensates a requested return, then it is rejected with the reason; the saga list still lists orders only', async () => {
    const { returnId } = await returnOfShipped([{ productId: mug.id, quantity: 1 }])
    const compensated = await order.app.inject({
      method: 'POST',
      url: `/api/v1/admin/processes/return/${returnId}/compensate`,
      headers: asAdmin(),
      payload: { reason: 'fraud suspected' },
    })
    expect(compensated.statusCode, compensated.body).toBe(202)
    expect(compensated.json().state).toBe('rejected')
    const read = await order.app.inject({
      method: 'GET',
      url: `/api/v1/returns/${returnId}`,
      headers: asAdmin(),
    })
    expect(read.json()).toMatchObject({ status: 'rejected', rejectionReason: 'fraud suspected' })
    const sagas = await order.app.inject({
      method: 'GET',
      url: '/api/v1/admin/sagas?limit=100',
      headers: asAdmin(),
    })
    expect(sagas.json().data.every((saga: { orderId: string }) => saga.orderId !== returnId)).toBe(true)
    const types = await order.app.inject({
      method: 'GET',
      url: '/api/v1/admin/processes/types',
      headers: asAdmin(),
    })
    expect(types.json().data.map((each: { type: string }) => each.type)).toEqual([
      'order',
      'return',
      'exchange',
    ])
  })
})
