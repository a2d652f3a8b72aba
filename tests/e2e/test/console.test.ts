// The console in a real browser (Debian's Chromium driven by playwright-core), served by the gateway at /console/
// and using only the public API and the realtime channel: a user signs in with the OpenID provider (PKCE); a
// customer signs in with the form, places an order from
// the catalogue with a test card and watches it reach shipped, and its notifications arrive without a reload and are
// marked read; a failure shows the envelope's message and its request id. Screenshots of the views are written to
// tests/e2e/artifacts/ (not committed).
import { randomBytes } from 'node:crypto'
import type { Browser } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest'
import { type Caller, e2eClient } from '../src/client.ts'
import {
  artifacts,
  focusedElement,
  launchChromium,
  newCustomer,
  sidewaysScroll,
  signIn,
  signInToOrders,
} from '../src/console-browser.ts'
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

describe('the console in Chromium', () => {
  it('when a customer signs in and places an order with a test card, then it reaches shipped on the page and its notifications arrive live', async () => {
    const customer = await newCustomer(client)
    const product = await client.createProduct(admin, { stock: 5 })
    const page = await browser.newPage({ viewport: { width: 1100, height: 800 } })
    try {
      await signInToOrders(page, system.gatewayUrl, customer.email, customer.password)

      await page.getByLabel('Product').selectOption(product.id)
      await page.getByLabel('Test card').selectOption('4242424242424242')
      await page.getByRole('button', { name: 'Place order' }).click()

      // the saga advances on the page without a reload: placed … shipped
      const status = page.locator('td[data-status]').first()
      await status.waitFor({ timeout: scaledMs(15_000) })
      await expect
        .poll(() => status.getAttribute('data-status'), { timeout: patience, interval: 500 })
        .toBe('shipped')
      await page.screenshot({ path: `${artifacts}orders.png`, fullPage: true })

      // the order's notifications came over the channel while the page was open
      await page.getByRole('link', { name: /Notifications/ }).click()
      const confirmed = page.locator('li[data-type="order_placed"]')
      await confirmed.waitFor({ timeout: patience })
      await page.locator('li[data-type="shipment_created"]').waitFor({ timeout: patience })
      await page.screenshot({ path: `${artifacts}notifications.png`, fullPage: true })
      await confirmed.getByRole('button', { name: 'Mark read' }).click()
      await expect.poll(() => confirmed.getAttribute('class')).toBe('read')

      // the same, as the API tells it
      const token = await client.login(customer.email, customer.password)
      const listed = await client.request<{ data: { type: string; readAt: string | null }[] }>(
        'GET',
        '/api/v1/notifications?limit=50',
        { token },
      )
      const readConfirmation = listed.body.data.find((notification) => notification.type === 'order_placed')
      expect(readConfirmation?.readAt).not.toBeNull()
    } finally {
      await page.close()
    }
  })

  it("when a user signs in with Meridian's OpenID provider (code flow with PKCE), then the console is theirs and the API accepts its token", async () => {
    const customer = await newCustomer(client)
    const page = await browser.newPage({ viewport: { width: 1100, height: 800 } })
    try {
      await page.goto(`${system.gatewayUrl}/console/`)
      await page.getByRole('button', { name: 'Sign in with Meridian (OpenID Connect)' }).click()
      // the provider's own pages, through the gateway: sign in, then allow the console
      await page.waitForURL(/\/interaction\//)
      await page.getByLabel('Email').fill(customer.email)
      await page.getByLabel('Password').fill(customer.password)
      await page.getByRole('button', { name: 'Sign in' }).click()
      const allow = page.getByRole('button', { name: 'Allow' })
      await allow.waitFor({ timeout: scaledMs(15_000) })
      await allow.click()
      // back on the console with a code, exchanged (PKCE) for a token of Meridian's APIs
      await page.waitForURL(`${system.gatewayUrl}/console/**`)
      await expect
        .poll(() => page.getByRole('heading', { name: 'Orders', exact: true }).isVisible(), {
          timeout: scaledMs(15_000),
        })
        .toBe(true)
      expect(await page.locator('.who').textContent()).toBe('Console Customer (user)')
      expect(page.url()).not.toContain('code=')
      // the orders list answered with that token (an error box would be there otherwise)
      await page.getByText('No orders yet.').waitFor({ timeout: scaledMs(15_000) })
      await page.screenshot({ path: `${artifacts}signed-in-with-pkce.png`, fullPage: true })
    } finally {
      await page.close()
    }
  })

  it('when one user publishes a post, then another reading Posts sees it appear (GraphQL and its postCreated subscription)', async () => {
    const [writer, reader] = await Promise.all([newCustomer(client), newCustomer(client)])
    const writing = await browser.newPage({ viewport: { width: 1100, height: 800 } })
    const reading = await browser.newPage({ viewport: { width: 1100, height: 800 } })
    try {
      await signIn(reading, system.gatewayUrl, reader.email, reader.password)
      await reading
        .getByRole('heading', { name: 'Orders', exact: true })
        .waitFor({ timeout: scaledMs(15_000) })
      // the view opens its subscription: wait until the page has sent it over the WebSocket (the frame is watched
      // from the socket's opening on, so that one sent before a later listener could start is not missed)
      const subscribed = new Promise<void>((resolve, reject) => {
        const timer = setTimeout(
          () => reject(new Error('the Posts view sent no subscription in 30 s')),
          scaledMs(30_000),
        )
        reading.on('websocket', (socket) => {
          if (!socket.url().endsWith('/graphql')) return
          socket.on('framesent', (frame) => {
            if (!String(frame.payload).includes('"subscribe"')) return
            clearTimeout(timer)
            resolve()
          })
        })
      })
      await reading.getByRole('link', { name: 'Posts' }).click()
      await subscribed
      await reading
        .locator('ol.posts')
        .or(reading.getByText('No posts yet.'))
        .first()
        .waitFor({ timeout: scaledMs(15_000) })

      await signIn(writing, system.gatewayUrl, writer.email, writer.password)
      await writing.getByRole('link', { name: 'Posts' }).click()
      const title = `Hello from the browser ${randomBytes(3).toString('hex')}`
      await writing.getByLabel('Title').fill(title)
      await writing.getByLabel('Text').fill('Written in one window, read in another.')
      await writing.getByRole('button', { name: 'Publish' }).click()
      await writing.getByRole('heading', { name: title }).waitFor({ timeout: scaledMs(15_000) })

      const heard = reading.getByRole('heading', { name: title })
      await heard.waitFor({ timeout: scaledMs(15_000) })
      expect(await reading.locator('li', { has: heard }).textContent()).toContain('by Console Customer')
      await reading.screenshot({ path: `${artifacts}posts.png`, fullPage: true })
    } finally {
      await writing.close()
      await reading.close()
    }
  })

  it('when an admin opens Services, then each service shows its healthy instances, and the maintenance switch turns shipping off and on', async () => {
    const page = await browser.newPage({ viewport: { width: 1100, height: 900 } })
    try {
      await signIn(page, system.gatewayUrl, system.admin.email, system.admin.password)
      await page.getByRole('link', { name: 'Services' }).click()
      const shipping = page.locator('tr[data-service="shipping"]')
      await shipping.waitFor({ timeout: scaledMs(15_000) })
      expect(await page.locator('tr[data-service="auth"] .health').first().textContent()).toBe('passing')

      await shipping.getByLabel('Maintenance message for shipping').fill('Carrier migration')
      await shipping.getByRole('button', { name: 'Start maintenance' }).click()
      await shipping.getByText('In maintenance: Carrier migration').waitFor({ timeout: scaledMs(10_000) })
      await page.screenshot({ path: `${artifacts}services.png`, fullPage: true })
      // every shipping instance answers 503 within a second or so (the gateway relays it as the service's own)
      await expect
        .poll(async () => (await client.request('GET', '/api/v1/shipments', { token: admin.token })).status, {
          timeout: scaledMs(10_000),
        })
        .toBe(503)

      await shipping.getByRole('button', { name: 'End maintenance' }).click()
      await shipping.getByRole('button', { name: 'Start maintenance' }).waitFor({ timeout: scaledMs(10_000) })
      await expect
        .poll(async () => (await client.request('GET', '/api/v1/shipments', { token: admin.token })).status, {
          timeout: scaledMs(10_000),
        })
        .toBe(200)
    } finally {
      await page.close()
    }
  })

  it('when sign-in fails, then the page shows the error and its request id, and stays on the form', async () => {
    const page = await browser.newPage({ viewport: { width: 420, height: 800 } })
    try {
      await signIn(page, system.gatewayUrl, 'nobody@example.com', 'wrong-password-1')
      const alert = page.getByRole('alert')
      await alert.waitFor({ timeout: scaledMs(15_000) })
      expect(await alert.textContent()).toMatch(/request id [0-9a-f-]{36}/)
      expect(await page.getByLabel('Password').isVisible()).toBe(true)
      await page.screenshot({ path: `${artifacts}sign-in-error-narrow.png`, fullPage: true })
    } finally {
      await page.close()
    }
  })

  it('when a user works with the keyboard alone on a narrow window, then signing in, the skip link and the navigation work and no view scrolls sideways', async () => {
    const customer = await newCustomer(client, 'Keyboard Customer')
    const page = await browser.newPage({ viewport: { width: 420, height: 800 } })
    const focused = () => focusedElement(page)
    /** Tabs (or Shift+Tabs) until the focused element's description matches (at most 30 presses). */
    async function tabTo(pattern: RegExp, key = 'Tab'): Promise<void> {
      for (let presses = 0; presses < 30; presses++) {
        if (pattern.test(await focused())) return
        await page.keyboard.press(key)
      }
      throw new Error(`Tab never reached ${pattern} (last: ${await focused()})`)
    }
    try {
      await page.goto(`${system.gatewayUrl}/console/`)
      await page.getByLabel('Email').waitFor({ timeout: scaledMs(15_000) })
      // the skip link comes first and, on the sign-in form, lands on the form's section without leaving it
      await page.keyboard.press('Tab')
      expect(await focused()).toBe('a:Skip to content')
      await page.keyboard.press('Enter')
      expect(await focused()).toMatch(/^section:Sign in to Meridian/)

      await tabTo(/^input#email:/)
      await page.keyboard.type(customer.email)
      await page.keyboard.press('Tab')
      expect(await focused()).toBe('input#password:')
      await page.keyboard.type(customer.password)
      await page.keyboard.press('Enter')
      await page.getByRole('heading', { name: 'Orders', exact: true }).waitFor({ timeout: scaledMs(15_000) })
      // a new view takes the focus, so a screen reader reads it
      expect(await focused()).toMatch(/^main#content:/)

      await tabTo(/^a:Notifications/)
      await page.keyboard.press('Enter')
      await page
        .getByRole('heading', { name: 'Notifications', exact: true })
        .waitFor({ timeout: scaledMs(15_000) })
      expect(await page.getByRole('link', { name: /^Notifications/ }).getAttribute('aria-current')).toBe(
        'page',
      )

      // back up to the top of the page: the skip link jumps over the navigation to the view, which stays the same
      await tabTo(/^a:Skip to content$/, 'Shift+Tab')
      await page.keyboard.press('Enter')
      expect(await focused()).toMatch(/^main#content:/)
      expect(new URL(page.url()).hash).toBe('#/notifications')
      await page
        .getByRole('heading', { name: 'Notifications', exact: true })
        .waitFor({ timeout: scaledMs(5_000) })

      for (const view of ['Orders', 'Notifications', 'Documents', 'Chat', 'Posts']) {
        await page.getByRole('link', { name: new RegExp(`^${view}`) }).click()
        await page.getByRole('heading', { name: view, exact: true }).waitFor({ timeout: scaledMs(15_000) })
        await page.waitForTimeout(300)
        expect(
          await sidewaysScroll(page),
          `${view} scrolls sideways on a 420-pixel window`,
        ).toBeLessThanOrEqual(0)
      }
      await page.screenshot({ path: `${artifacts}posts-narrow.png`, fullPage: true })
    } finally {
      await page.close()
    }
  })
})
