// Exchanges end to end, through the gateway only: a line of a shipped order sent back for another product — at a
// higher price (the rise charged at the provider under the exchange's own id), a lower one (the fall refunded on the
// order, once) and the same; the replacement out of stock (the exchange fails, nothing charged, the line free again);
// a declined rise (the held replacement released); the goods never arriving (escalated to operators, retried by one,
// then received); an operator's cancel before receipt (the charge refunded, the stock released); and who may do what.
// Stock, provider counters, the customer's notifications and the operators' process API are read as a client would.
// Timings: an exchange's steps wait 1, 2, 4, 8 s (4 attempts); its goods 5 s before operators are told
// (src/global-setup.ts, returnSettings and exchangeSettings).
import type { Exchange, Product } from '@meridian/contracts'
import { eventually, scaledMs } from '@meridian/testkit'
import { beforeAll, describe, expect, inject, it } from 'vitest'
import { type Caller, type Customer, cards, e2eClient } from '../src/client.ts'
import '../src/system-context.ts'

const system = inject('system')
const client = e2eClient(system)
const patience = scaledMs(60_000)
const cents = (amount: number) => Math.round(amount * 100)

describe('exchanges through the gateway', () => {
  let admin: Caller
  let customer: Customer

  beforeAll(async () => {
    admin = await client.loginAdmin()
    customer = await client.registerCustomer()
  })

  /** An order of `quantity` of the product placed by the customer and shipped; its id. */
  async function shippedOrder(product: Product, quantity = 1, by: Customer = customer): Promise<string> {
    const orderId = await client.placeOrderOk(by, { product, quantity, card: cards.good })
    await client.orderReaches(by, orderId, 'shipped', patience)
    // inventory hears shipment.created on its own: the order's stock has left before the exchange is asked
    await client.stockReaches(product.id, { available: product.available - quantity, reserved: 0 }, patience)
    return orderId
  }

  /** Asks for the exchange of `quantity` of `from` for `to` and fails unless it is taken (202, its Location). */
  async function exchangeOk(
    orderId: string,
    from: Product,
    to: Product,
    quantity = 1,
    paymentToken?: string,
  ) {
    const asked = await client.requestExchange(
      customer,
      orderId,
      [{ productId: from.id, quantity, replacementProductId: to.id }],
      paymentToken,
    )
    expect(asked.status, JSON.stringify(asked.body)).toBe(202)
    expect(asked.headers.get('location')).toBe(`/api/v1/exchanges/${asked.body.exchangeId}`)
    return asked.body
  }

  /** The exchange received by an admin once its replacements are held, then completed; the completed exchange. */
  async function receivedAndCompleted(exchange: Exchange): Promise<Exchange> {
    await client.exchangeReaches(customer, exchange.exchangeId, 'awaiting_goods', patience)
    const received = await client.receiveExchange(admin, exchange.exchangeId)
    expect(received.status, JSON.stringify(received.body)).toBe(202)
    expect(['received', 'completed']).toContain(received.body.status)
    return client.exchangeReaches(customer, exchange.exchangeId, 'completed', patience)
  }

  it('when a line is exchanged for a dearer product, then the rise is charged once under the exchange, the replacement ships, the returned line is back in stock, and the customer is told at each step', async () => {
    const cheap = await client.createProduct(admin, { stock: 10, price: 10 })
    const dear = await client.createProduct(admin, { stock: 5, price: 14.5 })
    const orderId = await shippedOrder(cheap)
    const order = await client.readOrder(customer, orderId)
    expect(order._links.exchanges).toEqual({ href: `/api/v1/orders/${orderId}/exchanges`, method: 'POST' })

    const exchange = await exchangeOk(orderId, cheap, dear)
    expect(exchange).toMatchObject({
      orderId,
      status: 'requested',
      items: [
        {
          productId: cheap.id,
          quantity: 1,
          price: 10,
          replacementProductId: dear.id,
          replacementPrice: 14.5,
        },
      ],
      charge: 4.5,
      refund: 0,
      _links: { self: { href: `/api/v1/exchanges/${exchange.exchangeId}`, method: 'GET' } },
    })
    const held = await client.exchangeReaches(customer, exchange.exchangeId, 'awaiting_goods', patience)
    expect(held._links.receive).toEqual({
      href: `/api/v1/exchanges/${exchange.exchangeId}/receive`,
      method: 'POST',
    })
    // the rise is charged under the exchange's own id; the order's charge is untouched
    expect(await client.providerSummary(exchange.exchangeId)).toMatchObject({
      charges: 1,
      charged: 450,
      refunds: 0,
    })
    expect(await client.providerSummary(orderId)).toMatchObject({ charges: 1, charged: 1000, refunds: 0 })
    await client.notificationReaches(customer, 'exchange_requested', exchange.exchangeId, patience)
    await client.notificationReaches(customer, 'exchange_awaiting_goods', exchange.exchangeId, patience)

    const completed = await receivedAndCompleted(exchange)
    expect(completed._links.receive).toBeUndefined()
    await client.stockReaches(cheap.id, { available: 10, reserved: 0 }, patience)
    await client.stockReaches(dear.id, { available: 4, reserved: 0 }, patience)
    expect(await client.providerSummary(exchange.exchangeId)).toMatchObject({
      charges: 1,
      charged: 450,
      refunds: 0,
    })
    await client.notificationReaches(customer, 'exchange_completed', exchange.exchangeId, patience)
    // the replacement's shipment is the exchange's: its customer is told of it as of an order's
    await client.notificationReaches(customer, 'shipment_created', exchange.exchangeId, patience)

    // the operators see it among the processes, completed, with its step log
    const instance = await client.process(admin, 'exchange', exchange.exchangeId)
    expect(instance).toMatchObject({ type: 'exchange', state: 'completed', step: null })
    expect(instance.log?.map((line) => `${line.step}:${line.outcome}`)).toEqual(
      expect.arrayContaining([
        'reserve:succeeded',
        'charge:succeeded',
        'receipt:succeeded',
        'ship:succeeded',
      ]),
    )
    // and nothing of it is left to exchange or to return
    const again = await client.requestExchange(customer, orderId, [
      { productId: cheap.id, quantity: 1, replacementProductId: dear.id },
    ])
    expect(again.status).toBe(422)
    const returned = await client.requestReturn(customer, orderId, [{ productId: cheap.id, quantity: 1 }])
    expect(returned.status).toBe(422)
  })

  it('when a line is exchanged for a cheaper product, then the fall is refunded on the order once and nothing is charged', async () => {
    const dear = await client.createProduct(admin, { stock: 10, price: 20 })
    const cheap = await client.createProduct(admin, { stock: 10, price: 12.25 })
    const orderId = await shippedOrder(dear, 2)
    const exchange = await exchangeOk(orderId, dear, cheap, 2)
    expect(exchange).toMatchObject({ charge: 0, refund: 15.5 })
    await receivedAndCompleted(exchange)
    expect(await client.providerSummary(orderId)).toMatchObject({
      charges: 1,
      charged: 2 * cents(20),
      refunds: 1,
      refunded: 1550,
    })
    expect(await client.providerSummary(exchange.exchangeId)).toMatchObject({ charges: 0, charged: 0 })
    await client.stockReaches(dear.id, { available: 10, reserved: 0 }, patience)
    await client.stockReaches(cheap.id, { available: 8, reserved: 0 }, patience)
  })

  it('when a line is exchanged for a product of the same price, then nothing is charged or refunded', async () => {
    const one = await client.createProduct(admin, { stock: 10, price: 9.99 })
    const other = await client.createProduct(admin, { stock: 10, price: 9.99 })
    const orderId = await shippedOrder(one)
    const exchange = await exchangeOk(orderId, one, other)
    expect(exchange).toMatchObject({ charge: 0, refund: 0 })
    await receivedAndCompleted(exchange)
    expect(await client.providerSummary(orderId)).toMatchObject({ charges: 1, refunds: 0 })
    expect(await client.providerSummary(exchange.exchangeId)).toMatchObject({ charges: 0, refunds: 0 })
  })

  it('when the replacement is out of stock, then the exchange fails at its reservation, nothing is charged, the customer is told, and the line can be exchanged or returned again', async () => {
    const kept = await client.createProduct(admin, { stock: 10, price: 10 })
    const scarce = await client.createProduct(admin, { stock: 0, price: 30 })
    const orderId = await shippedOrder(kept)
    const exchange = await exchangeOk(orderId, kept, scarce)
    const failed = await client.exchangeReaches(customer, exchange.exchangeId, 'failed', patience)
    expect(failed.failureReason).toEqual(expect.any(String))
    expect(failed._links.receive).toBeUndefined()
    expect(await client.providerSummary(exchange.exchangeId)).toMatchObject({ charges: 0, charged: 0 })
    await client.notificationReaches(customer, 'exchange_failed', exchange.exchangeId, patience)
    const instance = await client.process(admin, 'exchange', exchange.exchangeId)
    expect(instance).toMatchObject({ state: 'failed', failedStep: 'reserve' })
    await eventually(
      'the failed exchange compensated',
      async () => (await client.process(admin, 'exchange', exchange.exchangeId)).compensation === 'done',
      patience,
    )
    // its goods can no longer be received
    expect((await client.receiveExchange(admin, exchange.exchangeId)).status).toBe(409)
    // the line is free again
    const returned = await client.requestReturn(customer, orderId, [{ productId: kept.id, quantity: 1 }])
    expect(returned.status, JSON.stringify(returned.body)).toBe(202)
  })

  it('when the rise is declined, then the exchange fails at its charge, the held replacement is released, and nothing is charged', async () => {
    const cheap = await client.createProduct(admin, { stock: 10, price: 5 })
    const dear = await client.createProduct(admin, { stock: 3, price: 25 })
    const orderId = await shippedOrder(cheap)
    const declined = await client.tokenizeCard(cards.declined)
    const exchange = await exchangeOk(orderId, cheap, dear, 1, declined)
    const failed = await client.exchangeReaches(customer, exchange.exchangeId, 'failed', patience)
    expect(failed.failureReason).toEqual(expect.any(String))
    await eventually(
      'the failed exchange compensated',
      async () => (await client.process(admin, 'exchange', exchange.exchangeId)).compensation === 'done',
      patience,
    )
    expect(await client.process(admin, 'exchange', exchange.exchangeId)).toMatchObject({
      failedStep: 'charge',
    })
    await client.stockReaches(dear.id, { available: 3, reserved: 0 }, patience)
    expect(await client.providerSummary(exchange.exchangeId)).toMatchObject({ charges: 0, charged: 0 })
    // the customer is told of the declined payment and of the failed exchange
    await client.notificationReaches(customer, 'exchange_failed', exchange.exchangeId, patience)
    await client.notificationReaches(customer, 'payment_failed', exchange.exchangeId, patience)
  })

  it('when the goods never arrive, then the exchange is escalated to operators; an operator retry asks again, and a late receipt still completes it', async () => {
    const one = await client.createProduct(admin, { stock: 10, price: 8 })
    const other = await client.createProduct(admin, { stock: 10, price: 8 })
    const orderId = await shippedOrder(one)
    const exchange = await exchangeOk(orderId, one, other)
    await eventually(
      `exchange ${exchange.exchangeId} among the escalated exchanges`,
      async () =>
        (await client.processes(admin, 'type=exchange&escalated=true&limit=100')).some(
          (each) => each.id === exchange.exchangeId,
        ),
      patience,
    )
    const escalated = await client.process(admin, 'exchange', exchange.exchangeId)
    expect(escalated).toMatchObject({ state: 'awaiting_goods', step: 'receipt', escalated: true })
    // an operator may retry the wait (the customer is reminded) or cancel it: both are offered
    const instanceHref = `/api/v1/admin/processes/exchange/${exchange.exchangeId}`
    expect(escalated._links.retry).toEqual({ href: `${instanceHref}/retry`, method: 'POST' })
    expect(escalated._links.compensate).toEqual({ href: `${instanceHref}/compensate`, method: 'POST' })

    const retried = await client.retryProcess(admin, 'exchange', exchange.exchangeId)
    expect(retried.status, JSON.stringify(retried.body)).toBe(202)
    expect(retried.body).toMatchObject({ step: 'receipt', attempt: 1, escalated: false })

    await receivedAndCompleted(exchange)
    const after = await client.process(admin, 'exchange', exchange.exchangeId)
    expect(after).toMatchObject({ state: 'completed', escalated: false })
  })

  it('when an operator cancels an exchange before its goods arrive, then its charge is refunded and its replacement released; once received it can no longer be cancelled', async () => {
    const cheap = await client.createProduct(admin, { stock: 10, price: 4 })
    const dear = await client.createProduct(admin, { stock: 6, price: 6 })
    const orderId = await shippedOrder(cheap)
    const exchange = await exchangeOk(orderId, cheap, dear)
    await client.exchangeReaches(customer, exchange.exchangeId, 'awaiting_goods', patience)
    expect(await client.providerSummary(exchange.exchangeId)).toMatchObject({ charges: 1, charged: 200 })

    const cancelled = await client.compensateProcess(
      admin,
      'exchange',
      exchange.exchangeId,
      'customer changed mind',
    )
    expect(cancelled.status, JSON.stringify(cancelled.body)).toBe(202)
    await client.exchangeReaches(customer, exchange.exchangeId, 'failed', patience)
    await client.providerSummaryReaches(
      exchange.exchangeId,
      'the rise refunded',
      (summary) => summary.refunds === 1 && summary.refunded === 200,
      patience,
    )
    await client.stockReaches(dear.id, { available: 6, reserved: 0 }, patience)

    // a received exchange is not cancelled: the operators' view offers no compensate, and asking is 409
    const other = await exchangeOk(orderId, cheap, cheap)
    await receivedAndCompleted(other)
    const done = await client.process(admin, 'exchange', other.exchangeId)
    expect(done._links.compensate).toBeUndefined()
    const refused = await client.compensateProcess(admin, 'exchange', other.exchangeId, 'too late')
    expect(refused.status).toBe(409)
  })

  it('when the order has not shipped, then an exchange is 409; another customer gets 404; a customer cannot receive goods (403); without a credential 401; a line beyond the order or an unknown replacement is 422 naming it', async () => {
    const product = await client.createProduct(admin, { stock: 10, price: 3 })
    const line = (quantity = 1, replacementProductId = product.id) => [
      { productId: product.id, quantity, replacementProductId },
    ]
    // an order that cannot ship: its payment is declined
    const unshipped = await client.placeOrderOk(customer, { product, card: cards.declined })
    await client.orderReaches(customer, unshipped, 'payment_failed', patience)
    expect((await client.requestExchange(customer, unshipped, line())).status).toBe(409)

    const orderId = await shippedOrder(product)
    const stranger = await client.registerCustomer()
    expect((await client.requestExchange(stranger, orderId, line())).status).toBe(404)
    expect((await client.requestExchange({ email: 'none', token: '' }, orderId, line())).status).toBe(401)

    const beyond = await client.requestExchange(customer, orderId, line(2))
    expect(beyond.status).toBe(422)
    expect(JSON.stringify(beyond.body)).toContain('items.0.quantity')
    const unknown = await client.requestExchange(
      customer,
      orderId,
      line(1, '00000000-0000-4000-8000-000000000000'),
    )
    expect(unknown.status).toBe(422)
    expect(JSON.stringify(unknown.body)).toContain('items.0.replacementProductId')

    const exchange = await exchangeOk(orderId, product, product)
    expect((await client.receiveExchange(customer, exchange.exchangeId)).status).toBe(403)
    const read = await client.requestExchange(stranger, orderId, line())
    expect(read.status).toBe(404)
    await receivedAndCompleted(exchange)
  })
})
