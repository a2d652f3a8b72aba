// A newcomer's first visit to the console (Chromium, served by the gateway): the sign-in page shows the development
// hint the gateway gives (./scripts/dev --demo: the demo accounts), and "Create an account" registers a customer
// through POST /api/v1/users and signs them in; an email already taken shows the API's message and signs nobody in.
import { randomBytes } from 'node:crypto'
import { demoSignInHint } from '@meridian/infra/demo'
import type { Browser } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest'
import { e2eClient } from '../src/client.ts'
import { artifacts, launchChromium, newCustomer } from '../src/console-browser.ts'
import '../src/system-context.ts'
import { scaledMs } from '@meridian/testkit'

const system = inject('system')
const client = e2eClient(system)

let browser: Browser

beforeAll(async () => {
  browser = await launchChromium()
})

afterAll(async () => {
  await browser?.close()
})

describe("the console's first visit", () => {
  it('when the gateway gives a sign-in hint, then the sign-in page shows it above the forms', async () => {
    const config = await client.request<{ signInHint?: string }>('GET', '/console/config.json')
    expect(config.body.signInHint).toBe(demoSignInHint)
    const page = await browser.newPage({ viewport: { width: 1100, height: 800 } })
    try {
      await page.goto(`${system.gatewayUrl}/console/`)
      const note = page.getByRole('note')
      await note.waitFor({ timeout: scaledMs(15_000) })
      expect(await note.textContent()).toBe(demoSignInHint)
      await page.screenshot({ path: `${artifacts}sign-in-hint.png`, fullPage: true })
    } finally {
      await page.close()
    }
  })

  it('when a newcomer creates an account on the sign-in page, then they are signed in as a customer and the API knows them', async () => {
    const email = `newcomer-${randomBytes(4).toString('hex')}@example.com`
    const password = randomBytes(12).toString('base64url')
    const page = await browser.newPage({ viewport: { width: 1100, height: 800 } })
    try {
      await page.goto(`${system.gatewayUrl}/console/`)
      await page.getByRole('button', { name: 'Create an account' }).click()
      await page.getByRole('heading', { name: 'Create an account' }).waitFor({ timeout: scaledMs(15_000) })
      await page.getByLabel('Name').fill('First Visitor')
      await page.getByLabel('Email').fill(email)
      await page.getByLabel('Password (at least 8 characters)').fill(password)
      await page.screenshot({ path: `${artifacts}create-account.png`, fullPage: true })
      await page.getByRole('button', { name: 'Create account' }).click()
      await page.getByRole('heading', { name: 'Orders', exact: true }).waitFor({ timeout: scaledMs(15_000) })
      expect(await page.locator('.who').textContent()).toBe('First Visitor (user)')
      await page.getByText('No orders yet.').waitFor({ timeout: scaledMs(15_000) })
    } finally {
      await page.close()
    }
    // the account is real: it signs in through the gateway with what was typed
    const token = await client.login(email, password)
    const me = await client.request<{ email: string; role: string }>('GET', '/userinfo', { token })
    expect(me.body).toMatchObject({ email, role: 'user' })
  })

  it('when the email is already registered, then the page shows the API’s message, stays on the form and signs nobody in', async () => {
    const existing = await newCustomer(client, 'Already Here')
    const page = await browser.newPage({ viewport: { width: 1100, height: 800 } })
    try {
      await page.goto(`${system.gatewayUrl}/console/`)
      await page.getByRole('button', { name: 'Create an account' }).click()
      await page.getByLabel('Name').fill('Someone Else')
      await page.getByLabel('Email').fill(existing.email)
      await page.getByLabel('Password (at least 8 characters)').fill('another-password')
      await page.getByRole('button', { name: 'Create account' }).click()
      const alert = page.getByRole('alert')
      await alert.waitFor({ timeout: scaledMs(15_000) })
      // the same message the API gives for it, with the request id to quote
      const again = await client.request<{ error: { code: string; message: string } }>(
        'POST',
        '/api/v1/users',
        {
          body: { name: 'Someone Else', email: existing.email, password: 'another-password' },
        },
      )
      expect(again.status).toBe(409)
      expect(await alert.locator('strong').textContent()).toBe(again.body.error.message)
      expect(await alert.textContent()).toMatch(/request id \S+/)
      expect(await page.getByRole('heading', { name: 'Create an account' }).isVisible()).toBe(true)
      expect(await page.locator('.who').count()).toBe(0)
      // back to signing in, where the existing account still works with its own password
      await page.getByRole('button', { name: 'Sign in instead' }).click()
      await page.getByLabel('Email').fill(existing.email)
      await page.getByLabel('Password').fill(existing.password)
      await page.getByRole('button', { name: 'Sign in', exact: true }).click()
      await page.getByRole('heading', { name: 'Orders', exact: true }).waitFor({ timeout: scaledMs(15_000) })
      expect(await page.locator('.who').textContent()).toBe('Already Here (user)')
    } finally {
      await page.close()
    }
  })
})
