// The console's Documents view in a real browser (Chromium through playwright-core), two users at once: a document
// shared over REST is edited by both on the realtime channel's /collab namespace, each seeing the other's typing
// live; and an edit made on a version someone else's edit already replaced is shown as a conflict, the page taking
// the server's text. The Chat view too: a room shared over REST, a message sent with Enter read live by the other
// member. Screenshots are written to tests/e2e/artifacts/ (not committed).
import { randomBytes } from 'node:crypto'
import type { CollaborativeDocument } from '@meridian/contracts'
import { createRealtimeClient, request } from '@meridian/realtime-client'
import type { Browser, BrowserContext, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest'
import { e2eClient } from '../src/client.ts'
import {
  artifacts,
  type BrowserCustomer,
  launchChromium,
  newCustomer,
  signInToOrders,
} from '../src/console-browser.ts'
import '../src/system-context.ts'
import { scaledMs } from '@meridian/testkit'

const system = inject('system')
const client = e2eClient(system)
const viewport = { width: 1100, height: 800 }

let browser: Browser

beforeAll(async () => {
  browser = await launchChromium()
})

afterAll(async () => {
  await browser?.close()
})

/** Signs the customer in on a page of its own browser context (its own storage, as another person's browser). */
async function consoleOf(context: BrowserContext, customer: BrowserCustomer): Promise<Page> {
  const page = await context.newPage()
  await signInToOrders(page, system.gatewayUrl, customer.email, customer.password)
  await page.getByRole('link', { name: 'Documents' }).click()
  return page
}

/** Opens the document from the list and waits until the page has joined it (the textarea is enabled). */
async function openDocument(page: Page, title: string) {
  await page.getByRole('button', { name: `Open ${title}` }).click()
  const content = page.getByLabel(`Content of ${title}`)
  await expect.poll(() => content.isEnabled()).toBe(true)
  return content
}

describe('the Documents view, two users in two browsers', () => {
  it('when A types in a document shared with B, then B sees it live, and when B types, then A sees it', async () => {
    const [ada, bo] = await Promise.all([newCustomer(client, 'Ada Writer'), newCustomer(client, 'Bo Reader')])
    const [adaContext, boContext] = await Promise.all([
      browser.newContext({ viewport }),
      browser.newContext({ viewport }),
    ])
    try {
      const [adaPage, boPage] = await Promise.all([consoleOf(adaContext, ada), consoleOf(boContext, bo)])
      const title = `Runbook ${randomBytes(3).toString('hex')}`

      // A creates the document (it opens) and adds B by user id
      await adaPage.getByLabel('Document title').fill(title)
      await adaPage.getByRole('button', { name: 'Create document' }).click()
      const adaText = adaPage.getByLabel(`Content of ${title}`)
      await expect.poll(() => adaText.isEnabled()).toBe(true)
      await adaPage.getByLabel('Add a member by user id').fill(bo.id)
      await adaPage.getByRole('button', { name: 'Add member' }).click()
      await adaPage.getByText(`${bo.id} is a member now.`).waitFor({ timeout: scaledMs(15_000) })

      // B finds it in the list and opens it; A sees both in the document
      await boPage.getByRole('button', { name: 'Refresh the list' }).click()
      const boText = await openDocument(boPage, title)
      const inDocument = adaPage.getByRole('list', { name: 'In this document' }).getByRole('listitem')
      await expect.poll(() => inDocument.allTextContents()).toHaveLength(2)
      expect((await inDocument.allTextContents()).sort()).toEqual(['Ada Writer', 'Bo Reader'])

      await adaText.click()
      await adaText.pressSequentially('Hello from Ada. ', { delay: 20 })
      await expect.poll(() => boText.inputValue()).toBe('Hello from Ada. ')

      await boText.click()
      await boText.press('Control+End')
      await boText.pressSequentially('Hi Ada, Bo here.', { delay: 20 })
      const both = 'Hello from Ada. Hi Ada, Bo here.'
      await expect.poll(() => adaText.inputValue()).toBe(both)

      // the server stored the same text, and both pages are on its version
      const docId = await adaPage.locator('section.document').getAttribute('data-document-id')
      const token = await client.login(bo.email, bo.password)
      const stored = await client.request<CollaborativeDocument>('GET', `/api/v1/documents/${docId}`, {
        token,
      })
      expect(stored.body.content).toBe(both)
      const version = String(stored.body.version)
      for (const page of [adaPage, boPage]) {
        await expect.poll(() => page.locator('.document-version').getAttribute('data-version')).toBe(version)
      }
      await adaPage.screenshot({ path: `${artifacts}documents.png`, fullPage: true })
    } finally {
      await adaContext.close()
      await boContext.close()
    }
  })

  it("when the user's edit was made on a version another edit already replaced, then the page announces a conflict and shows the server's text", async () => {
    const ada = await newCustomer(client, 'Ada Writer')
    const token = await client.login(ada.email, ada.password)
    const title = `Conflicted ${randomBytes(3).toString('hex')}`
    const created = await client.request<CollaborativeDocument>('POST', '/api/v1/documents', {
      token,
      body: { title, content: 'Base text.' },
    })
    expect(created.status).toBe(201)
    const docId = created.body.id
    const context = await browser.newContext({ viewport })
    // Ada's other device edits first; the page must not hear of it before it sends its own edit, so the channel's
    // collab:remote-edit frames are held back on the way to the page while `holding`
    let holding = false
    await context.routeWebSocket(
      (url) => url.pathname.startsWith('/socket.io/'),
      (page) => {
        const server = page.connectToServer()
        page.onMessage((message) => server.send(message))
        server.onMessage((message) => {
          if (holding && String(message).includes('collab:remote-edit')) return
          page.send(message)
        })
      },
    )
    const otherDevice = createRealtimeClient({ url: system.gatewayUrl, token: () => token })
    try {
      const page = await consoleOf(context, ada)
      const text = await openDocument(page, title)
      expect(await text.inputValue()).toBe('Base text.')

      holding = true
      const collab = otherDevice.namespace('/collab')
      await request(collab, 'collab:join', { docId })
      const theirs = await request(collab, 'collab:edit', {
        docId,
        operation: { type: 'insert', position: 0, text: 'Theirs: ' },
        baseVersion: 0,
      })
      expect(theirs.version).toBe(1)

      // the page still believes version 0: its edit is refused, and it takes the server's text and version
      await text.click()
      await text.press('Control+End')
      await text.press('!')
      const conflict = page.getByRole('status').filter({ hasText: 'Conflict' })
      await conflict.waitFor({ timeout: scaledMs(15_000) })
      expect(await conflict.textContent()).toContain('version 1')
      await expect.poll(() => text.inputValue()).toBe('Theirs: Base text.')
      expect(await page.locator('.document-version').getAttribute('data-version')).toBe('1')
      await page.screenshot({ path: `${artifacts}documents-conflict.png`, fullPage: true })

      // on the server's version, the next edit is accepted
      holding = false
      await text.press('Control+End')
      await text.press('!')
      await expect
        .poll(
          async () =>
            (await client.request<CollaborativeDocument>('GET', `/api/v1/documents/${docId}`, { token })).body
              .content,
          { timeout: scaledMs(15_000) },
        )
        .toBe('Theirs: Base text.!')
    } finally {
      otherDevice.close()
      await context.close()
    }
  })
})

describe('the Chat view, two users in two browsers', () => {
  it('when A sends a message with Enter in a room shared with B, then B reads it live, after the history', async () => {
    const [ada, bo] = await Promise.all([newCustomer(client, 'Ada Writer'), newCustomer(client, 'Bo Reader')])
    const adaContext = await browser.newContext({ viewport })
    // B reads on a narrow window
    const boContext = await browser.newContext({ viewport: { width: 420, height: 800 } })
    try {
      const [adaPage, boPage] = await Promise.all([consoleOf(adaContext, ada), consoleOf(boContext, bo)])
      await adaPage.getByRole('link', { name: 'Chat' }).click()
      const name = `support ${randomBytes(3).toString('hex')}`
      await adaPage.getByLabel('Room name').fill(name)
      await adaPage.getByRole('button', { name: 'Create room' }).click()
      const adaMessage = adaPage.getByLabel('Message', { exact: true })
      await adaMessage.fill('Before you came.')
      await adaMessage.press('Enter')
      const adaLog = adaPage.getByRole('log')
      await adaLog.getByText('Before you came.').waitFor({ timeout: scaledMs(15_000) })
      await adaPage.getByLabel('Add a member by user id').fill(bo.id)
      await adaPage.getByRole('button', { name: 'Add member' }).click()
      await adaPage.getByText(`${bo.id} is a member now.`).waitFor({ timeout: scaledMs(15_000) })

      await boPage.getByRole('link', { name: 'Chat' }).click()
      await boPage.getByRole('button', { name: `Join ${name}` }).click()
      const boLog = boPage.getByRole('log')
      await boLog.getByText('Before you came.').waitFor({ timeout: scaledMs(15_000) })
      await adaPage.getByText(/Here now: .*Bo Reader/).waitFor({ timeout: scaledMs(15_000) })

      await adaMessage.fill('Welcome, Bo!')
      await adaMessage.press('Enter')
      await boLog.getByText('Welcome, Bo!').waitFor({ timeout: scaledMs(15_000) })
      expect(await boLog.getByRole('listitem').allTextContents()).toEqual([
        expect.stringContaining('Before you came.'),
        expect.stringContaining('Welcome, Bo!'),
      ])
      await boPage.screenshot({ path: `${artifacts}chat-narrow.png`, fullPage: true })
    } finally {
      await adaContext.close()
      await boContext.close()
    }
  })
})
