// Jaeger as the development trace store: brought up (or reused) natively, fed one OTLP/HTTP trace, read back through
// its query API; its status and env lines; an endpoint given instead; a port someone else holds; stopped again.
import { randomBytes } from 'node:crypto'
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  ensureTraceStore,
  holdTraceStore,
  infraEnv,
  infraStatus,
  jaegerUiAssetsDir,
  layoutFromEnv,
  nativeJaegerUiUrl,
  pinnedJaegerVersion,
  stopTraceStore,
} from '../src/index.ts'
import { scaledMs } from '../src/test-time.ts'
import { eventually } from './eventually.ts'

/** This process's environment without a given OTLP endpoint, native engines only (the Docker question settled). */
function nativeEnv(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, MERIDIAN_INFRA: 'native', ...extra }
  if (!('OTEL_EXPORTER_OTLP_ENDPOINT' in extra)) delete env.OTEL_EXPORTER_OTLP_ENDPOINT
  return env
}

/** A cache folder nothing was ever started from. */
const emptyCache = () => mkdtempSync(join(tmpdir(), 'meridian-jaeger-'))

const hex = (bytes: number) => randomBytes(bytes).toString('hex')

async function getJson<T>(path: string): Promise<T> {
  const response = await fetch(`${nativeJaegerUiUrl}${path}`, { signal: AbortSignal.timeout(5000) })
  expect(response.status, path).toBe(200)
  return (await response.json()) as T
}

interface JaegerTrace {
  traceID: string
  spans: { traceID: string; spanID: string; operationName: string; processID: string }[]
  processes: Record<string, { serviceName: string }>
}

