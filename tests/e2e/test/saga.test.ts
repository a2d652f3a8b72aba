// The order saga end to end, through the gateway only: an order paid, reserved, shipped and delivered; and every way
// it can go wrong ending in a consistent state — nothing charged that is not refunded, no stock held for an order
// that will not ship. Timings: the saga's steps time out after 4 s, 3 attempts; the hanging card charges 20 s after
// the call; payment reconciles a charge of unknown outcome once it is 6 s old, every second (src/global-setup.ts).
import { randomUUID } from 'node:crypto'
import { setTimeout as sleep } from 'node:timers/promises'
import { beforeAll, describe, expect, inject, it } from 'vitest'
import { type Caller, type Customer, cards, e2eClient, type ProviderSummary } from '../src/client.ts'
import { simulatorSettings } from '../src/global-setup.ts'
import '../src/system-context.ts'
import { scaledMs } from '@meridian/testkit'

const client = e2eClient(inject('system'))
// the tests' scaled wait for what the system does in its own time
const patience = scaledMs(60_000)
const cents = (amount: number) => Math.round(amount * 100)
/** every charge the provider made for the order was given back */
const allRefunded = (summary: ProviderSummary) =>
  summary.refunds === summary.charges && summary.refunded === summary.charged

describe('the order saga', () => {
  let admin: Caller
  let customer: Customer

  beforeAll(async () => {
    admin = await client.loginAdmin()
    customer = await client.registerCustomer()
  })

  it('when an order is paid and its stock reserved, then it ships, and once its shipment is delivered it is delivered', async () => {
    const product = await client.createProduct(admin, { stock: 5 })
    const orderId = await client.placeOrderOk(customer, { product, quantity: 2, card: cards.good })

    await client.orderReaches(customer, orderId, 'shipped', patience)
    // order and inventory each hear shipment.created on their own: the held units leave once inventory has
    await client.stockReaches(product.id, { available: 3, reserved: 0 }, patience)
    const summary = await client.providerSummary(orderId)
    expect(summary).toMatchObject({ charges: 1, charged: cents(product.price) * 2, refunds: 0 })

    const shipment = await client.shipmentOf(admin, orderId, patience)
    expect(shipment).toMatchObject({ orderId, status: 'created' })
    const delivered = await client.deliverShipment(admin, shipment.id)
    expect(delivered).toMatchObject({ id: shipment.id, orderId, status: 'delivered' })

    const order = await client.orderReaches(customer, orderId, 'delivered', patience)
    expect(order._links.cancel).toBeUndefined()
    expect(order._links.shipment).toEqual({ href: `/api/v1/shipments/${shipment.id}`, method: 'GET' })
    expect(order._links.payment).toEqual({
      href: expect.stringMatching(/^\/api\/v1\/payments\//),
      method: 'GET',
    })
    expect((await client.cancelOrder(customer, orderId)).status).toBe(409)
  })

  it('when placing is retried through the gateway with its Idempotency-Key, then the retry answers the same order, which is charged, reserved and shipped once', async () => {
    const product = await client.createProduct(admin, { stock: 5 })
    const idempotencyKey = `retry-${randomUUID()}`
    const first = await client.placeOrder(customer, { product, quantity: 2, idempotencyKey })
    expect(first.status).toBe(201)
    // the client never saw the first answer (a 504): it sends the same request again
    const retry = await client.placeOrder(customer, { product, quantity: 2, idempotencyKey })
    expect(retry.status).toBe(201)
    expect(retry.headers.get('idempotent-replayed')).toBe('true')
    expect(retry.body).toEqual(first.body)
    expect(retry.headers.get('location')).toBe(first.headers.get('location'))
    // another body under the key is refused through the gateway too
    const other = await client.placeOrder(customer, { product, quantity: 1, idempotencyKey })
    expect(other.status).toBe(422)

    const orderId = first.body.orderId
    await client.orderReaches(customer, orderId, 'shipped', patience)
    expect(await client.providerSummary(orderId)).toMatchObject({
      charges: 1,
      charged: cents(product.price) * 2,
    })
    await client.stockReaches(product.id, { available: 3, reserved: 0 }, patience)
  })

  it('when the card is declined, then the order is payment_failed, nothing is charged and the stock is untouched', async () => {
    const product = await client.createProduct(admin, { stock: 5 })
    const orderId = await client.placeOrderOk(customer, { product, quantity: 1, card: cards.declined })

    await client.orderReaches(customer, orderId, 'payment_failed', patience)
    const summary = await client.providerSummary(orderId)
    expect(summary).toMatchObject({ charges: 0, charged: 0, refunds: 0 })
    expect(summary.failedCharges).toBeGreaterThanOrEqual(1)
    expect(await client.readProduct(product.id)).toMatchObject({ available: 5, reserved: 0 })
  })

  it('when the order wants more than the stock, then it fails after payment and the charge is refunded', async () => {
    const product = await client.createProduct(admin, { stock: 2 })
    const orderId = await client.placeOrderOk(customer, { product, quantity: 3, card: cards.good })

    await client.orderReaches(customer, orderId, 'failed', patience)
    const summary = await client.providerSummaryReaches(orderId, 'the charge refunded', allRefunded, patience)
    expect(summary).toMatchObject({ charges: 1, refunds: 1, charged: cents(product.price) * 3 })
    expect(await client.readProduct(product.id)).toMatchObject({ available: 2, reserved: 0 })
  })

  it('when the customer cancels right after placing (slow card), then it is cancelled, refunded if charged, and the stock is back', async () => {
    const product = await client.createProduct(admin, { stock: 5 })
    const orderId = await client.placeOrderOk(customer, { product, quantity: 2, card: cards.slow })

    const cancelled = await client.cancelOrder(customer, orderId)
    expect(cancelled.status, JSON.stringify(cancelled.body)).toBe(202)
    expect(cancelled.body.status).toBe('cancelling')

    await client.orderReaches(customer, orderId, 'cancelled', patience)
    // the slow card charges 2 s after the call, whatever happened in between: whatever was charged is given back
    // (a pause, scaled: whether the call was made at all cannot be waited for through the gateway)
    await sleep(scaledMs(3000))
    const summary = await client.providerSummaryReaches(
      orderId,
      'every charge refunded',
      allRefunded,
      patience,
    )
    expect(summary.charges).toBeLessThanOrEqual(1)
    await client.stockReaches(product.id, { available: 5, reserved: 0 }, patience)
  })

  it('when the provider hangs past every deadline, then the order fails, is charged at most once, and every charge is refunded', async () => {
    const product = await client.createProduct(admin, { stock: 5 })
    const orderId = await client.placeOrderOk(customer, { product, quantity: 1, card: cards.hanging })

    // the saga gives up (3 attempts of 4 s) before the provider answers: the order fails, nothing shipped, and the
    // provider has charged nothing yet (no stopwatch: what the provider holds says the answer had not come)
    await client.orderReaches(customer, orderId, 'failed', patience * 2)
    expect((await client.providerSummary(orderId)).charges).toBe(0)
    // the first call charges when the hang ends, after the refund found nothing to refund: payment's reconciler
    // replays that charge, learns it succeeded and refunds it
    const summary = await client.providerSummaryReaches(
      orderId,
      'the late charge landed and every charge refunded',
      (each) => each.charges >= 1 && allRefunded(each),
      patience + simulatorSettings.hangMs,
    )
    expect(summary.charges).toBeLessThanOrEqual(1)
    expect(summary.refunds).toBe(summary.charges)
    await client.stockReaches(product.id, { available: 5, reserved: 0 }, patience)
    expect((await client.readOrder(customer, orderId)).status).toBe('failed')
  })

  it(
    'when 50 orders of one unit race for 10 in stock, then exactly 10 ship and 40 fail with their charges refunded',
    async () => {
      const product = await client.createProduct(admin, { stock: 10 })
      const customers = await Promise.all(Array.from({ length: 5 }, () => client.registerCustomer()))
      const orderIds = await Promise.all(
        Array.from({ length: 50 }, (_, index) =>
          client.placeOrderOk(customers[index % customers.length] as Customer, { product, quantity: 1 }),
        ),
      )

      const ends = await Promise.all(
        orderIds.map(async (orderId, index) => {
          const owner = customers[index % customers.length] as Customer
          const order = await client.orderReaches(owner, orderId, ['shipped', 'failed'], patience * 3)
          return { orderId, status: order.status }
        }),
      )
      const shipped = ends.filter((end) => end.status === 'shipped')
      const failed = ends.filter((end) => end.status === 'failed')
      expect(shipped).toHaveLength(10)
      expect(failed).toHaveLength(40)

      for (const { orderId } of failed) {
        const summary = await client.providerSummaryReaches(
          orderId,
          'its charge refunded',
          allRefunded,
          patience,
        )
        expect(summary).toMatchObject({ charges: 1, refunds: 1 })
      }
      for (const { orderId } of shipped) {
        expect(await client.providerSummary(orderId)).toMatchObject({ charges: 1, refunds: 0 })
      }
      // the shipped units left the warehouse: nothing available, nothing held
      await client.stockReaches(product.id, { available: 0, reserved: 0 }, patience)
    },
    scaledMs(300_000),
  )
})
