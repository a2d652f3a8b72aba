// The trace view the development Jaeger serves (infra/jaeger/ui): a synthetic trace of three services posted over
// OTLP/HTTP, found by the search, drawn as a waterfall in headless Chromium, its hostile attributes shown as text; the
// screenshot script's PNG of it.
import { randomBytes } from 'node:crypto'
import { mkdtempSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { type Browser, chromium, type Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { freePort } from '../src/free-port.ts'
import {
  ensureTraceStore,
  holdTraceStore,
  infraEnv,
  nativeJaegerUiUrl,
  stopTraceStore,
} from '../src/index.ts'
import { chromiumPath, TraceScreenshotError, traceScreenshot } from '../src/observability/index.ts'
import { scaledMs } from '../src/test-time.ts'
import { eventually } from './eventually.ts'

/** This process's environment without a given OTLP endpoint, native engines only (as jaeger.test.ts). */
function nativeEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, MERIDIAN_INFRA: 'native' }
  delete env.OTEL_EXPORTER_OTLP_ENDPOINT
  return env
}

const hex = (bytes: number) => randomBytes(bytes).toString('hex')
const quiet = { progress: () => {} }

/** A unique prefix per run: other data in the shared Jaeger never matches these services. */
const run = hex(4)
const service = (name: string) => `tv-${run}-${name}`
const orderId = `ord_${run}`
const requestId = `req-${run}`
const hostile = '<img src=x onerror="window.__pwned=1">'
const huge = `${hostile}${'y'.repeat(100_000)}`

const traceId = hex(16)
const otherTraceId = hex(16)
const ids = { root: hex(8), place: hex(8), insert: hex(8), charge: hex(8), provider: hex(8), orphan: hex(8) }
/** A parent that never reached Jaeger (its process died before exporting): its child is drawn at the top level. */
const lostParent = hex(8)

type Attribute = { key: string; value: { stringValue: string } }
const attribute = (key: string, value: string): Attribute => ({ key, value: { stringValue: value } })

/**
 * The order's trace: the gateway's request, order's use case and its query, payment's charge (failed, linked to the
 * placed order) and its provider call, a span whose parent never arrived — plus another order's request, which the tag search must leave out.
 */
function syntheticTraces(): unknown {
  const t0 = BigInt(Date.now()) * 1_000_000n - 500_000_000n
  const at = (ms: number) => String(t0 + BigInt(ms) * 1_000_000n)
  const span = (
    trace: string,
    id: string,
    parent: string,
    name: string,
    from: number,
    to: number,
    extra = {},
  ) => ({
    traceId: trace,
    spanId: id,
    parentSpanId: parent,
    name,
    kind: 2,
    startTimeUnixNano: at(from),
    endTimeUnixNano: at(to),
    ...extra,
  })
  const resource = (name: string, spans: unknown[]) => ({
    resource: {
      attributes: [attribute('service.name', service(name)), attribute('service.instance.id', `${name}-1`)],
    },
    scopeSpans: [{ scope: { name: 'trace-view-test' }, spans }],
  })
  return {
    resourceSpans: [
      resource('gateway', [
        span(traceId, ids.root, '', 'POST /api/v1/orders', 0, 100, {
          attributes: [
            attribute('order.id', orderId),
            attribute('http.request.header.x-request-id', requestId),
          ],
        }),
        span(otherTraceId, hex(8), '', 'POST /api/v1/orders', 200, 230, {
          attributes: [attribute('order.id', `ord_other_${run}`)],
        }),
      ]),
      resource('order', [
        span(traceId, ids.place, ids.root, 'place order', 5, 40, {
          events: [
            { timeUnixNano: at(30), name: 'order.placed', attributes: [attribute('order.status', 'placed')] },
          ],
        }),
        span(traceId, ids.insert, ids.place, 'INSERT orders', 10, 20),
      ]),
      resource('payment', [
        span(traceId, ids.charge, ids.root, 'charge card', 45, 90, {
          status: { code: 2, message: 'card declined' },
          links: [{ traceId, spanId: ids.place }],
          attributes: [attribute('note', hostile), attribute('payload', huge)],
        }),
        span(traceId, ids.provider, ids.charge, 'provider call', 50, 80),
        span(traceId, ids.orphan, lostParent, 'refund check', 95, 99),
      ]),
    ],
  }
}

