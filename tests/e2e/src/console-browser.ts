// What the console's browser tests share: Chromium (where it is, launched headless), where screenshots go, a customer
// who can sign in with a password, and signing in on the console's form.
import { randomBytes } from 'node:crypto'
import { mkdirSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import type { User } from '@meridian/contracts'
import { chromiumPath } from '@meridian/infra/observability'
import { type Browser, chromium, type Page } from 'playwright-core'
import { type E2eClient, UnexpectedAnswer } from './client.ts'

/** Where the browser tests write their screenshots: tests/e2e/artifacts/ (not committed). */
export const artifacts = fileURLToPath(new URL('../artifacts/', import.meta.url))

/** Chromium, headless, for one test file (and the screenshots' folder, made); `args` are further switches. */
export async function launchChromium(args: string[] = []): Promise<Browser> {
  mkdirSync(artifacts, { recursive: true })
  return chromium.launch({ executablePath: chromiumPath(), args: ['--no-sandbox', ...args] })
}

export interface BrowserCustomer {
  id: string
  name: string
  email: string
  password: string
}

/** A customer with a password (open registration through the gateway). */
export async function newCustomer(client: E2eClient, name = 'Console Customer'): Promise<BrowserCustomer> {
  const email = `console-${randomBytes(4).toString('hex')}@example.com`
  const password = randomBytes(12).toString('base64url')
  const created = await client.request<User>('POST', '/api/v1/users', { body: { name, email, password } })
  if (created.status !== 201) throw new UnexpectedAnswer('POST /api/v1/users', created.status, created.body)
  return { id: created.body.id, name, email, password }
}

/** Opens the console and signs in with the form (the shell then shows its first view). */
export async function signIn(page: Page, gatewayUrl: string, email: string, password: string): Promise<void> {
  await page.goto(`${gatewayUrl}/console/`)
  await page.getByLabel('Email').fill(email)
  await page.getByLabel('Password').fill(password)
  await page.getByRole('button', { name: 'Sign in', exact: true }).click()
}

/** Signs in on the console's form and waits for its first view, Orders (it fails when that never shows). */
export async function signInToOrders(
  page: Page,
  gatewayUrl: string,
  email: string,
  password: string,
): Promise<void> {
  await signIn(page, gatewayUrl, email, password)
  await page.getByRole('heading', { name: 'Orders', exact: true }).waitFor({ timeout: 15_000 })
}

// (page scripts are strings: this package is type-checked without the DOM's types)

/** The focused element as `tag#id:text` (its first 40 characters), e.g. `a:Skip to content`, `input#email:`. */
export async function focusedElement(page: Page): Promise<string> {
  return String(
    await page.evaluate(`(() => {
      const active = document.activeElement
      if (!active) return ''
      return active.tagName.toLowerCase() + (active.id ? '#' + active.id : '') + ':' +
        (active.textContent ?? '').trim().slice(0, 40)
    })()`),
  )
}

/** How many pixels the page scrolls sideways (0 when it fits the window). */
export async function sidewaysScroll(page: Page): Promise<number> {
  return Number(
    await page.evaluate('document.documentElement.scrollWidth - document.documentElement.clientWidth'),
  )
}
