// The payment provider of the payment tests: infra's simulator, in process on a free port, and what the tests read
// back from it (an order's charges and refunds), plus a port nothing listens on (the provider down).
import { createServer } from 'node:net'
import type { OrderSummary } from '@meridian/infra/payment-simulator'

/** Test cards of the simulator (infra/src/payment-simulator/README.md). */
export const cards = {
  succeeds: '4242424242424242',
  delayed: '4000000000000077',
  declined: '4000000000000002',
  rateLimited: '4000000000000341',
  providerError: '4000000000000119',
  hangs: '4000000000000259',
} as const

export const card = (number: string) => ({ number, expMonth: 12, expYear: 2099, cvc: '123' })

/** What the provider charged and refunded for an order: `charges` counts succeeded charges only. */
export async function orderSummary(providerUrl: string, orderId: string): Promise<OrderSummary> {
  const answer = await fetch(`${providerUrl}/v1/orders/${encodeURIComponent(orderId)}/summary`)
  if (!answer.ok) throw new Error(`the provider answered ${answer.status} to the summary of ${orderId}`)
  return (await answer.json()) as OrderSummary
}

/**
 * A payment method (pm_…) made straight at the provider, as the provider's elements make it in a client's browser:
 * Stripe's POST /v1/payment_methods, form-encoded, with a publishable key (the `key` parameter, as Stripe.js sends it).
 */
export async function providerToken(providerUrl: string, number: string): Promise<string> {
  const { expMonth, expYear, cvc } = card(number)
  const answer = await fetch(`${providerUrl}/v1/payment_methods`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      type: 'card',
      'card[number]': number,
      'card[exp_month]': String(expMonth),
      'card[exp_year]': String(expYear),
      'card[cvc]': cvc,
      key: 'pk_test_meridian_tests',
    }),
  })
  if (answer.status !== 200) throw new Error(`the provider answered ${answer.status} to a payment method`)
  return ((await answer.json()) as { id: string }).id
}

/** A local port that was free a moment ago and that nothing listens on. */
export async function closedPort(): Promise<number> {
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const address = server.address()
  await new Promise<void>((resolve) => server.close(() => resolve()))
  if (typeof address !== 'object' || address === null) throw new Error('no port')
  return address.port
}
