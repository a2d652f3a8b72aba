// API scopes at payment, from its OpenAPI document; and an API key served here (a card payment against the
// provider's simulator for an order awaiting payment, then read back), resolved at auth through Consul by the kit.
import { randomUUID } from 'node:crypto'
import { createPaymentSimulator } from '@meridian/infra/payment-simulator'
import { describeServiceScopes } from '@meridian/testkit'
import { expect } from 'vitest'
import { buildPaymentTestApp } from './support/app.ts'
import { orderAwaitingPayment } from './support/orders.ts'
import { card, cards } from './support/provider.ts'

describeServiceScopes({
  service: 'payment',
  async build(env) {
    const provider = await createPaymentSimulator({ port: 0 })
    try {
      const payment = await buildPaymentTestApp({ ...env, STRIPE_API_BASE: provider.url })
      return {
        ...payment,
        async close() {
          await payment.close()
          await provider.close()
        },
      }
    } catch (error) {
      await provider.close()
      throw error
    }
  },
  async served({ built, keyFor }) {
    const payer = randomUUID()
    // payment pays only an order it heard of, the caller's, awaiting payment, for what is due
    const order = await orderAwaitingPayment(built, { customerId: payer, total: 19.99 })
    const paid = await built.app.inject({
      method: 'POST',
      url: '/api/v1/payments',
      headers: {
        'x-api-key': keyFor({ scopes: ['payments:write'], role: 'user', subject: payer }),
        'idempotency-key': randomUUID(),
        'content-type': 'application/json',
      },
      payload: {
        orderId: order.orderId,
        amount: order.total,
        currency: 'usd',
        source: { card: card(cards.succeeds) },
      },
    })
    expect(paid.statusCode).toBe(201)
    const read = await built.app.inject({
      method: 'GET',
      url: paid.headers.location as string,
      headers: { 'x-api-key': keyFor({ scopes: ['payments:read'], role: 'user', subject: payer }) },
    })
    expect(read.statusCode).toBe(200)
    expect(read.json()).toEqual(paid.json())
  },
})
