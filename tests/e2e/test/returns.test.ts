// Returns end to end, through the gateway only: an order of two products shipped, returned in part, received, refunded
// exactly its returned lines at the provider (its counters) with the stock back and the customer told at each step;
// a second return of the rest, refunding the whole charge and no more, and nothing left to return; a rejected one;
// who may ask; the same receipt sent twice at once; and the provider's faults — a declined refund retried, escalated
// to operators and retried by one, and a provider down for a while — each refunded once. Timings: a return's step
// waits 1, 2, 4, 8 s, 4 attempts; the carrier's key (src/global-setup.ts, returnSettings).
import type { Product, RealtimeNotification, Return } from '@meridian/contracts'
import { createRealtimeClient, type RealtimeClient } from '@meridian/realtime-client'
import { eventually, scaledMs } from '@meridian/testkit'
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from 'vitest'
import { type Caller, type Customer, cards, e2eClient, type OrderLine } from '../src/client.ts'
import { returnSettings } from '../src/global-setup.ts'
import '../src/system-context.ts'

const system = inject('system')
const client = e2eClient(system)
// the tests' scaled wait for what the system does in its own time
const patience = scaledMs(60_000)
const cents = (amount: number) => Math.round(amount * 100)
// the deployment's one carrier (name=key): it receives the returns that name it
const [carrierName, carrierKey] = returnSettings.RETURNS_CARRIER_KEYS.split('=') as [string, string]
const carrier = { carrierKey }
const realtimeClients: RealtimeClient[] = []

/** The customer's /notifications through the gateway: every notification:new heard, as it comes. */
async function listen(customer: Customer): Promise<RealtimeNotification[]> {
  const realtime = createRealtimeClient({
    url: system.gatewayUrl,
    token: () => customer.token,
    reconnection: { attempts: 20, initialDelayMs: 200, maxDelayMs: 1000, randomizationFactor: 0.5 },
  })
  realtimeClients.push(realtime)
  const socket = realtime.namespace('/notifications')
  const heard: RealtimeNotification[] = []
  socket.on('notification:new', (notification) => heard.push(notification))
  if (!socket.connected) await new Promise<void>((resolve) => socket.once('connect', () => resolve()))
  return heard
}

afterAll(() => {
  for (const realtime of realtimeClients) realtime.close()
})

