// The demo seed (scripts/seed, ./scripts/dev --demo) against the whole system, run as the process a newcomer runs:
// refused as production with nothing made; then the accounts it prints sign in through the gateway and see the
// catalogue, orders in each demo state, the chat room with its conversation and the shared document; in the console
// (Chromium) too; a second run keeps all of it and adds nothing.
import { execFile } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import type { ChatMessage, ChatRoom, CollaborativeDocument, Order, Product } from '@meridian/contracts'
import type { Browser } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest'
import { e2eClient } from '../src/client.ts'
import { artifacts, launchChromium, signInToOrders } from '../src/console-browser.ts'
import { bashBlocksOf, page, paste } from '../src/pasted-docs.ts'
import '../src/system-context.ts'
import { scaledMs } from '@meridian/testkit'

const system = inject('system')
const client = e2eClient(system)

const infraDir = fileURLToPath(new URL('../../../infra/', import.meta.url))

interface Run {
  code: number
  stdout: string
  stderr: string
}

/** The seed command as a process (infra/src/demo/main.ts, what scripts/seed runs), pointed at the run's system. */
function runSeed(env: Record<string, string> = {}): Promise<Run> {
  const authDatabaseUrl = system.services.auth?.databaseUrl
  if (!authDatabaseUrl) throw new Error("the system's auth has no database")
  return new Promise((resolve) => {
    execFile(
      `${infraDir}node_modules/.bin/tsx`,
      [`${infraDir}src/demo/main.ts`],
      {
        env: {
          PATH: process.env.PATH ?? '',
          NODE_ENV: 'test',
          MERIDIAN_GATEWAY_URL: system.gatewayUrl,
          MERIDIAN_PAYMENT_PROVIDER_URL: system.simulatorUrl,
          AUTH_DATABASE_URL: authDatabaseUrl,
          // the run's Redis, where the admin's revocations are announced (with its CA on secure engines)
          ...system.redisEnv,
          ...env,
        },
        timeout: 240_000,
      },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === 'number' ? error.code : 1) : 0
        resolve({ code, stdout, stderr })
      },
    )
  })
}

/** The account lines the seed printed: `  customer  <email>  password <password>`. */
function printedAccount(stdout: string, role: 'customer' | 'admin'): { email: string; password: string } {
  const line = stdout.split('\n').find((each) => each.trim().startsWith(`${role} `))
  const match = line?.match(/^\s*\w+\s+(\S+@\S+)\s+password (\S+)\s*$/)
  if (!match?.[1] || !match[2]) throw new Error(`no ${role} account in the seed's output:\n${stdout}`)
  return { email: match[1], password: match[2] }
}

interface Seen {
  products: Product[]
  orders: Order[]
  rooms: ChatRoom[]
  messages: ChatMessage[]
  documents: CollaborativeDocument[]
}

/** What the printed customer sees through the gateway: the demo products, their orders, rooms and documents. */
async function seenBy(token: string, customerId: string): Promise<Seen> {
  const body = async <Body>(path: string) => {
    const answer = await client.request<Body>('GET', path, { token })
    expect(answer.status, `GET ${path}`).toBe(200)
    return answer.body
  }
  const products = (await body<{ data: Product[] }>('/api/v1/products?limit=100&sort=name:asc')).data.filter(
    (product) => product.sku.startsWith('DEMO-'),
  )
  const orders = (await body<{ data: Order[] }>(`/api/v1/users/${customerId}/orders?limit=100`)).data
  const rooms = (await body<{ data: ChatRoom[] }>('/api/v1/chat/rooms?limit=100')).data
  const room = rooms.find((each) => each.name === 'Demo lounge')
  const messages = room
    ? (await body<{ data: ChatMessage[] }>(`/api/v1/chat/rooms/${room.id}/messages?limit=100`)).data
    : []
  const summaries = (await body<{ data: { id: string }[] }>('/api/v1/documents?limit=100')).data
  const documents = await Promise.all(
    summaries.map((summary) => body<CollaborativeDocument>(`/api/v1/documents/${summary.id}`)),
  )
  return { products, orders, rooms, messages, documents }
}

let browser: Browser
let first: Run
let customer: { email: string; password: string }

beforeAll(async () => {
  browser = await launchChromium()
})

afterAll(async () => {
  await browser?.close()
})