describe('jaeger, the development trace store', () => {
  // a Jaeger that ran before this file (a developer's ./scripts/dev) runs after it too; one this file started does not
  let runningBefore = false
  let release = () => {}
  beforeAll(async () => {
    // trace-view.test.ts (re)starts this same Jaeger: one file at a time
    release = await holdTraceStore()
    runningBefore = (await infraEnv(nativeEnv())).includes('OTEL_EXPORTER_OTLP_ENDPOINT')
  }, scaledMs(160_000))
  afterAll(async () => {
    try {
      if (runningBefore) await ensureTraceStore({ env: nativeEnv(), progress: () => {} })
      else await stopTraceStore({ env: nativeEnv(), progress: () => {} })
    } finally {
      release()
    }
  }, scaledMs(60_000))

  it('when the trace store is brought up, then a span posted over OTLP/HTTP is found through the query API by its service and trace id', async () => {
    const messages: string[] = []
    const endpoint = await ensureTraceStore({ env: nativeEnv(), progress: (m) => messages.push(m) })
    expect(endpoint).toBe('http://127.0.0.1:4318')
    expect(messages.join('\n')).toMatch(/jaeger: (reusing|.* healthy at http:\/\/127\.0\.0\.1:4318)/)

    const service = `infra-test-${hex(6)}`
    const traceId = hex(16)
    const spanId = hex(8)
    const now = BigInt(Date.now()) * 1_000_000n
    const posted = await fetch(`${endpoint}/v1/traces`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        resourceSpans: [
          {
            resource: { attributes: [{ key: 'service.name', value: { stringValue: service } }] },
            scopeSpans: [
              {
                scope: { name: 'infra-test' },
                spans: [
                  {
                    traceId,
                    spanId,
                    name: 'place order',
                    kind: 2,
                    startTimeUnixNano: String(now - 5_000_000n),
                    endTimeUnixNano: String(now),
                  },
                ],
              },
            ],
          },
        ],
      }),
    })
    expect(posted.status).toBe(200)

    await eventually('the service in /api/services', async () => {
      const { data } = await getJson<{ data: string[] | null }>('/api/services')
      return data?.includes(service) ? true : undefined
    })
    const traces = await eventually('the trace in /api/traces', async () => {
      const { data } = await getJson<{ data: JaegerTrace[] }>(`/api/traces?service=${service}&limit=5`)
      return data.length > 0 ? data : undefined
    })
    expect(traces).toHaveLength(1)
    const [trace] = traces as [JaegerTrace]
    expect(trace.traceID).toBe(traceId)
    expect(trace.spans.map((span) => [span.spanID, span.operationName])).toEqual([[spanId, 'place order']])
    expect(trace.processes[trace.spans[0]?.processID ?? '']?.serviceName).toBe(service)
  })

  it('when Jaeger runs, then status shows it healthy with its release and pid, and env exports its OTLP endpoint', async () => {
    const env = nativeEnv()
    await ensureTraceStore({ env, progress: () => {} })
    const jaeger = (await infraStatus(env)).find((status) => status.name === 'jaeger')
    expect(jaeger).toMatchObject({
      mode: 'native',
      healthy: true,
      detail: `Jaeger ${pinnedJaegerVersion().release}`,
      endpoint: 'http://127.0.0.1:4318',
    })
    expect(jaeger?.process).toMatch(/^\d+$/)
    expect((await infraEnv(env)).split('\n')).toContain(
      "export OTEL_EXPORTER_OTLP_ENDPOINT='http://127.0.0.1:4318'",
    )
  })

  it('when Jaeger was never started from this cache folder, then status says stopped and env exports no OTLP endpoint', async () => {
    const env = nativeEnv({ MERIDIAN_CACHE_DIR: emptyCache() })
    const jaeger = (await infraStatus(env)).find((status) => status.name === 'jaeger')
    expect(jaeger).toMatchObject({ mode: 'native', healthy: false, detail: 'stopped' })
    expect(await infraEnv(env)).not.toContain('OTEL_EXPORTER_OTLP_ENDPOINT')
  })

  it('when an OTLP endpoint is given, then it is checked and used as it is: nothing is started, and env exports it', async () => {
    // the running Jaeger stands in for a collector elsewhere; the given value is kept exactly (trailing slash too)
    await ensureTraceStore({ env: nativeEnv(), progress: () => {} })
    const cache = emptyCache()
    const env = nativeEnv({
      MERIDIAN_CACHE_DIR: cache,
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318/',
    })
    const messages: string[] = []
    expect(await ensureTraceStore({ env, progress: (m) => messages.push(m) })).toBe('http://127.0.0.1:4318/')
    expect(messages).toContain('jaeger: using OTLP/HTTP receiver at http://127.0.0.1:4318/ (external)')
    expect(existsSync(join(cache, 'jaeger', 'meridian.pid'))).toBe(false)
    expect((await infraStatus(env)).find((status) => status.name === 'jaeger')).toMatchObject({
      mode: 'external',
      healthy: true,
      detail: 'OTLP/HTTP receiver',
    })
    expect((await infraEnv(env)).split('\n')).toContain(
      "export OTEL_EXPORTER_OTLP_ENDPOINT='http://127.0.0.1:4318/'",
    )
  })

  it('when a port Jaeger needs is held by a process it did not start, then it is not started and the error names the port and its holder', async () => {
    // the Jaeger of the default cache folder holds 4317; from an empty cache folder it is someone else's
    await ensureTraceStore({ env: nativeEnv(), progress: () => {} })
    const cache = emptyCache()
    await expect(
      ensureTraceStore({ env: nativeEnv({ MERIDIAN_CACHE_DIR: cache }), progress: () => {} }),
    ).rejects.toThrow(
      /jaeger: port 4317 is already held by process \d+ \(.*jaeger.*\).*docs\/reference\/configuration\.md/s,
    )
    expect(existsSync(join(cache, 'jaeger', 'meridian.pid'))).toBe(false)
  })

  it("when Jaeger runs, then it serves the trace view from its copy in the cache folder (no checkout's files), and one started with another checkout's files is started again", async () => {
    const env = nativeEnv()
    const home = layoutFromEnv(env).componentDir('jaeger')
    const pidOf = async () =>
      Number((await infraStatus(env)).find((status) => status.name === 'jaeger')?.process)
    await ensureTraceStore({ env, progress: () => {} })
    const pid = await pidOf()
    const environment = readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0')
    expect(environment).toContain(`JAEGER_UI_ASSETS=${join(home, 'ui')}`)
    const served = await fetch(`${nativeJaegerUiUrl}/static/viewer.js`)
    expect(served.status).toBe(200)
    expect(await served.text()).toBe(readFileSync(join(jaegerUiAssetsDir, 'static', 'viewer.js'), 'utf8'))

    // as if another checkout, with another trace view, had started it
    writeFileSync(join(home, 'inputs.sha256'), 'another checkout\n')
    const messages: string[] = []
    await ensureTraceStore({ env, progress: (m) => messages.push(m) })
    expect(messages.join('\n')).toContain(
      `jaeger: pid ${pid} started with another checkout's configuration or trace view; restarting it`,
    )
    expect(await pidOf()).not.toBe(pid)
    expect(readFileSync(join(home, 'inputs.sha256'), 'utf8')).not.toContain('another checkout')
  })

  it('when the Jaeger this cache folder started is stopped, then status says stopped, env exports no OTLP endpoint, and a second stop finds none', async () => {
    const env = nativeEnv()
    await ensureTraceStore({ env, progress: () => {} })
    expect(await stopTraceStore({ env, progress: () => {} })).toBe(true)
    expect((await infraStatus(env)).find((status) => status.name === 'jaeger')).toMatchObject({
      healthy: false,
      detail: 'stopped',
    })
    expect(await infraEnv(env)).not.toContain('OTEL_EXPORTER_OTLP_ENDPOINT')
    expect(await stopTraceStore({ env, progress: () => {} })).toBe(false)
    await expect(fetch(`${nativeJaegerUiUrl}/api/services`)).rejects.toThrow()
  })
})