describe('returns through the gateway', () => {
  let admin: Caller
  let customer: Customer

  beforeAll(async () => {
    admin = await client.loginAdmin()
    customer = await client.registerCustomer()
  })

  // a test that makes the provider's refunds fail never leaves them so for the next
  afterEach(async () => {
    await client.setRefunds('succeed')
  })

  /** An order of `lines` placed by the customer and shipped; its id. */
  async function shippedOrder(lines: readonly OrderLine[], by: Customer = customer): Promise<string> {
    const [first] = lines
    if (!first) throw new Error('an order needs a line')
    const orderId = await client.placeOrderOk(by, { product: first.product, lines, card: cards.good })
    await client.orderReaches(by, orderId, 'shipped', patience)
    return orderId
  }

  describe('an order of 3 of A and 1 of B, returned in two parts', () => {
    let productA: Product
    let productB: Product
    let orderId: string
    let heard: RealtimeNotification[]

    beforeAll(async () => {
      productA = await client.createProduct(admin, { stock: 10, price: 12.34 })
      productB = await client.createProduct(admin, { stock: 10, price: 5.67 })
      heard = await listen(customer)
      orderId = await shippedOrder([
        { product: productA, quantity: 3 },
        { product: productB, quantity: 1 },
      ])
    })

    it('when the customer returns 2 of A and an admin receives them, then the return completes, the provider refunds exactly 2 × A once, 2 of A are back in stock, and the customer is told at each step', async () => {
      const order = await client.readOrder(customer, orderId)
      expect(order._links.returns).toEqual({ href: `/api/v1/orders/${orderId}/returns`, method: 'POST' })
      expect(await client.providerSummary(orderId)).toMatchObject({
        charges: 1,
        refunds: 0,
        charged: 3 * cents(productA.price) + cents(productB.price),
        refunded: 0,
      })
      // inventory hears shipment.created on its own, after or before the order did
      await client.stockReaches(productA.id, { available: 7, reserved: 0 }, patience)

      const asked = await client.requestReturn(customer, orderId, [{ productId: productA.id, quantity: 2 }])
      expect(asked.status, JSON.stringify(asked.body)).toBe(202)
      const returnId = asked.body.returnId
      expect(asked.headers.get('location')).toBe(`/api/v1/returns/${returnId}`)
      expect(asked.body).toMatchObject({
        orderId,
        status: 'requested',
        items: [{ productId: productA.id, quantity: 2, price: 12.34 }],
        refundAmount: 24.68,
        createdAt: expect.any(String),
        _links: {
          self: { href: `/api/v1/returns/${returnId}`, method: 'GET' },
          receive: { href: `/api/v1/returns/${returnId}/receive`, method: 'POST' },
        },
      })
      await client.notificationReaches(customer, 'return_requested', returnId, patience)
      // nothing moves before the goods are back
      expect(await client.providerSummary(orderId)).toMatchObject({ refunds: 0, refunded: 0 })

      const received = await client.receiveReturn(admin, returnId)
      expect(received.status, JSON.stringify(received.body)).toBe(202)
      expect(['received', 'completed']).toContain(received.body.status)

      const completed = await client.returnReaches(customer, returnId, 'completed', patience)
      expect(completed).toMatchObject({ refundAmount: 24.68, paymentId: expect.any(String) })
      expect(completed._links.receive).toBeUndefined()
      expect(await client.providerSummary(orderId)).toMatchObject({
        charges: 1,
        refunds: 1,
        refunded: 2 * cents(productA.price),
      })
      await client.stockReaches(productA.id, { available: 9, reserved: 0 }, patience)
      expect(await client.readProduct(productB.id)).toMatchObject({ available: 9, reserved: 0 })

      for (const type of ['return_received', 'return_completed'] as const)
        await client.notificationReaches(customer, type, returnId, patience)
      // and each was pushed on the channel as it was made
      await eventually(
        'return_requested, return_received and return_completed heard on the channel',
        () =>
          ['return_requested', 'return_received', 'return_completed'].every((type) =>
            heard.some((each) => each.type === type && each.message.includes(returnId)),
          ),
        patience,
      )

      const listed = await client.request<{ data: Return[]; pagination: { total: number } }>(
        'GET',
        `/api/v1/orders/${orderId}/returns`,
        { token: customer.token },
      )
      expect(listed.status).toBe(200)
      expect(listed.body.data.map((each) => [each.returnId, each.status])).toEqual([[returnId, 'completed']])
    })

    it('when the rest (1 of A, 1 of B) is returned and a carrier receives it, then the refunds add up to the whole charge and no more, the stock is whole again, and a third return is 422 naming the item', async () => {
      const second = await client.requestReturnOk(
        customer,
        orderId,
        [
          { productId: productA.id, quantity: 1 },
          { productId: productB.id, quantity: 1 },
        ],
        undefined,
        carrierName,
      )
      expect(second.refundAmount).toBe(18.01)

      const received = await client.receiveReturn(carrier, second.returnId)
      expect(received.status, JSON.stringify(received.body)).toBe(202)
      expect(received.body).toMatchObject({ carrier: carrierName, receivedBy: `carrier:${carrierName}` })
      await client.returnReaches(customer, second.returnId, 'completed', patience)
      const summary = await client.providerSummary(orderId)
      expect(summary).toMatchObject({
        charges: 1,
        refunds: 2,
        charged: 3 * cents(productA.price) + cents(productB.price),
      })
      expect(summary.refunded).toBe(summary.charged)
      expect(summary.refunded).toBe(cents(24.68) + cents(18.01))
      await client.stockReaches(productA.id, { available: 10, reserved: 0 }, patience)
      await client.stockReaches(productB.id, { available: 10, reserved: 0 }, patience)

      const third = await client.requestReturn(customer, orderId, [{ productId: productB.id, quantity: 1 }])
      expect(third.status, JSON.stringify(third.body)).toBe(422)
      expect(third.body).toMatchObject({
        success: false,
        error: {
          code: 'VALIDATION_ERROR',
          details: [
            {
              field: 'items.0.quantity',
              message: expect.stringContaining(productB.id),
              received: '1',
            },
          ],
        },
      })
      const listed = await client.request<{ data: Return[] }>('GET', `/api/v1/orders/${orderId}/returns`, {
        token: customer.token,
      })
      expect(listed.body.data).toHaveLength(2)
      expect(await client.providerSummary(orderId)).toMatchObject({ refunds: 2, refunded: summary.charged })
    })
  })

  it('when an admin rejects a requested return, then it is rejected, nothing is refunded, no stock moves, the customer is told, and its goods can no longer be received', async () => {
    const product = await client.createProduct(admin, { stock: 5, price: 7.5 })
    const orderId = await shippedOrder([{ product, quantity: 2 }])
    const asked = await client.requestReturnOk(customer, orderId, [{ productId: product.id, quantity: 1 }])

    // the customer may not reject (nor receive) their own return
    expect((await client.rejectReturn(customer, asked.returnId, 'changed my mind')).status).toBe(403)
    expect((await client.receiveReturn(customer, asked.returnId)).status).toBe(403)
    expect(
      (await client.receiveReturn({ carrierKey: 'not-the-carrier-key-0000' }, asked.returnId)).status,
    ).toBe(401)

    const rejected = await client.rejectReturn(admin, asked.returnId, 'the item shows wear')
    expect(rejected.status, JSON.stringify(rejected.body)).toBe(202)
    expect(rejected.body).toMatchObject({ status: 'rejected', rejectionReason: 'the item shows wear' })
    const notice = await client.notificationReaches(customer, 'return_rejected', asked.returnId, patience)
    expect(notice.message).toContain('the item shows wear')

    const late = await client.receiveReturn(admin, asked.returnId)
    expect(late.status, JSON.stringify(late.body)).toBe(409)
    expect(late.body).toMatchObject({ success: false, error: { code: 'CONFLICT' } })
    expect(await client.readReturn(customer, asked.returnId)).toMatchObject({ status: 'rejected' })
    expect(await client.providerSummary(orderId)).toMatchObject({ charges: 1, refunds: 0, refunded: 0 })
    await client.stockReaches(product.id, { available: 3, reserved: 0 }, patience)
  })

  it('when the order has not shipped, then a return is 409; when it is another customer, then 404 for the order, its returns and the return; without a credential 401', async () => {
    const product = await client.createProduct(admin, { stock: 5 })
    const declinedId = await client.placeOrderOk(customer, { product, card: cards.declined })
    await client.orderReaches(customer, declinedId, 'payment_failed', patience)
    const early = await client.requestReturn(customer, declinedId, [{ productId: product.id, quantity: 1 }])
    expect(early.status, JSON.stringify(early.body)).toBe(409)
    expect(early.body).toMatchObject({ success: false, error: { code: 'CONFLICT' } })

    const orderId = await shippedOrder([{ product, quantity: 1 }])
    const theirs = await client.requestReturnOk(customer, orderId, [{ productId: product.id, quantity: 1 }])
    const stranger = await client.registerCustomer()
    const foreign = await client.requestReturn(stranger, orderId, [{ productId: product.id, quantity: 1 }])
    expect(foreign.status, JSON.stringify(foreign.body)).toBe(404)
    expect(foreign.body).toMatchObject({ success: false, error: { code: 'NOT_FOUND' } })
    expect(
      (await client.request('GET', `/api/v1/orders/${orderId}/returns`, { token: stranger.token })).status,
    ).toBe(404)
    expect(
      (await client.request('GET', `/api/v1/returns/${theirs.returnId}`, { token: stranger.token })).status,
    ).toBe(404)
    expect((await client.request('GET', `/api/v1/returns/${theirs.returnId}`)).status).toBe(401)
    expect(
      (
        await client.request('POST', `/api/v1/orders/${orderId}/returns`, {
          body: { items: [{ productId: product.id, quantity: 1 }], reason: 'no credential' },
        })
      ).status,
    ).toBe(401)
    // the stranger's attempt took nothing: the customer's return still holds the only unit
    expect(
      (await client.requestReturn(customer, orderId, [{ productId: product.id, quantity: 1 }])).status,
    ).toBe(422)
  })

  it('when the same receipt is sent twice at once (an admin and the carrier), then both answer the return, it is restocked once and refunded once', async () => {
    const product = await client.createProduct(admin, { stock: 5, price: 9.99 })
    const orderId = await shippedOrder([{ product, quantity: 2 }])
    const asked = await client.requestReturnOk(
      customer,
      orderId,
      [{ productId: product.id, quantity: 2 }],
      undefined,
      carrierName,
    )

    const answers = await Promise.all([
      client.receiveReturn(admin, asked.returnId),
      client.receiveReturn(carrier, asked.returnId),
    ])
    for (const answer of answers) {
      expect(answer.status, JSON.stringify(answer.body)).toBe(202)
      expect(answer.body.returnId).toBe(asked.returnId)
    }
    await client.returnReaches(customer, asked.returnId, 'completed', patience)
    expect(await client.providerSummary(orderId)).toMatchObject({
      refunds: 1,
      refunded: 2 * cents(product.price),
    })
    await client.stockReaches(product.id, { available: 5, reserved: 0 }, patience)
    // the process took the goods once; the second receipt changed nothing
    const instance = await client.process(admin, 'return', asked.returnId)
    const log = instance.log ?? []
    expect(log.filter((line) => line.step === 'return' && line.detail === 'received')).toHaveLength(1)
    expect(log.filter((line) => line.step === 'return' && line.detail === 'received again')).toHaveLength(1)
    // (a restock slower than its 1 s wait is asked again: attempt 2; a second receipt would ask attempt 1 again)
    expect(
      log.filter((line) => line.step === 'restock' && line.outcome === 'requested' && line.attempt === 1),
    ).toHaveLength(1)
    // asked again later, still once
    expect((await client.receiveReturn(carrier, asked.returnId)).body.status).toBe('completed')
    expect(await client.providerSummary(orderId)).toMatchObject({
      refunds: 1,
      refunded: 2 * cents(product.price),
    })
  })

  describe('when the provider misbehaves', () => {
    it('when the return refund is declined, then the return stays received, is asked again, is escalated and listed for operators; once refunds succeed an operator retry completes it, refunded once', async () => {
      const product = await client.createProduct(admin, { stock: 5, price: 3.33 })
      const orderId = await shippedOrder([{ product, quantity: 2 }])
      const asked = await client.requestReturnOk(customer, orderId, [{ productId: product.id, quantity: 2 }])
      await client.setRefunds('decline')
      expect((await client.receiveReturn(admin, asked.returnId)).status).toBe(202)

      let escalated: Awaited<ReturnType<typeof client.processes>> = []
      await eventually(
        `return ${asked.returnId} among the escalated returns`,
        async () => {
          escalated = await client.processes(admin, 'type=return&escalated=true&limit=100')
          return escalated.some((each) => each.id === asked.returnId)
        },
        patience,
      )
      const listed = escalated.find((each) => each.id === asked.returnId)
      expect(listed).toMatchObject({ type: 'return', state: 'received', step: 'refund', escalated: true })
      const instance = await client.process(admin, 'return', asked.returnId)
      // asked on each of its 4 attempts (the clock asks again once an attempt's wait is over), each declined
      const refundLines = (instance.log ?? []).filter((line) => line.step === 'refund')
      const asks = refundLines.filter((line) => line.outcome === 'requested').map((line) => line.attempt)
      expect(new Set(asks)).toEqual(new Set([1, 2, 3, 4]))
      expect(refundLines.filter((line) => line.outcome === 'failed').length).toBeGreaterThanOrEqual(1)
      expect(instance.escalation).toEqual(expect.stringContaining('the refund step failed after 4 attempts'))
      expect(await client.readReturn(customer, asked.returnId)).toMatchObject({ status: 'received' })
      expect(await client.providerSummary(orderId)).toMatchObject({ refunds: 0, refunded: 0 })
      // the restock came before the refund and is not undone
      await client.stockReaches(product.id, { available: 5, reserved: 0 }, patience)

      await client.setRefunds('succeed')
      const retried = await client.retryProcess(admin, 'return', asked.returnId)
      expect(retried.status, JSON.stringify(retried.body)).toBe(202)
      expect(retried.body).toMatchObject({ step: 'refund', attempt: 1, escalated: false })
      await client.returnReaches(customer, asked.returnId, 'completed', patience)
      expect(await client.providerSummary(orderId)).toMatchObject({
        refunds: 1,
        refunded: 2 * cents(product.price),
      })
      expect(
        (await client.processes(admin, 'type=return&escalated=true&limit=100')).map((each) => each.id),
      ).not.toContain(asked.returnId)
      expect(await client.readProduct(product.id)).toMatchObject({ available: 5, reserved: 0 })
    })

    it('when the provider is down for a while, then the refund is asked again and, once it is back, the return completes without an operator, refunded once', async () => {
      const product = await client.createProduct(admin, { stock: 5, price: 4.44 })
      const orderId = await shippedOrder([{ product, quantity: 1 }])
      const asked = await client.requestReturnOk(customer, orderId, [{ productId: product.id, quantity: 1 }])
      await client.setRefunds('fail')
      expect((await client.receiveReturn(admin, asked.returnId)).status).toBe(202)

      // down until the refund has been asked a second time (its first wait, 1 s, passed unanswered)
      await eventually(
        `the refund of return ${asked.returnId} asked again`,
        async () => {
          const instance = await client.process(admin, 'return', asked.returnId)
          return instance.step === 'refund' && instance.attempt >= 2
        },
        patience,
      )
      expect(await client.providerSummary(orderId)).toMatchObject({ refunds: 0, refunded: 0 })
      await client.setRefunds('succeed')

      const completed = await client.returnReaches(customer, asked.returnId, 'completed', patience)
      expect(completed.refundAmount).toBe(4.44)
      expect(await client.providerSummary(orderId)).toMatchObject({
        refunds: 1,
        refunded: cents(product.price),
      })
      const instance = await client.process(admin, 'return', asked.returnId)
      expect(instance.escalated).toBe(false)
      expect((instance.log ?? []).some((line) => line.outcome === 'operator')).toBe(false)
      await client.stockReaches(product.id, { available: 5, reserved: 0 }, patience)
      expect(await client.providerSummary(orderId)).toMatchObject({
        refunds: 1,
        refunded: cents(product.price),
      })
    })
  })
})
