// A PNG of one trace in the trace view the development Jaeger serves (infra/jaeger/ui): headless Chromium at
// 1600x1000, once the waterfall is drawn. The trace is given by id, or found as a service's latest with given tags.
import { mkdir, writeFile } from 'node:fs/promises'
import { dirname } from 'node:path'
import { chromium } from 'playwright-core'
import { chromiumPath } from './chromium.ts'

export interface TraceScreenshotOptions {
  /** The Jaeger serving the trace view and its query API, e.g. http://127.0.0.1:16686. */
  jaegerUrl: string
  /** The trace to show; without it, the latest trace of `service` that has `tags`. */
  traceId?: string
  service?: string
  tags?: Record<string, string>
  /** Spans whose operation name contains this are opened (their details shown) before the picture is taken. */
  open?: string
  /** Where the PNG goes. */
  out: string
  timeoutMs?: number
}

export interface TraceScreenshot {
  traceId: string
  out: string
  bytes: number
}

export const screenshotViewport = { width: 1600, height: 1000 } as const

/** Whatever the command line or the browser cannot do: one message for the person running it. */
export class TraceScreenshotError extends Error {
  constructor(message: string) {
    super(message)
    this.name = 'TraceScreenshotError'
  }
}

const traceIdPattern = /^[0-9a-f]{1,32}$/

/** The latest trace of `service` holding `tags`, through Jaeger's query API (the last hour). */
export async function findTraceId(
  jaegerUrl: string,
  service: string,
  tags: Record<string, string> = {},
): Promise<string> {
  const endUs = Date.now() * 1000
  const query = new URLSearchParams({
    service,
    start: String(endUs - 3600 * 1_000_000),
    end: String(endUs),
    limit: '20',
  })
  if (Object.keys(tags).length > 0) query.set('tags', JSON.stringify(tags))
  const response = await fetch(new URL(`/api/traces?${query}`, jaegerUrl), {
    signal: AbortSignal.timeout(10_000),
  })
  if (!response.ok)
    throw new TraceScreenshotError(`jaeger at ${jaegerUrl}: /api/traces answered ${response.status}`)
  const { data } = (await response.json()) as {
    data: { traceID: string; spans: { startTime: number }[] }[] | null
  }
  const latest = (data ?? [])
    .map((trace) => ({
      id: trace.traceID,
      start: trace.spans.reduce((min, span) => Math.min(min, span.startTime), Infinity),
    }))
    .sort((a, b) => b.start - a.start)[0]
  if (!latest) {
    throw new TraceScreenshotError(
      `jaeger at ${jaegerUrl} holds no trace of service '${service}' with ${JSON.stringify(tags)} in the last hour`,
    )
  }
  return latest.id
}

/** Opens the trace's page in headless Chromium, waits for its waterfall, and writes the PNG. */
export async function traceScreenshot(options: TraceScreenshotOptions): Promise<TraceScreenshot> {
  const timeout = options.timeoutMs ?? 30_000
  let traceId = options.traceId?.toLowerCase()
  if (traceId === undefined) {
    if (!options.service)
      throw new TraceScreenshotError('give a trace id, or a service (and tags) to find one')
    traceId = await findTraceId(options.jaegerUrl, options.service, options.tags)
  }
  if (!traceIdPattern.test(traceId)) {
    throw new TraceScreenshotError(`a trace id is up to 32 hexadecimal digits (got '${traceId}')`)
  }
  const browser = await chromium.launch({ executablePath: chromiumPath(), args: ['--no-sandbox'] })
  try {
    const page = await browser.newPage({ viewport: screenshotViewport, deviceScaleFactor: 1 })
    const address = new URL(`/trace/${traceId}`, options.jaegerUrl).href
    try {
      await page.goto(address, { timeout })
    } catch (error) {
      throw new TraceScreenshotError(
        `cannot open ${address} (${error instanceof Error ? error.message.split('\n')[0] : String(error)}): is Jaeger running (./scripts/dev or ./scripts/infra up)?`,
      )
    }
    const drawn = page.locator('.waterfall[data-drawn]')
    const problem = page.locator('main h1:text-is("Trace not found"), main h1:text-is("Trace not loaded")')
    await drawn.or(problem).first().waitFor({ timeout })
    if (!(await drawn.isVisible())) {
      const says = await page.locator('main h1, main p').allTextContents()
      throw new TraceScreenshotError(
        `the trace view did not draw trace ${traceId}: ${says.join(' ').replace(/\s+/g, ' ')}`,
      )
    }
    if (options.open) {
      const rows = page.locator('li.span', {
        has: page.locator('.span-operation', { hasText: options.open }),
      })
      for (const row of await rows.locator('> button').all()) await row.click()
    }
    const png = await page.screenshot({ type: 'png', fullPage: false })
    // e.g. docs/images/, which exists only once a picture is in it
    await mkdir(dirname(options.out), { recursive: true })
    await writeFile(options.out, png)
    return { traceId, out: options.out, bytes: png.length }
  } finally {
    await browser.close()
  }
}
