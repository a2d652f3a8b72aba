// The console's account pages in Chromium, against the whole system: a customer turns a notification type's e-mail off
// on the Account page and the API then answers that setting; a visitor who forgot their password asks for a link on
// "Forgot password?", the test reads the mail the system delivered to the development Mailpit (testkit's
// mailpitEngine(): the services send to its SMTP port) and opens its link in the browser, sets a new password and signs
// in with it, while the old one is refused; a link that was used, or is no link of ours, is refused on the page. A new
// customer's address is proved by the link registration mailed (the Account page then shows it verified), and a
// customer changes their address on the Account page: the link mailed to the new one sets it, they sign in with it, and
// the old address got a notice. Every test has addresses of its own (the Mailpit is shared).
import { randomBytes } from 'node:crypto'
import type { NotificationPreferences, User } from '@meridian/contracts'
import { type Mailbox, mailpitEngine, scaledMs } from '@meridian/testkit'
import type { Browser, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest'
import { e2eClient } from '../src/client.ts'
import {
  artifacts,
  launchChromium,
  newCustomer,
  sidewaysScroll,
  signInToOrders,
} from '../src/console-browser.ts'
import '../src/system-context.ts'

const system = inject('system')
const client = e2eClient(system)
const patience = scaledMs(15_000)

let browser: Browser
let mail: Mailbox

beforeAll(async () => {
  mail = (await mailpitEngine()).mailbox
  browser = await launchChromium()
})

afterAll(async () => {
  await browser?.close()
})

/** The link of the newest mail to `email` with this subject that opens the console's `page`, as its text carries it. */
async function linkMailedTo(email: string, subject: string, page: string): Promise<string> {
  const delivered = await mail.waitForMessage({ to: email, subject })
  const link = new RegExp(`https?://\\S+/console/#/${page}/\\S+`).exec(delivered.text)?.[0]
  expect(link, `a link to ${page} in the mail's text:\n${delivered.text}`).toBeDefined()
  return link!
}

/** The reset link of the newest reset mail to `email`. */
const resetLinkMailedTo = (email: string) =>
  linkMailedTo(email, 'Reset your Meridian password', 'reset-password')

/** The link of the newest mail to `email` that proves it (registration's, or an address change's). */
const verifyLinkMailedTo = (email: string) =>
  linkMailedTo(email, 'Confirm your e-mail address', 'verify-email')

/** Opens the Account page of the signed-in console and waits for the address it shows. */
async function openAccount(page: Page, email: string): Promise<void> {
  await page.getByRole('link', { name: 'Account', exact: true }).click()
  await page.getByRole('heading', { name: 'Account', exact: true }).waitFor({ timeout: patience })
  await page.getByText(email, { exact: true }).waitFor({ timeout: patience })
}

/** Types the new password twice on the reset page and submits it. */
async function setNewPassword(page: Page, password: string, again = password): Promise<void> {
  await page.getByRole('heading', { name: 'Choose a new password' }).waitFor({ timeout: patience })
  await page.getByLabel('New password (at least 8 characters)', { exact: true }).fill(password)
  await page.getByLabel('The same password again', { exact: true }).fill(again)
  await page.getByRole('button', { name: 'Set the new password' }).click()
}

describe("the console's account pages", () => {
  it("when a customer turns a type's e-mail off on the Account page, then the API answers that setting and every other channel stays on, and signed out Forgot password? is there again", async () => {
    const customer = await newCustomer(client, 'Preferring Customer')
    const page = await browser.newPage({ viewport: { width: 1100, height: 800 } })
    try {
      await signInToOrders(page, system.gatewayUrl, customer.email, customer.password)
      await page.getByRole('link', { name: 'Account', exact: true }).click()
      await page.getByRole('heading', { name: 'Account', exact: true }).waitFor({ timeout: patience })
      const deliveredByMail = page.getByRole('checkbox', { name: 'Order delivered: By e-mail' })
      await deliveredByMail.waitFor({ timeout: patience })
      expect(await deliveredByMail.isChecked()).toBe(true)
      await page.getByText(customer.email, { exact: true }).waitFor({ timeout: patience })

      await deliveredByMail.uncheck()
      await page.getByRole('button', { name: 'Save preferences' }).click()
      await page.getByRole('status').filter({ hasText: 'Saved.' }).waitFor({ timeout: patience })
      // the table shown is the PUT's answer, read again
      expect(await page.getByRole('checkbox', { name: 'Order delivered: By e-mail' }).isChecked()).toBe(false)
      await page.screenshot({ path: `${artifacts}account.png`, fullPage: true })

      const token = await client.login(customer.email, customer.password)
      const answered = await client.request<NotificationPreferences>(
        'GET',
        `/api/v1/users/${customer.id}/notification-preferences`,
        { token },
      )
      expect(answered.status).toBe(200)
      const { shipment_delivered, ...others } = answered.body.preferences
      expect(shipment_delivered).toEqual({ inApp: true, realtime: true, email: false })
      for (const channels of Object.values(others))
        expect(channels).toEqual({ inApp: true, realtime: true, email: true })

      // a new customer's address is not verified yet (the link registration mailed is unused), as the API tells it
      const user = await client.request<User>('GET', `/api/v1/users/${customer.id}`, { token })
      expect(user.body.emailVerified).toBe(false)
      const verified = page.locator('dd[data-email-verified]')
      expect(await verified.getAttribute('data-email-verified')).toBe('false')
      expect(await verified.textContent()).toContain('Not yet')

      await page.setViewportSize({ width: 420, height: 800 })
      await page.waitForTimeout(300)
      expect(
        await sidewaysScroll(page),
        'Account scrolls sideways on a 420-pixel window',
      ).toBeLessThanOrEqual(0)

      // signed out, the visitor's pages are there again
      await page.getByRole('button', { name: 'Sign out' }).click()
      await page.getByRole('link', { name: 'Forgot password?' }).click()
      await page.getByRole('heading', { name: 'Forgot your password?' }).waitFor({ timeout: patience })
    } finally {
      await page.close()
    }
  })

  it('when a visitor who forgot their password follows the link of the mail, then they set a new one and sign in with it, and the old one is refused', async () => {
    const customer = await newCustomer(client, 'Forgetful Customer')
    const newPassword = `new-${customer.password}`
    const page = await browser.newPage({ viewport: { width: 1100, height: 800 } })
    try {
      await page.goto(`${system.gatewayUrl}/console/`)
      await page.getByRole('link', { name: 'Forgot password?' }).click()
      await page.getByRole('heading', { name: 'Forgot your password?' }).waitFor({ timeout: patience })
      await page.getByLabel('Email').fill(customer.email)
      await page.getByRole('button', { name: 'Send me a link' }).click()
      await page
        .getByRole('status')
        .filter({ hasText: 'If an account has this address, a link to reset its password is on its way.' })
        .waitFor({ timeout: patience })
      await page.screenshot({ path: `${artifacts}forgot-password.png`, fullPage: true })
    } finally {
      await page.close()
    }

    const link = await resetLinkMailedTo(customer.email)
    expect(link.startsWith(`${system.gatewayUrl}/console/#/reset-password/`)).toBe(true)
    // the mail is opened later, in a browser that is signed in nowhere
    const reading = await browser.newPage({ viewport: { width: 1100, height: 800 } })
    try {
      await reading.goto(link)
      await setNewPassword(reading, newPassword)
      await reading.getByRole('heading', { name: 'Your password was changed' }).waitFor({ timeout: patience })
      expect(reading.url()).not.toContain('reset-password')
      await reading.screenshot({ path: `${artifacts}password-changed.png`, fullPage: true })
      await reading.getByRole('link', { name: 'Sign in', exact: true }).click()
      await reading.getByRole('heading', { name: 'Sign in to Meridian' }).waitFor({ timeout: patience })
      await reading.getByLabel('Email').fill(customer.email)
      await reading.getByLabel('Password').fill(newPassword)
      await reading.getByRole('button', { name: 'Sign in', exact: true }).click()
      await reading.getByRole('heading', { name: 'Orders', exact: true }).waitFor({ timeout: patience })
      expect(await reading.locator('.who').textContent()).toBe('Forgetful Customer (user)')
    } finally {
      await reading.close()
    }

    const old = await client.request('POST', '/login', {
      body: { email: customer.email, password: customer.password },
    })
    expect(old.status).toBe(401)
    await client.login(customer.email, newPassword)

    // the link works once: followed again, the API refuses it and the page says so
    const again = await browser.newPage({ viewport: { width: 1100, height: 800 } })
    try {
      await again.goto(link)
      await setNewPassword(again, `another-${newPassword}`)
      await again.getByRole('alert').waitFor({ timeout: patience })
      expect(await again.getByRole('heading', { name: 'Choose a new password' }).isVisible()).toBe(true)
    } finally {
      await again.close()
    }
    await client.login(customer.email, newPassword)
  })

  it('when the reset page is opened with a token that is none of ours, or the two passwords differ, then it says so and changes nothing', async () => {
    const page = await browser.newPage({ viewport: { width: 420, height: 800 } })
    try {
      await page.goto(`${system.gatewayUrl}/console/#/reset-password/not-a-token-of-ours`)
      await setNewPassword(page, 'a-password-of-ours', 'another-password')
      const alert = page.getByRole('alert')
      await alert.waitFor({ timeout: patience })
      expect(await alert.textContent()).toContain('The two passwords differ')

      await setNewPassword(page, 'a-password-of-ours')
      await expect.poll(() => alert.textContent(), { timeout: patience }).toMatch(/request id \S+/)
      // the API's own refusal of that token (not a route it lacks), as the page shows it
      const refusal = await client.request<{ error: { code: string; message: string } }>(
        'POST',
        '/api/v1/password-resets/not-a-token-of-ours',
        { body: { password: 'a-password-of-ours' } },
      )
      expect(refusal.status).toBeGreaterThanOrEqual(400)
      expect(refusal.status).toBeLessThan(500)
      expect(refusal.body.error.message).not.toMatch(/^Route /)
      expect(await alert.locator('strong').textContent()).toBe(refusal.body.error.message)
      expect(await page.getByRole('heading', { name: 'Choose a new password' }).isVisible()).toBe(true)
      expect(
        await sidewaysScroll(page),
        'the reset page scrolls sideways on a 420-pixel window',
      ).toBeLessThanOrEqual(0)
      await page.screenshot({ path: `${artifacts}reset-refused.png`, fullPage: true })
      // its link to a new one leads to "Forgot password?"
      await page.getByRole('link', { name: 'Ask for a new one' }).click()
      await page.getByRole('heading', { name: 'Forgot your password?' }).waitFor({ timeout: patience })
    } finally {
      await page.close()
    }
  })

  it('when a newly registered customer opens the link of the mail that proves their address, then the page says it is confirmed, the Account page shows it verified, and the link works once', async () => {
    const customer = await newCustomer(client, 'Confirming Customer')
    const link = await verifyLinkMailedTo(customer.email)
    expect(link.startsWith(`${system.gatewayUrl}/console/#/verify-email/`)).toBe(true)
    // the mail is opened in a browser that is signed in nowhere
    const page = await browser.newPage({ viewport: { width: 420, height: 800 } })
    try {
      await page.goto(link)
      await page.getByRole('heading', { name: 'Your address is confirmed' }).waitFor({ timeout: patience })
      expect(page.url()).not.toContain('verify-email')
      expect(
        await sidewaysScroll(page),
        'the confirmation scrolls sideways on a 420-pixel window',
      ).toBeLessThanOrEqual(0)
      await page.screenshot({ path: `${artifacts}address-confirmed.png`, fullPage: true })
      await page.getByRole('link', { name: 'Sign in', exact: true }).click()
      await page.getByRole('heading', { name: 'Sign in to Meridian' }).waitFor({ timeout: patience })
      await page.getByLabel('Email').fill(customer.email)
      await page.getByLabel('Password').fill(customer.password)
      await page.getByRole('button', { name: 'Sign in', exact: true }).click()
      await page.getByRole('heading', { name: 'Orders', exact: true }).waitFor({ timeout: patience })
      await openAccount(page, customer.email)
      const verified = page.locator('dd[data-email-verified]')
      expect(await verified.getAttribute('data-email-verified')).toBe('true')
      expect(await verified.textContent()).toBe('Yes')
    } finally {
      await page.close()
    }
    const token = await client.login(customer.email, customer.password)
    const user = await client.request<User>('GET', `/api/v1/users/${customer.id}`, { token })
    expect(user.body.emailVerified).toBe(true)

    // followed again, the API refuses the used link and the page shows its message
    const again = await browser.newPage({ viewport: { width: 1100, height: 800 } })
    try {
      await again.goto(link)
      await again.getByRole('heading', { name: 'This link does not work' }).waitFor({ timeout: patience })
      expect(await again.getByRole('alert').locator('strong').textContent()).toBe(
        'This address verification link is invalid, used or expired',
      )
      await again.getByRole('link', { name: 'Sign in', exact: true }).click()
      await again.getByRole('heading', { name: 'Sign in to Meridian' }).waitFor({ timeout: patience })
    } finally {
      await again.close()
    }
  })

  it('when a customer changes their address on the Account page, then the link mailed to the new address sets it, verified, they sign in with it and no longer with the old one, and the old address got a notice', async () => {
    const customer = await newCustomer(client, 'Moving Customer')
    const newEmail = `moved-${randomBytes(4).toString('hex')}@example.com`
    const page = await browser.newPage({ viewport: { width: 1100, height: 800 } })
    try {
      await signInToOrders(page, system.gatewayUrl, customer.email, customer.password)
      await openAccount(page, customer.email)
      await page.getByRole('heading', { name: 'Change e-mail address' }).waitFor({ timeout: patience })
      await page.getByLabel('New address', { exact: true }).fill(newEmail)
      // a wrong password is refused with the API's message, and nothing is mailed
      await page.getByLabel('Your password', { exact: true }).fill(`not-${customer.password}`)
      await page.getByRole('button', { name: 'Send a link to the new address' }).click()
      const alert = page.getByRole('alert')
      await alert.waitFor({ timeout: patience })
      expect(await alert.locator('strong').textContent()).toBe('The current password is incorrect')

      await page.getByLabel('Your password', { exact: true }).fill(customer.password)
      await page.getByRole('button', { name: 'Send a link to the new address' }).click()
      await page
        .getByRole('status')
        .filter({ hasText: `A link was sent to ${newEmail}.` })
        .waitFor({ timeout: patience })
      expect(await alert.count()).toBe(0)
      await page.screenshot({ path: `${artifacts}address-change-asked.png`, fullPage: true })

      const notice = await mail.waitForMessage({
        to: customer.email,
        subject: 'A change of your Meridian address was asked for',
      })
      expect(notice.text).not.toContain(newEmail)
      const link = await verifyLinkMailedTo(newEmail)
      expect(link.startsWith(`${system.gatewayUrl}/console/#/verify-email/`)).toBe(true)
      // until the link is used the address stays: the old one still signs in
      await client.login(customer.email, customer.password)

      // opened in the same tab, signed in: the page confirms, and leads on to the account, which has the new address
      await page.goto(link)
      await page.getByRole('heading', { name: 'Your address is confirmed' }).waitFor({ timeout: patience })
      await page.getByRole('link', { name: 'Go on to your account' }).click()
      await page.getByText(newEmail, { exact: true }).waitFor({ timeout: patience })
      expect(await page.locator('dd[data-email-verified]').getAttribute('data-email-verified')).toBe('true')
      await page.screenshot({ path: `${artifacts}address-changed.png`, fullPage: true })

      await page.getByRole('button', { name: 'Sign out' }).click()
      await signInToOrders(page, system.gatewayUrl, newEmail, customer.password)
      expect(await page.locator('.who').textContent()).toBe('Moving Customer (user)')
    } finally {
      await page.close()
    }
    const old = await client.request('POST', '/login', {
      body: { email: customer.email, password: customer.password },
    })
    expect(old.status).toBe(401)
    // the old address got no link of the change: registration's is the only one it has
    await verifyLinkMailedTo(customer.email)
    const links = await mail.search(`to:"${customer.email}" subject:"Confirm your e-mail address"`)
    expect(links.length).toBe(1)
  })
})