describe('the demo seed against the whole system', () => {
  it('when NODE_ENV is production, then the seed refuses and makes nothing (not even the admin)', async () => {
    const refused = await runSeed({ NODE_ENV: 'production' })
    expect(refused.code).toBe(1)
    expect(refused.stderr).toMatch(/refused: NODE_ENV is 'production'/)
    expect(refused.stdout).not.toMatch(/password/)
    const unset = await runSeed({ NODE_ENV: '' })
    expect(unset.code).toBe(1)
    expect(unset.stderr).toMatch(/refused: NODE_ENV is unset \(which is production\)/)
    for (const email of ['demo-admin@example.com', 'demo-customer@example.com']) {
      const login = await client.request('POST', '/login', { body: { email, password: 'whatever-it-is' } })
      expect(login.status, email).toBe(401)
    }
    const products = await client.request<{ data: Product[] }>('GET', '/api/v1/products?sku=DEMO-MUG')
    expect(products.body.data).toEqual([])
  })

  it('when the seed runs, then the printed customer sees products with stock, orders in each state, the chat room and the document', async () => {
    first = await runSeed()
    expect(first.code, first.stderr).toBe(0)
    customer = printedAccount(first.stdout, 'customer')
    expect(first.stdout).toContain(`${system.gatewayUrl}/console/`)
    expect(first.stdout).toMatch(/fixed development passwords/)

    const token = await client.login(customer.email, customer.password)
    const me = await client.request<{ sub: string; role?: string }>('GET', '/userinfo', { token })
    const seen = await seenBy(token, me.body.sub)

    expect(seen.products.map((product) => product.sku).sort()).toEqual([
      'DEMO-HOODIE',
      'DEMO-MUG',
      'DEMO-NOTEBOOK',
      'DEMO-STICKERS',
      'DEMO-TEE',
    ])
    for (const product of seen.products) expect(product.available, product.sku).toBeGreaterThan(0)
    expect(seen.orders.map((order) => order.status).sort()).toEqual([
      'cancelled',
      'delivered',
      'payment_failed',
      'shipped',
    ])
    expect(seen.rooms.map((room) => room.name)).toEqual(['Demo lounge'])
    expect(seen.messages).toHaveLength(5)
    expect(new Set(seen.messages.map((message) => message.username))).toEqual(
      new Set(['Demo Admin', 'Demo Customer']),
    )
    expect(seen.documents.map((document) => document.title)).toEqual(['Welcome to Meridian'])
    expect(seen.documents[0]?.content).toContain('# Welcome to Meridian')
  })

  it('when the printed admin signs in, then they are an admin who sees the demo orders and the room', async () => {
    const admin = printedAccount(first.stdout, 'admin')
    const token = await client.login(admin.email, admin.password)
    const me = await client.request<{ role?: string }>('GET', '/userinfo', { token })
    expect(me.body.role).toBe('admin')
    const customerToken = await client.login(customer.email, customer.password)
    const customerInfo = await client.request<{ sub: string }>('GET', '/userinfo', { token: customerToken })
    const orders = await client.request<{ data: Order[] }>(
      'GET',
      `/api/v1/users/${customerInfo.body.sub}/orders?limit=100`,
      { token },
    )
    expect(orders.status).toBe(200)
    expect(orders.body.data).toHaveLength(4)
    // a delivered order's shipment was reported delivered by the admin
    const delivered = orders.body.data.find((order) => order.status === 'delivered')
    const shipments = await client.shipmentsOf({ email: admin.email, token }, delivered?.id ?? '')
    expect(shipments.map((shipment) => shipment.status)).toEqual(['delivered'])
  })

  it('when the seed runs a second time, then it keeps everything and adds nothing', async () => {
    const token = await client.login(customer.email, customer.password)
    const me = await client.request<{ sub: string }>('GET', '/userinfo', { token })
    const before = await seenBy(token, me.body.sub)

    const second = await runSeed()
    expect(second.code, second.stderr).toBe(0)
    expect(printedAccount(second.stdout, 'customer')).toEqual(customer)
    expect(second.stderr).toMatch(/customer demo-customer@example.com: exists/)
    expect(second.stderr).toMatch(/catalogue: 0 product\(s\) created, 5 kept/)
    expect(second.stderr).toMatch(/chat room: kept, 0 message\(s\) sent/)

    const after = await seenBy(token, me.body.sub)
    const ids = (items: { id: string }[]) => items.map((item) => item.id).sort()
    expect(ids(after.products)).toEqual(ids(before.products))
    expect(ids(after.orders)).toEqual(ids(before.orders))
    expect(ids(after.rooms)).toEqual(ids(before.rooms))
    expect(ids(after.messages)).toEqual(ids(before.messages))
    expect(ids(after.documents)).toEqual(ids(before.documents))
    // stock moved only by the demo's own orders: a second run bought nothing
    expect(after.products.map((product) => product.available)).toEqual(
      before.products.map((product) => product.available),
    )
  })

  it("when getting-started's blocks are pasted (scripts/seed itself, then the API), then the seed keeps the demo and the API shows it", async () => {
    const blocks = bashBlocksOf(page('docs/tutorials/getting-started.md'))
    expect(blocks.length).toBeGreaterThanOrEqual(3)
    const { stdout, stderr } = await paste(system, blocks, {
      MERIDIAN_GATEWAY_URL: system.gatewayUrl,
      MERIDIAN_PAYMENT_PROVIDER_URL: system.simulatorUrl,
      ...system.redisEnv,
    })
    expect(printedAccount(stdout, 'customer')).toEqual(customer)
    expect(stderr).toMatch(/catalogue: 0 product\(s\) created, 5 kept/)
    expect(stdout).toContain('"name": "Meridian mug"')
    for (const status of ['delivered', 'shipped', 'payment_failed', 'cancelled']) {
      expect(stdout).toMatch(new RegExp(`^[0-9a-f-]{36} ${status}$`, 'm'))
    }
    expect(stdout).toMatch(/^Demo lounge$/m)
    expect(stdout).toMatch(/^Welcome to Meridian$/m)
  })

  it('when the printed customer signs in to the console, then it shows the catalogue, their orders and the chat room', async () => {
    const page = await browser.newPage({ viewport: { width: 1100, height: 800 } })
    try {
      await signInToOrders(page, system.gatewayUrl, customer.email, customer.password)
      const statuses = page.locator('td[data-status]')
      await expect.poll(() => statuses.count()).toBe(4)
      expect((await statuses.evaluateAll(statusesOf)).sort()).toEqual([
        'cancelled',
        'delivered',
        'payment_failed',
        'shipped',
      ])
      // the seed's own mug, found by its SKU: other files on this system (README's tutorial) make products named so too
      const mugs = await client.request<{ data: Product[] }>('GET', '/api/v1/products?sku=DEMO-MUG')
      const mug = mugs.body.data[0]
      expect(mug?.name).toBe('Meridian mug')
      const option = page.getByLabel('Product').locator(`option[value="${mug?.id}"]`)
      expect(await option.textContent()).toMatch(/^Meridian mug — 12\.50 \(\d+ available\)$/)
      await page.screenshot({ path: `${artifacts}demo-orders.png`, fullPage: true })

      await page.getByRole('link', { name: 'Chat' }).click()
      await page.getByRole('button', { name: 'Join Demo lounge' }).click()
      await page
        .getByRole('log', { name: 'Messages in Demo lounge' })
        .getByText('Welcome to Meridian!')
        .waitFor({
          timeout: scaledMs(15_000),
        })
      await page.screenshot({ path: `${artifacts}demo-chat.png`, fullPage: true })
    } finally {
      await page.close()
    }
  })

  it("when the demo customer's password is no longer the demo's, then the seed stops saying how to fix it, and after that fix it runs again", async () => {
    const admin = await client.loginAdmin()
    const token = await client.login(customer.email, customer.password)
    const me = await client.request<{ sub: string }>('GET', '/userinfo', { token })
    const removed = await client.request('DELETE', `/api/v1/users/${me.body.sub}`, { token: admin.token })
    expect(removed.status).toBe(204)
    const registered = await client.request('POST', '/api/v1/users', {
      body: { name: 'Someone Else', email: customer.email, password: 'not-the-demo-password' },
    })
    expect(registered.status).toBe(201)

    const stopped = await runSeed()
    expect(stopped.code).toBe(1)
    expect(stopped.stderr).toContain(
      `${customer.email} exists but does not take the demo password (was it changed?): an admin deletes the user`,
    )
    expect(stopped.stdout).toBe('')

    // the fix it names: the user deleted, the next seed registers the demo customer again
    const other = await client.login(customer.email, 'not-the-demo-password')
    const otherId = (await client.request<{ sub: string }>('GET', '/userinfo', { token: other })).body.sub
    expect((await client.request('DELETE', `/api/v1/users/${otherId}`, { token: admin.token })).status).toBe(
      204,
    )
    const again = await runSeed()
    expect(again.code, again.stderr).toBe(0)
    expect(again.stderr).toMatch(/customer demo-customer@example.com: registered/)
    expect(printedAccount(again.stdout, 'customer')).toEqual(customer)
    const signedIn = await client.login(customer.email, customer.password)
    const newId = (await client.request<{ sub: string }>('GET', '/userinfo', { token: signedIn })).body.sub
    const orders = await client.request<{ data: Order[] }>('GET', `/api/v1/users/${newId}/orders?limit=100`, {
      token: signedIn,
    })
    expect(orders.body.data.map((order) => order.status).sort()).toEqual([
      'cancelled',
      'delivered',
      'payment_failed',
      'shipped',
    ])
  })
})

/** (a page script: this package is type-checked without the DOM's types) */
const statusesOf = (cells: { getAttribute(name: string): string | null }[]) =>
  cells.map((cell) => cell.getAttribute('data-status') ?? '')
