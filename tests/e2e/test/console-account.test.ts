// The console's account pages in Chromium, against the whole system: a customer turns a notification type's e-mail off
// on the Account page and the API then answers that setting; a visitor who forgot their password asks for a link on
// "Forgot password?", the test reads the mail the system delivered to the development Mailpit (the services send to
// 127.0.0.1:1025) and opens its link in the browser, sets a new password and signs in with it, while the old one is
// refused; a link that was used, or is no link of ours, is refused on the page.
import type { NotificationPreferences, User } from '@meridian/contracts'
import { nativeMailpitUrl } from '@meridian/infra'
import { mailbox, scaledMs } from '@meridian/testkit'
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
const mail = mailbox(process.env.MAILPIT_URL || nativeMailpitUrl)
const patience = scaledMs(15_000)

let browser: Browser

beforeAll(async () => {
  browser = await launchChromium()
})

afterAll(async () => {
  await browser?.close()
})

/** The reset link of the newest reset mail to `email`, as its text body carries it. */
async function resetLinkMailedTo(email: string): Promise<string> {
  const delivered = await mail.waitForMessage({ to: email, subject: 'Reset your Meridian password' })
  const link = /https?:\/\/\S+\/console\/#\/reset-password\/\S+/.exec(delivered.text)?.[0]
  expect(link, `a reset link in the mail's text:\n${delivered.text}`).toBeDefined()
  return link!
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

      // the address's verification is shown when (and as) the API tells it
      const user = await client.request<User & { emailVerified?: boolean }>(
        'GET',
        `/api/v1/users/${customer.id}`,
        {
          token,
        },
      )
      const verified = page.locator('dd[data-email-verified]')
      if (user.body.emailVerified === undefined) expect(await verified.count()).toBe(0)
      else expect(await verified.getAttribute('data-email-verified')).toBe(String(user.body.emailVerified))

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
})
