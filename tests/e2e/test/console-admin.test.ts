// The console's admin views in Chromium: the Dashboard's charts following the live figures of the realtime channel's
// /dashboard while requests are made, the Processes view finding a declined order's failed saga and showing its payment
// step failing in the step log (and, with the type `return` chosen, a return's process and its log; with `exchange`,
// an exchange cancelled from its page), and Dead letters
// replaying an event the realtime channel's consumer gave up on, and Audit showing an admin's stock adjustment.
// Screenshots go to tests/e2e/artifacts/ (not committed).
import {
  type DeadLetterTopics,
  type Exchange,
  exchangeStatuses,
  type Return,
  returnStatuses,
} from '@meridian/contracts'
import type { Browser, Locator, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest'
import { type Caller, cards, e2eClient } from '../src/client.ts'
import { artifacts, launchChromium, sidewaysScroll, signInToOrders } from '../src/console-browser.ts'
import { sendUnacceptableNotification } from '../src/dead-letters.ts'
import '../src/system-context.ts'
import { scaledMs } from '@meridian/testkit'

const system = inject('system')
const client = e2eClient(system)
// the tests' scaled wait for what the system does in its own time
const patience = scaledMs(60_000)

let browser: Browser
let admin: Caller

beforeAll(async () => {
  browser = await launchChromium()
  admin = await client.loginAdmin()
})

afterAll(async () => {
  await browser?.close()
})

/** A page with the system's administrator signed in on the form, showing the first view. */
async function adminPage(): Promise<Page> {
  const page = await browser.newPage({ viewport: { width: 1100, height: 900 } })
  await signInToOrders(page, system.gatewayUrl, system.admin.email, system.admin.password)
  return page
}

const readingsOf = async (chart: Locator) => Number(await chart.getAttribute('data-points'))

/** A new customer's order of a new product, paid with `card`: the customer and the order id. */
async function orderPaidWith(card: string) {
  const customer = await client.registerCustomer()
  const product = await client.createProduct(admin, { stock: 3 })
  return { customer, orderId: await client.placeOrderOk(customer, { product, card }) }
}

/** Opens the order's saga from the Processes list the page shows: its section, once shown. */
async function openSaga(page: Page, orderId: string): Promise<Locator> {
  const row = page.locator(`tr[data-order-id="${orderId}"]`)
  await row.waitFor({ timeout: scaledMs(15_000) })
  await row.getByRole('button', { name: orderId }).click()
  const saga = page.locator(`section[data-order-id="${orderId}"]`)
  await saga.waitFor({ timeout: scaledMs(15_000) })
  return saga
}

describe('the console for admins in Chromium', () => {
  it('when the admin watches the Dashboard while requests are made, then its charts take in the new figures', async () => {
    const page = await adminPage()
    try {
      await page.getByRole('link', { name: 'Dashboard' }).click()
      for (const title of ['Active users', 'Requests per second', 'Error rate', 'p95 latency']) {
        await page.getByRole('heading', { name: title, exact: true }).waitFor({ timeout: scaledMs(15_000) })
      }
      const requests = page.locator('section.chart[data-metric="requestsPerSecond"]')
      await expect.poll(() => readingsOf(requests)).toBeGreaterThan(0)
      const before = await readingsOf(requests)

      // some traffic through the gateway while the figures arrive
      for (let round = 0; round < 10; round++) {
        await Promise.all(Array.from({ length: 5 }, () => client.request('GET', '/api/v1/products?limit=5')))
        await new Promise((resolve) => setTimeout(resolve, 300))
      }
      await expect.poll(() => readingsOf(requests), { interval: 500 }).toBeGreaterThanOrEqual(before + 3)

      // the latest value is said in text and in the chart's description, not only drawn
      expect(await requests.locator('.figure-now').textContent()).toMatch(/^\d+(\.\d+)?$/)
      const picture = requests.getByRole('img')
      expect(await picture.getAttribute('aria-label')).toMatch(
        /^Requests per second over the last 5 minutes \(\d+ readings\): now \d+\.\d requests per second$/,
      )
      expect(await picture.locator('path.line').getAttribute('d')).toMatch(/^M/)
      const users = page.locator('section.chart[data-metric="activeUsers"]')
      expect(await users.locator('.figure-now').textContent()).toMatch(/^[1-9]\d*$/)
      await page.screenshot({ path: `${artifacts}dashboard.png`, fullPage: true })
    } finally {
      await page.close()
    }
  })

  it("when a customer's card is declined, then the admin finds the failed saga in Processes and its payment step failing", async () => {
    const { customer, orderId } = await orderPaidWith(cards.declined)
    await client.orderReaches(customer, orderId, 'payment_failed', patience)

    const page = await adminPage()
    try {
      await page.getByRole('link', { name: 'Processes' }).click()
      await page
        .getByRole('heading', { name: 'Processes', exact: true })
        .waitFor({ timeout: scaledMs(15_000) })
      await page.getByLabel('State').selectOption('failed')

      // the list of failed sagas once it has arrived (the unfiltered one showed the order too, and was read once)
      const failedList = page.locator('div[data-state="failed"][aria-busy="false"]')
      await failedList.locator(`tr[data-order-id="${orderId}"]`).waitFor({ timeout: scaledMs(15_000) })
      const states = await failedList
        .locator('table.processes td[data-state]')
        .evaluateAll((cells) => cells.map((cell) => cell.getAttribute('data-state')))
      expect(new Set(states)).toEqual(new Set(['failed']))

      const saga = await openSaga(page, orderId)
      const failing = saga.locator('table.step-log tr[data-step="payment"][data-outcome="failed"]')
      await failing.waitFor({ timeout: scaledMs(15_000) })
      expect(await failing.textContent()).toContain('payment')
      // a failed saga can still be compensated again: the view offers what the saga's links offer
      await saga.getByRole('button', { name: /^Compensate/ }).waitFor({ timeout: scaledMs(5_000) })
      await page.screenshot({ path: `${artifacts}sagas.png`, fullPage: true })
    } finally {
      await page.close()
    }
  })

  it("when an order's payment hangs, then the admin retries the awaited step and then compensates from the saga's page, and the step log records both", async () => {
    // the simulator's hanging card answers after 20 s: the saga waits on its payment step meanwhile
    const { customer, orderId } = await orderPaidWith(cards.hanging)

    const page = await adminPage()
    try {
      await page.getByRole('link', { name: 'Processes' }).click()
      const saga = await openSaga(page, orderId)

      await saga.getByRole('button', { name: 'Retry payment' }).click()
      await saga
        .locator('table.step-log tr[data-step="payment"][data-outcome="operator"]')
        .waitFor({ timeout: scaledMs(15_000) })

      await saga.getByRole('button', { name: /^Compensate/ }).click()
      const undone = saga.locator('table.step-log tr[data-step="order"][data-outcome="operator"]')
      await undone.waitFor({ timeout: scaledMs(15_000) })
      expect(await undone.textContent()).toContain('compensated by an operator')
      await expect
        .poll(() => client.readOrder(customer, orderId).then((order) => order.status), { timeout: patience })
        .toBe('failed')
      await page.screenshot({ path: `${artifacts}saga-actions.png`, fullPage: true })
    } finally {
      await page.close()
    }
  })

  it("when a customer returns part of a shipped order, then the admin picks type return in Processes and finds the return's instance requested, with its log", async () => {
    const customer = await client.registerCustomer()
    const product = await client.createProduct(admin, { stock: 3 })
    const orderId = await client.placeOrderOk(customer, { product, quantity: 2 })
    await client.orderReaches(customer, orderId, ['shipped', 'delivered'], patience)
    const requested = await client.request<Return>('POST', `/api/v1/orders/${orderId}/returns`, {
      token: customer.token,
      body: { items: [{ productId: product.id, quantity: 1 }], reason: 'One was enough' },
    })
    expect(requested.status, JSON.stringify(requested.body)).toBe(202)
    const { returnId } = requested.body

    const page = await adminPage()
    try {
      await page.getByRole('link', { name: 'Processes' }).click()
      await page
        .getByRole('heading', { name: 'Processes', exact: true })
        .waitFor({ timeout: scaledMs(15_000) })
      await page.getByLabel('Type', { exact: true }).selectOption('return')

      // the list of returns once it has arrived: only returns, and the state filter offers a return's states
      const returns = page.locator('div[data-type="return"][aria-busy="false"]')
      const row = returns.locator(`tr[data-process-type="return"][data-process-id="${returnId}"]`)
      await row.waitFor({ timeout: scaledMs(15_000) })
      expect(await row.locator('td[data-state]').getAttribute('data-state')).toBe('requested')
      expect(await row.getAttribute('data-order-id')).toBeNull()
      const types = await returns
        .locator('table.processes tr[data-process-type]')
        .evaluateAll((rows) => rows.map((each) => each.getAttribute('data-process-type')))
      expect(new Set(types)).toEqual(new Set(['return']))
      const states = await page
        .getByLabel('State', { exact: true })
        .locator('option')
        .evaluateAll((options) => options.map((option) => option.getAttribute('value')))
      expect(states).toEqual(['', ...returnStatuses])

      // a requested return waits on no step: escalated only leaves it out, and the whole list shows it again
      const escalatedOnly = page.getByLabel('Escalated only')
      await escalatedOnly.check()
      const escalated = page.locator('div[data-type="return"][data-escalated="true"][aria-busy="false"]')
      await escalated.waitFor({ timeout: scaledMs(15_000) })
      expect(await escalated.locator(`tr[data-process-id="${returnId}"]`).count()).toBe(0)
      await escalatedOnly.uncheck()
      await row.waitFor({ timeout: scaledMs(15_000) })

      await row.getByRole('button', { name: returnId }).click()
      const instance = page.locator(`section[data-process-type="return"][data-process-id="${returnId}"]`)
      await instance.waitFor({ timeout: scaledMs(15_000) })
      expect(await instance.locator('h2').textContent()).toBe(`Return ${returnId}`)
      const started = instance.locator('table.step-log tr[data-step="return"][data-outcome="started"]')
      await started.waitFor({ timeout: scaledMs(15_000) })
      expect(await started.textContent()).toContain('requested')
      // the return's own fields name its order
      expect(await instance.locator('dl.facts').textContent()).toContain(orderId)
      await page.screenshot({ path: `${artifacts}sagas-return.png`, fullPage: true })
    } finally {
      await page.close()
    }
  })

  it('when a customer exchanges a line of a shipped order, then the admin picks type exchange in Processes, finds it waiting for its goods, and cancels it from its page: its log records it and the exchange fails', async () => {
    const customer = await client.registerCustomer()
    const product = await client.createProduct(admin, { stock: 3, price: 7 })
    const replacement = await client.createProduct(admin, { stock: 3, price: 7 })
    const orderId = await client.placeOrderOk(customer, { product })
    await client.orderReaches(customer, orderId, ['shipped', 'delivered'], patience)
    const requested = await client.request<Exchange>('POST', `/api/v1/orders/${orderId}/exchanges`, {
      token: customer.token,
      body: { items: [{ productId: product.id, quantity: 1, replacementProductId: replacement.id }] },
    })
    expect(requested.status, JSON.stringify(requested.body)).toBe(202)
    const { exchangeId } = requested.body
    await client.exchangeReaches(customer, exchangeId, 'awaiting_goods', patience)

    const page = await adminPage()
    try {
      await page.getByRole('link', { name: 'Processes' }).click()
      await page
        .getByRole('heading', { name: 'Processes', exact: true })
        .waitFor({ timeout: scaledMs(15_000) })
      await page.getByLabel('Type', { exact: true }).selectOption('exchange')
      const exchanges = page.locator('div[data-type="exchange"][aria-busy="false"]')
      const row = exchanges.locator(`tr[data-process-type="exchange"][data-process-id="${exchangeId}"]`)
      await row.waitFor({ timeout: scaledMs(15_000) })
      expect(await row.locator('td[data-state]').getAttribute('data-state')).toBe('awaiting_goods')
      const states = await page
        .getByLabel('State', { exact: true })
        .locator('option')
        .evaluateAll((options) => options.map((option) => option.getAttribute('value')))
      expect(states).toEqual(['', ...exchangeStatuses])

      await row.getByRole('button', { name: exchangeId }).click()
      const instance = page.locator(`section[data-process-type="exchange"][data-process-id="${exchangeId}"]`)
      await instance.waitFor({ timeout: scaledMs(15_000) })
      expect(await instance.locator('h2').textContent()).toBe(`Exchange ${exchangeId}`)
      await instance
        .locator('table.step-log tr[data-step="reserve"][data-outcome="succeeded"]')
        .waitFor({ timeout: scaledMs(15_000) })

      await instance.getByRole('button', { name: /^Compensate/ }).click()
      const cancelled = instance.locator('table.step-log tr[data-step="receipt"][data-outcome="failed"]')
      await cancelled.waitFor({ timeout: scaledMs(15_000) })
      expect(await cancelled.textContent()).toContain('cancelled by an operator')
      await client.exchangeReaches(customer, exchangeId, 'failed', patience)
      await client.stockReaches(replacement.id, { available: 3, reserved: 0 }, patience)
      await page.screenshot({ path: `${artifacts}processes-exchange.png`, fullPage: true })
    } finally {
      await page.close()
    }
  })

  it('when a consumer dead-letters an event, then the admin finds it in Dead letters, replays it, and the consumer reads it again', async () => {
    // an event the realtime channel cannot take (its data lacks title, message and createdAt): its consumer parks it
    // in notification.created.dlt at once, as it would any event that can never succeed
    const { namespace } = system.kafka
    const { eventId } = await sendUnacceptableNotification(system.kafka)
    const pending = async () => {
      const { body } = await client.request<DeadLetterTopics>('GET', '/api/v1/admin/dead-letters', {
        token: admin.token,
      })
      return body.data?.find((topic) => topic.topic === 'notification.created.dlt')?.pending ?? 0
    }
    await expect.poll(pending, { interval: 500 }).toBeGreaterThan(0)

    const page = await adminPage()
    try {
      await page.getByRole('link', { name: 'Dead letters' }).click()
      await page
        .getByRole('heading', { name: 'Dead letters', exact: true })
        .waitFor({ timeout: scaledMs(15_000) })
      const topicRow = page.locator('tr[data-topic="notification.created.dlt"]')
      await topicRow.waitFor({ timeout: scaledMs(15_000) })
      await topicRow.getByRole('button', { name: 'notification.created.dlt', exact: true }).click()

      const parked = page.locator(`tr[data-event-id="${eventId}"][data-replayed="false"]`)
      await parked.waitFor({ timeout: scaledMs(15_000) })
      const text = (await parked.textContent()) ?? ''
      expect(text).toContain('notification.created')
      expect(text).toContain('realtime-gateway')
      // the group is shown by its own name, not the run's namespaced one
      expect(text).not.toContain(namespace)
      expect(text).toContain('pending')
      await page.screenshot({ path: `${artifacts}dead-letters.png`, fullPage: true })

      await page
        .getByRole('button', { name: 'Replay the pending events of notification.created.dlt' })
        .click()
      await page
        .getByRole('status')
        .filter({
          hasText: /^Replayed \d+ events? of notification\.created\.dlt to notification\.created\.$/,
        })
        .waitFor({ timeout: scaledMs(30_000) })
      await page
        .locator(`tr[data-event-id="${eventId}"][data-replayed="true"]`)
        .waitFor({ timeout: scaledMs(15_000) })

      // replayed to its topic, the event went through the consumer again; still invalid, it is parked anew
      await expect
        .poll(
          async () => {
            // Refresh shows the loading state at once, then the events read again
            await page.getByRole('button', { name: 'Refresh' }).click()
            await page
              .locator('.dead-letter-events section[data-topic]')
              .waitFor({ timeout: scaledMs(15_000) })
            return page.locator(`tr[data-event-id="${eventId}"]`).count()
          },
          { interval: 1000 },
        )
        .toBe(2)
      expect(await page.locator(`tr[data-event-id="${eventId}"][data-replayed="false"]`).count()).toBe(1)
    } finally {
      await page.close()
    }
  })

  it('when the admin reads the operator views on a narrow window, then none of them scrolls sideways', async () => {
    const page = await browser.newPage({ viewport: { width: 420, height: 800 } })
    try {
      await signInToOrders(page, system.gatewayUrl, system.admin.email, system.admin.password)
      for (const view of ['Services', 'Dashboard', 'Processes', 'Dead letters']) {
        await page.getByRole('link', { name: view, exact: true }).click()
        await page.getByRole('heading', { name: view, exact: true }).waitFor({ timeout: scaledMs(15_000) })
        // read: no loading state left (in the full suite, earlier tests have filled the tables)
        await page.locator('.loading').first().waitFor({ state: 'detached', timeout: 15_000 })
        expect(
          await sidewaysScroll(page),
          `${view} scrolls sideways on a 420-pixel window`,
        ).toBeLessThanOrEqual(0)
      }
      await page.screenshot({ path: `${artifacts}dead-letters-narrow.png`, fullPage: true })
    } finally {
      await page.close()
    }
  })

  it("when an admin adjusts a product's stock, then the Audit view shows who did it, to what, from where and under which request", async () => {
    const product = await client.createProduct(admin, { stock: 3 })
    await client.adjustStock(admin, product.id, 2, 'a recount')
    const page = await adminPage()
    try {
      await page.getByRole('link', { name: 'Audit' }).click()
      await page.getByRole('heading', { name: 'Audit', exact: true }).waitFor({ timeout: scaledMs(15_000) })
      await page.getByLabel('Action').fill('stock.adjusted')
      await page.getByRole('button', { name: 'Show' }).click()
      // the list of that action's answer (the unfiltered first page may hold the row too)
      const filtered = page.locator('div[data-action="stock.adjusted"]')
      const row = filtered.locator(`tr[data-action="stock.adjusted"][data-target="product:${product.id}"]`)
      await row.waitFor({ timeout: scaledMs(15_000) })
      const cells = await row.locator('td, th').allTextContents()
      expect(cells[1]).toBe('inventory')
      expect(cells[2]).toMatch(/^user:[0-9a-f-]{36}$/)
      expect(cells[5]).not.toBe('—')
      expect(cells[6]).toMatch(/\S/)
      // only that action is listed
      const actions = await page
        .locator('table.audit tbody tr')
        .evaluateAll((rows) => rows.map((tr) => tr.getAttribute('data-action')))
      expect(new Set(actions)).toEqual(new Set(['stock.adjusted']))
      await row.getByText('Detail').click()
      expect(await row.locator('pre').textContent()).toContain('"delta": 2')
      expect(await row.locator('pre').textContent()).toContain('"reason": "a recount"')
      await page.screenshot({ path: `${artifacts}audit.png`, fullPage: true })
    } finally {
      await page.close()
    }
  })
})
