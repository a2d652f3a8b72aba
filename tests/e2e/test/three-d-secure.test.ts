// 3-D Secure through the whole system: an order paid with a card that asks the customer to authenticate waits as
// payment_action_required with `_links.authenticate` (the provider's page); confirmed there, it ships; refused, or
// left until the payment service's deadline (shortened for this suite: authenticationSettings), its payment fails,
// nothing is charged and no stock is held. Then the same in Chromium through the console: the order's row offers
// the provider's page, the customer confirms in the window it opens, and the console shows the order shipped.
import type { Order } from '@meridian/contracts'
import { scaledMs } from '@meridian/testkit'
import type { Browser } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest'
import { type Caller, type Customer, e2eClient } from '../src/client.ts'
import { launchChromium, newCustomer, signInToOrders } from '../src/console-browser.ts'
import '../src/system-context.ts'

const system = inject('system')
const client = e2eClient(system)
// the tests' scaled wait for what the system does in its own time
const patience = scaledMs(60_000)
/** Stripe's test payment method whose card always asks for 3-D Secure (the simulator knows it) */
const threeDSecure = 'pm_card_threeDSecure2Required'
/** the simulator's own card number of the same behaviour, as the console's card list offers it */
const threeDSecureNumber = '4000002760003184'

let admin: Caller
let customer: Customer
let browser: Browser | undefined

beforeAll(async () => {
  admin = await client.loginAdmin()
  customer = await client.registerCustomer()
})

afterAll(async () => {
  await browser?.close()
})

/** The customer on the provider's page: the page shows the amount, its form confirms or refuses. */
async function authenticate(order: Order, outcome: 'confirm' | 'refuse'): Promise<void> {
  const href = order._links.authenticate?.href
  if (!href) throw new Error(`order ${order.id} offers no authentication: ${JSON.stringify(order._links)}`)
  const page = await fetch(href)
  expect(page.status).toBe(200)
  expect(await page.text()).toContain(order.total.toFixed(2))
  const answer = await fetch(`${href}/complete`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: `outcome=${outcome}`,
    redirect: 'manual',
  })
  // back to the shop's order page (PAYMENT_RETURN_URL), as Stripe sends the browser
  expect(answer.status).toBe(303)
}

describe('3-D Secure', () => {
  it('when the card asks for authentication, then the order waits with the provider page; confirmed it ships, refused or left past the deadline its payment fails with nothing charged or held', async () => {
    const product = await client.createProduct(admin, { stock: 10 })
    // the one left alone first: its deadline runs while the others are answered
    const ignored = await client.placeOrderOk(customer, { product, paymentToken: threeDSecure })
    const confirmed = await client.placeOrderOk(customer, {
      product,
      quantity: 2,
      paymentToken: threeDSecure,
    })
    const refused = await client.placeOrderOk(customer, { product, paymentToken: threeDSecure })

    const waiting = await client.orderReaches(customer, confirmed, 'payment_action_required', patience)
    expect(waiting._links).toMatchObject({
      authenticate: { href: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+\/3ds\/pi_/), method: 'GET' },
      cancel: { href: `/api/v1/orders/${confirmed}/cancel`, method: 'POST' },
    })
    expect(await client.providerSummary(confirmed)).toMatchObject({ charges: 0 })
    await authenticate(waiting, 'confirm')
    await authenticate(
      await client.orderReaches(customer, refused, 'payment_action_required', patience),
      'refuse',
    )

    const shipped = await client.orderReaches(customer, confirmed, 'shipped', patience)
    expect(shipped._links.authenticate).toBeUndefined()
    expect(await client.providerSummary(confirmed)).toMatchObject({
      charges: 1,
      charged: Math.round(product.price * 100) * 2,
    })

    const failed = await client.orderReaches(customer, refused, 'payment_failed', patience)
    expect(failed._links.authenticate).toBeUndefined()
    expect(await client.providerSummary(refused)).toMatchObject({ charges: 0 })

    // nobody answered: the payment service cancels it at its deadline and the order's payment fails
    await client.orderReaches(customer, ignored, 'payment_failed', patience)
    expect(await client.providerSummary(ignored)).toMatchObject({ charges: 0 })
    // only the confirmed order's two units left the stock; nothing is held for the failed ones
    await client.stockReaches(product.id, { available: 8, reserved: 0 }, patience)
  })

  it('when a customer chooses the 3-D Secure card in the console, then the row offers the provider page, and confirmed in the window it opens, the order is shipped on the page', async () => {
    browser = await launchChromium()
    const buyer = await newCustomer(client)
    const product = await client.createProduct(admin, { stock: 5 })
    const page = await browser.newPage({ viewport: { width: 1100, height: 800 } })
    try {
      await signInToOrders(page, system.gatewayUrl, buyer.email, buyer.password)
      await page.getByLabel('Product').selectOption(product.id)
      await page.getByLabel('Test card').selectOption(threeDSecureNumber)
      await page.getByRole('button', { name: 'Place order' }).click()

      const row = page.locator('tr[data-order-id]').first()
      const link = row.locator('a[data-action="authenticate"]')
      await link.waitFor({ timeout: patience })
      expect(await row.locator('td[data-status]').getAttribute('data-status')).toBe('payment_action_required')

      const [provider] = await Promise.all([page.waitForEvent('popup'), link.click()])
      await provider.getByRole('button', { name: 'Complete authentication' }).click()
      await provider.waitForURL(/payment_intent=pi_/, { timeout: patience })
      await provider.close()

      await expect
        .poll(() => row.locator('td[data-status]').getAttribute('data-status'), {
          timeout: patience,
          interval: 500,
        })
        .toBe('shipped')
      expect(await link.count()).toBe(0)
    } finally {
      await page.close()
    }
  })
})
