// Paying an order through the gateway: an order whose card was declined, paid by its customer with another card,
// moves on to shipped and links its payment and its shipment (each readable by the customer at the link); payments
// that must not be made — an order the saga paid already, another customer's order, the wrong amount, an order that
// does not exist — are refused and the provider holds nothing more.
import { randomUUID } from 'node:crypto'
import type { Payment, Shipment } from '@meridian/contracts'
import { beforeAll, describe, expect, inject, it } from 'vitest'
import { type Caller, type Customer, cards, e2eClient } from '../src/client.ts'
import '../src/system-context.ts'
import { scaledMs } from '@meridian/testkit'

const client = e2eClient(inject('system'))
// the tests' scaled wait for what the system does in its own time
const patience = scaledMs(60_000)
const cents = (amount: number) => Math.round(amount * 100)

describe('paying an order through the gateway', () => {
  let admin: Caller
  let customer: Customer

  beforeAll(async () => {
    admin = await client.loginAdmin()
    customer = await client.registerCustomer()
  })

  it('when the card was declined and the customer pays with another, then the order ships, and it links its payment and shipment', async () => {
    const product = await client.createProduct(admin, { stock: 3 })
    const orderId = await client.placeOrderOk(customer, { product, quantity: 2, card: cards.declined })
    const declined = await client.orderReaches(customer, orderId, 'payment_failed', patience)
    expect(declined._links.payment).toBeUndefined()

    const paid = await client.pay(customer, { orderId, amount: declined.total })
    expect(paid.status, JSON.stringify(paid.body)).toBe(201)
    const { paymentId } = paid.body

    const shipped = await client.orderReaches(customer, orderId, 'shipped', patience)
    const shipment = await client.shipmentOf(admin, orderId, patience)
    expect(shipped._links).toEqual({
      self: { href: `/api/v1/orders/${orderId}`, method: 'GET' },
      payment: { href: `/api/v1/payments/${paymentId}`, method: 'GET' },
      shipment: { href: `/api/v1/shipments/${shipment.id}`, method: 'GET' },
      returns: { href: `/api/v1/orders/${orderId}/returns`, method: 'POST' },
      exchanges: { href: `/api/v1/orders/${orderId}/exchanges`, method: 'POST' },
    })
    // the customer follows the links
    const payment = await client.request<Payment>('GET', shipped._links.payment?.href ?? '', {
      token: customer.token,
    })
    expect(payment.status).toBe(200)
    expect(payment.body).toMatchObject({ paymentId, orderId, status: 'succeeded', amount: declined.total })
    const followed = await client.request<Shipment>('GET', shipped._links.shipment?.href ?? '', {
      token: customer.token,
    })
    expect(followed.status).toBe(200)
    expect(followed.body).toMatchObject({ id: shipment.id, orderId })

    expect(await client.providerSummary(orderId)).toMatchObject({
      charges: 1,
      charged: cents(product.price) * 2,
      refunds: 0,
    })
    // inventory hears shipment.created on its own: the held units leave once it has
    await client.stockReaches(product.id, { available: 1, reserved: 0 }, patience)
  })

  it('when a payment names an order the saga paid, another customer order, the wrong amount or no order, then 409, 404, 422 and 404, and the provider holds one charge', async () => {
    const product = await client.createProduct(admin, { stock: 3 })
    const orderId = await client.placeOrderOk(customer, { product, card: cards.good })
    const paidBySaga = await client.orderReaches(customer, orderId, ['paid', 'reserved', 'shipped'], patience)
    expect(paidBySaga._links.payment).toEqual({
      href: expect.stringMatching(/^\/api\/v1\/payments\//),
      method: 'GET',
    })

    const again = await client.pay(customer, { orderId, amount: paidBySaga.total })
    expect(again.status, JSON.stringify(again.body)).toBe(409)
    expect(again.body).toMatchObject({ success: false, error: { code: 'CONFLICT' } })

    const stranger = await client.registerCustomer()
    const theirs = await client.pay(stranger, { orderId, amount: 1 })
    expect(theirs.status, JSON.stringify(theirs.body)).toBe(404)

    const declinedId = await client.placeOrderOk(customer, { product, card: cards.declined })
    const declined = await client.orderReaches(customer, declinedId, 'payment_failed', patience)
    const wrong = await client.pay(customer, { orderId: declinedId, amount: declined.total + 100 })
    expect(wrong.status, JSON.stringify(wrong.body)).toBe(422)
    expect(wrong.body).toMatchObject({ error: { code: 'VALIDATION_ERROR', details: [{ field: 'amount' }] } })

    const nowhere = randomUUID()
    const unknown = await client.pay(customer, { orderId: nowhere, amount: 999.99 })
    expect(unknown.status, JSON.stringify(unknown.body)).toBe(404)

    expect(await client.providerSummary(orderId)).toMatchObject({ charges: 1, refunds: 0 })
    expect(await client.providerSummary(declinedId)).toMatchObject({ charges: 0 })
    expect(await client.providerSummary(nowhere)).toMatchObject({ charges: 0, failedCharges: 0 })
  })
})