/** The waterfall's rows as [service, operation, depth, marked as an error]. */
async function rows(page: Page): Promise<[string, string, number, boolean][]> {
  const items = page.locator('li.span')
  const result: [string, string, number, boolean][] = []
  for (const item of await items.all()) {
    result.push([
      (await item.getAttribute('data-service')) ?? '',
      (await item.locator('.span-operation').textContent()) ?? '',
      Number(await item.getAttribute('data-depth')),
      ((await item.getAttribute('class')) ?? '').split(' ').includes('error'),
    ])
  }
  return result
}

/** Opens the trace's page and waits for its waterfall. */
async function openTrace(page: Page, id = traceId): Promise<void> {
  await page.goto(`${nativeJaegerUiUrl}/trace/${id}`)
  await page.locator('.waterfall[data-drawn]').waitFor({ timeout: scaledMs(30_000) })
}

/** The details of the row whose operation is `operation`, opened. */
async function openDetails(page: Page, operation: string) {
  const row = page.locator('li.span', { has: page.locator('.span-operation', { hasText: operation }) })
  await row.locator('> button').click()
  const details = row.locator('.span-details')
  await details.waitFor()
  return details
}

describe('the trace view the development Jaeger serves', { timeout: scaledMs(60_000) }, () => {
  let runningBefore = false
  let release = () => {}
  let browser: Browser
  let page: Page
  const pageErrors: string[] = []

  beforeAll(async () => {
    // jaeger.test.ts starts and stops this same Jaeger: one file at a time
    release = await holdTraceStore()
    // a Jaeger that ran before this file runs after it too; one started elsewhere without the view is restarted
    runningBefore = (await infraEnv(nativeEnv())).includes('OTEL_EXPORTER_OTLP_ENDPOINT')
    await ensureTraceStore({ env: nativeEnv(), ...quiet })
    const index = await (await fetch(nativeJaegerUiUrl)).text()
    if (!index.includes('Meridian traces')) {
      await stopTraceStore({ env: nativeEnv(), ...quiet })
      await ensureTraceStore({ env: nativeEnv(), ...quiet })
    }
    const posted = await fetch('http://127.0.0.1:4318/v1/traces', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(syntheticTraces()),
    })
    expect(posted.status).toBe(200)
    await eventually('the trace in the query API', async () => {
      const response = await fetch(`${nativeJaegerUiUrl}/api/traces/${traceId}`)
      if (!response.ok) return undefined
      const { data } = (await response.json()) as { data: { spans: unknown[] }[] }
      return data[0]?.spans.length === 6 ? true : undefined
    })
    browser = await chromium.launch({ executablePath: chromiumPath(), args: ['--no-sandbox'] })
    page = await browser.newPage({ viewport: { width: 1600, height: 1000 } })
    // an uncaught error in the view (or in a script an attribute smuggled in) is kept for the last word
    page.on('pageerror', (error) => pageErrors.push(error.message))
  }, scaledMs(270_000))

  afterAll(async () => {
    try {
      await browser?.close()
      if (runningBefore) await ensureTraceStore({ env: nativeEnv(), ...quiet })
      else await stopTraceStore({ env: nativeEnv(), ...quiet })
    } finally {
      release()
    }
  }, scaledMs(60_000))

  it('when the UI address and an unknown path of it are asked for, then both are the trace view, and its script and style are served', async () => {
    for (const path of ['/', `/trace/${traceId}`, `/search?service=${service('gateway')}`]) {
      const response = await fetch(`${nativeJaegerUiUrl}${path}`)
      expect(response.status, path).toBe(200)
      const html = await response.text()
      expect(html, path).toContain('<title>Traces · Meridian</title>')
      expect(html, path).toContain("script-src 'self'")
      expect(html, path).not.toContain('This is not the Jaeger UI')
    }
    const script = await fetch(`${nativeJaegerUiUrl}/static/viewer.js`)
    expect(script.status).toBe(200)
    expect(script.headers.get('content-type')).toMatch(/javascript/)
    expect(await script.text()).toContain('Meridian')
    expect((await fetch(`${nativeJaegerUiUrl}/static/viewer.css`)).headers.get('content-type')).toMatch(
      /text\/css/,
    )
  })

  it('when a service and a tag are searched with the form, then the one matching trace is listed with its root, spans and services, and the address names the search', async () => {
    await page.goto(nativeJaegerUiUrl)
    const serviceSelect = page.getByLabel('Service', { exact: true })
    await serviceSelect.locator(`option[value="${service('gateway')}"]`).waitFor({ state: 'attached' })
    await serviceSelect.selectOption(service('gateway'))
    await page.getByLabel('Tags', { exact: true }).fill(`order.id=${orderId}`)
    await page.getByRole('button', { name: 'Find traces' }).click()

    const items = page.locator('li.trace-item')
    await page.getByRole('heading', { name: /^1 trace/ }).waitFor()
    expect(await items.count()).toBe(1)
    expect(await items.first().getAttribute('data-trace-id')).toBe(traceId)
    const text = (await items.first().textContent()) ?? ''
    expect(text).toContain(`${service('gateway')}: POST /api/v1/orders`)
    expect(text).toContain('6 spans')
    expect(text).toContain('1 error')
    expect(await items.first().locator('.service-chips li').allTextContents()).toEqual([
      `${service('gateway')} (1)`,
      `${service('order')} (2)`,
      `${service('payment')} (3)`,
    ])
    const address = new URL(page.url())
    expect(address.pathname).toBe('/search')
    expect(address.searchParams.get('service')).toBe(service('gateway'))
    expect(address.searchParams.get('tags')).toBe(`order.id=${orderId}`)
  })

  it('when a search address is loaded as it is (the request id tag), then it searches on load, and its result opens the trace', async () => {
    const tags = `http.request.header.x-request-id=${requestId}`
    await page.goto(
      `${nativeJaegerUiUrl}/search?service=${service('gateway')}&tags=${encodeURIComponent(tags)}`,
    )
    const link = page.locator('li.trace-item a.trace-link')
    await link.waitFor()
    expect(await page.locator('li.trace-item').count()).toBe(1)
    expect(await page.getByLabel('Tags', { exact: true }).inputValue()).toBe(tags)
    await link.click()
    await page.locator('.waterfall[data-drawn]').waitFor()
    expect(new URL(page.url()).pathname).toBe(`/trace/${traceId}`)
  })

  it('when tags are malformed, then the search says how to write them and lists nothing', async () => {
    await page.goto(
      `${nativeJaegerUiUrl}/search?service=${service('gateway')}&tags=${encodeURIComponent('order.id')}`,
    )
    const alert = page.getByRole('alert')
    await alert.waitFor()
    expect(await alert.textContent()).toContain('key=value')
    expect(await page.locator('li.trace-item').count()).toBe(0)
  })

  it('when a trace is opened by its address, then the waterfall has one row per span, parents before children, nested by depth (a span whose parent never arrived at the top level), and the failed span marked', async () => {
    await openTrace(page)
    expect(await rows(page)).toEqual([
      [service('gateway'), 'POST /api/v1/orders', 0, false],
      [service('order'), 'place order', 1, false],
      [service('order'), 'INSERT orders', 2, false],
      [service('payment'), 'charge card', 1, true],
      [service('payment'), 'provider call', 2, false],
      [service('payment'), 'refund check', 0, false],
    ])
    expect(await page.locator('li.span.error .error-badge').textContent()).toBe('error')
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe(
      `${service('gateway')}: POST /api/v1/orders`,
    )
    expect(await page.locator('.legend li').allTextContents()).toEqual([
      service('gateway'),
      service('order'),
      service('payment'),
    ])
    // each service its own colour, the same on every one of its rows
    const colours = await page
      .locator('li.span .bar')
      .evaluateAll((bars) =>
        bars.map((bar) => (bar as unknown as { style: { background: string } }).style.background),
      )
    expect(new Set(colours).size).toBe(3)
    expect(colours[1]).toBe(colours[2])
  })

  it('when a span row is clicked, then its attributes, its events and its links (a parent never received said so) show, a second click hides them, and Enter opens one', async () => {
    await openTrace(page)
    const root = await openDetails(page, 'POST /api/v1/orders')
    expect(await root.locator('tr', { hasText: 'order.id' }).locator('td').textContent()).toBe(orderId)

    const place = await openDetails(page, 'place order')
    const event = (await place.locator('.events li').textContent()) ?? ''
    expect(event).toContain('order.placed')
    expect(event).toContain('placed')

    const charge = await openDetails(page, 'charge card')
    expect(
      await charge.locator('tr', { hasText: 'otel.status_description' }).locator('td').textContent(),
    ).toBe('card declined')
    const references = await charge.locator('.references li').allTextContents()
    expect(references).toContain(`child of ${service('gateway')}: POST /api/v1/orders (${ids.root})`)
    expect(references).toContain(`link (follows from) ${service('order')}: place order (${ids.place})`)

    const orphan = await openDetails(page, 'refund check')
    expect(await orphan.locator('.references li').allTextContents()).toEqual([
      `child of span ${lostParent}, not in this trace (not received)`,
    ])

    const row = page.locator('li.span', { has: page.locator('.span-operation', { hasText: 'charge card' }) })
    await row.locator('> button').click()
    expect(await charge.isHidden()).toBe(true)
    expect(await row.locator('> button').getAttribute('aria-expanded')).toBe('false')

    // from the keyboard: a row is a button, Enter opens it
    const insert = page.locator('li.span', {
      has: page.locator('.span-operation', { hasText: 'INSERT orders' }),
    })
    await insert.locator('> button').focus()
    await page.keyboard.press('Enter')
    expect(await insert.locator('> button').getAttribute('aria-expanded')).toBe('true')
    expect(await insert.locator('.span-details').isVisible()).toBe(true)
  })

  it('when an attribute holds markup and another 100 kB, then both show as text, bounded, and nothing in them runs', async () => {
    await openTrace(page)
    const charge = await openDetails(page, 'charge card')
    expect(await charge.locator('tr', { hasText: 'note' }).locator('td').textContent()).toBe(hostile)
    const payload = (await charge.locator('tr', { hasText: 'payload' }).locator('td').textContent()) ?? ''
    expect(payload.startsWith(hostile)).toBe(true)
    expect(payload).toContain(`(${huge.length.toLocaleString('en-US')} characters, the first 1,000 shown)`)
    expect(payload.length).toBeLessThan(1100)
    expect(await page.locator('main img').count()).toBe(0)
    expect(await page.evaluate('window.__pwned')).toBeUndefined()
    expect(pageErrors).toEqual([])
  })

  it('when a trace holds more spans than the view draws, nested one in another, then the first 5,000 rows are drawn and a note says how many there are', async () => {
    // a chain: each span the child of the one before, so the walk is 5,002 levels deep (no recursion to overflow)
    const deepTraceId = hex(16)
    const t0 = BigInt(Date.now()) * 1_000_000n - 2_000_000_000n
    const spanIds = Array.from({ length: 5_002 }, () => hex(8))
    const spans = spanIds.map((spanId, i) => ({
      traceId: deepTraceId,
      spanId,
      parentSpanId: i === 0 ? '' : spanIds[i - 1],
      name: `step ${i}`,
      kind: 1,
      startTimeUnixNano: String(t0 + BigInt(i) * 1000n),
      endTimeUnixNano: String(t0 + 10_000_000n),
    }))
    const posted = await fetch('http://127.0.0.1:4318/v1/traces', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        resourceSpans: [
          {
            resource: { attributes: [attribute('service.name', service('deep'))] },
            scopeSpans: [{ scope: { name: 'trace-view-test' }, spans }],
          },
        ],
      }),
    })
    expect(posted.status).toBe(200)
    await eventually('the deep trace in the query API', async () => {
      const response = await fetch(`${nativeJaegerUiUrl}/api/traces/${deepTraceId}`)
      if (!response.ok) return undefined
      const { data } = (await response.json()) as { data: { spans: unknown[] }[] }
      return data[0]?.spans.length === spanIds.length ? true : undefined
    })

    await openTrace(page, deepTraceId)
    expect(await page.locator('li.span').count()).toBe(5_000)
    expect(await page.getByRole('note').textContent()).toBe('The first 5,000 of 5,002 spans are drawn.')
    expect(await page.locator('li.span').nth(4_999).getAttribute('data-depth')).toBe('4999')
    expect(await page.locator('li.span .span-operation').nth(4_999).textContent()).toBe('step 4999')
  })

  it('when a trace id Jaeger does not hold is opened, then the view says so and links back to the search', async () => {
    await page.goto(`${nativeJaegerUiUrl}/trace/${hex(16)}`)
    await page.getByRole('heading', { name: 'Trace not found' }).waitFor()
    expect(await page.getByRole('link', { name: 'Back to the search' }).getAttribute('href')).toBe('search')
  })

  it('when the screenshot script is given the trace id, or the service and the order tag, then it writes a 1600x1000 PNG of the trace, making its folder', async () => {
    const folder = mkdtempSync(join(tmpdir(), 'meridian-trace-shot-'))
    const byId = await traceScreenshot({
      jaegerUrl: nativeJaegerUiUrl,
      traceId,
      out: join(folder, 'images', 'by-id.png'),
    })
    const byTag = await traceScreenshot({
      jaegerUrl: nativeJaegerUiUrl,
      service: service('gateway'),
      tags: { 'order.id': orderId },
      open: 'charge card',
      out: join(folder, 'by-tag.png'),
    })
    expect(byTag.traceId).toBe(traceId)
    for (const shot of [byId, byTag]) {
      const png = readFileSync(shot.out)
      expect(png.subarray(0, 8).toString('hex')).toBe('89504e470d0a1a0a')
      expect(png.length).toBe(shot.bytes)
      expect(png.length).toBeGreaterThan(20_000)
      // the IHDR chunk: width and height
      expect([png.readUInt32BE(16), png.readUInt32BE(20)]).toEqual([1600, 1000])
    }
  })

  it('when the screenshot script is given a trace Jaeger does not hold, no Jaeger, a malformed id, or a search that finds nothing, then it fails saying which', async () => {
    const out = join(mkdtempSync(join(tmpdir(), 'meridian-trace-shot-')), 'none.png')
    const missing = hex(16)
    await expect(traceScreenshot({ jaegerUrl: nativeJaegerUiUrl, traceId: missing, out })).rejects.toThrow(
      `did not draw trace ${missing}: Trace not found Jaeger holds no trace ${missing}.`,
    )
    // a port where nothing listens
    const nobody = `http://127.0.0.1:${await freePort()}`
    await expect(
      traceScreenshot({ jaegerUrl: nobody, traceId: missing, out, timeoutMs: 5_000 }),
    ).rejects.toThrow(`cannot open ${nobody}/trace/${missing} (page.goto: net::ERR_CONNECTION_REFUSED`)
    await expect(traceScreenshot({ jaegerUrl: nativeJaegerUiUrl, traceId: '../api', out })).rejects.toThrow(
      TraceScreenshotError,
    )
    await expect(
      traceScreenshot({
        jaegerUrl: nativeJaegerUiUrl,
        service: service('gateway'),
        tags: { 'order.id': 'nope' },
        out,
      }),
    ).rejects.toThrow(/holds no trace of service 'tv-.*-gateway'/)
  })
})
