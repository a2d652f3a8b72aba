// Tracing in a service process started as the system starts one (node --import tsx --import the kit's preload),
// exported to the real trace store (Jaeger) and found through its query API: the request, a Redis command, an undici
// call and a repository query in one trace, parented under the request, and the log line of the request carrying
// that trace's ids. The pattern the end-to-end test follows.
import { type ChildProcess, spawn, spawnSync } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { fileURLToPath } from 'node:url'
import {
  eventually,
  freshDatabase,
  type StoredSpan,
  type StoredTrace,
  scaledMs,
  serviceTestEnv,
  type TestDatabase,
  type TraceStore,
  useTraceStore,
} from '@meridian/testkit'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

const fixture = fileURLToPath(new URL('./fixtures/traced-main.ts', import.meta.url))
const stateFixture = fileURLToPath(new URL('./fixtures/tracing-state.ts', import.meta.url))
const packageDir = fileURLToPath(new URL('..', import.meta.url))
// SERVICE_VERSION's default is the platform's version, which ./scripts/release writes in config.ts and package.json
const platformVersion = (
  JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as { version: string }
).version

/** What the preload did to a process started with `env` (tracing-state.ts's line). */
function preloadState(env: Record<string, string>): Record<string, unknown> {
  const result = spawnSync(
    process.execPath,
    ['--import', 'tsx', '--import', '@meridian/service-kit/tracing/preload', stateFixture],
    {
      cwd: packageDir,
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env },
      encoding: 'utf8',
    },
  )
  expect(result.status, result.stderr).toBe(0)
  return JSON.parse(result.stdout.trim()) as Record<string, unknown>
}

describe('the tracing preload', () => {
  it('when no OTLP endpoint is set, then it registers nothing: no tracing, the no-op tracer provider, ioredis and http unpatched', () => {
    expect(preloadState({})).toEqual({
      tracing: false,
      provider: 'NoopTracerProvider',
      ioredis: false,
      http: false,
      requireHooked: false,
      requireHookedAfterLoaded: false,
      ioredisAfterLoaded: false,
    })
  })

  it('when OTEL_SDK_DISABLED is true, then an endpoint changes nothing', () => {
    expect(
      preloadState({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:9', OTEL_SDK_DISABLED: 'true' }),
    ).toEqual({
      tracing: false,
      provider: 'NoopTracerProvider',
      ioredis: false,
      http: false,
      requireHooked: false,
      requireHookedAfterLoaded: false,
      ioredisAfterLoaded: false,
    })
  })

  it('when an endpoint is set, then tracing is on, ioredis and http are patched as they load, and once the modules are loaded the require hook comes off and the patches stay', () => {
    expect(preloadState({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:9' })).toMatchObject({
      tracing: true,
      ioredis: true,
      http: true,
      requireHooked: true,
      requireHookedAfterLoaded: false,
      ioredisAfterLoaded: true,
    })
  })

  it('when a tracing variable is malformed, then the preload leaves tracing off, for the configuration of the service to refuse', () => {
    expect(
      preloadState({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:9', OTEL_TRACES_SAMPLER: 'sometimes' }),
    ).toMatchObject({ tracing: false, ioredis: false })
  })
})

interface LogLine {
  msg?: string
  trace_id?: string
  span_id?: string
  requestId?: string
  count?: number
}

describe('tracing in a service process', () => {
  let store: TraceStore
  let database: TestDatabase
  let upstream: Server
  let child: ChildProcess
  let exited: Promise<number | null>
  let output = ''
  const serviceName = `traced-${randomBytes(4).toString('hex')}`

  const logLines = (): LogLine[] =>
    output
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as LogLine)

  beforeAll(async () => {
    store = await useTraceStore()
    database = await freshDatabase('traced')
    upstream = createServer((_request, response) => response.end('upstream'))
    await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve))
    const upstreamPort = (upstream.address() as AddressInfo).port
    child = spawn(
      process.execPath,
      ['--import', 'tsx', '--import', '@meridian/service-kit/tracing/preload', fixture],
      {
        cwd: packageDir,
        env: {
          PATH: process.env.PATH ?? '',
          HOME: process.env.HOME ?? '',
          ...serviceTestEnv(),
          HOST: '127.0.0.1',
          CONSUL_REGISTER: 'false',
          DATABASE_URL: database.url,
          TRACED_UPSTREAM_URL: `http://127.0.0.1:${upstreamPort}/upstream`,
          OTEL_EXPORTER_OTLP_ENDPOINT: store.otlpEndpoint,
          OTEL_SERVICE_NAME: serviceName,
          OTEL_RESOURCE_ATTRIBUTES: 'deployment.environment.name=test',
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    )
    child.stdout?.on('data', (chunk) => {
      output += String(chunk)
    })
    child.stderr?.on('data', (chunk) => {
      output += String(chunk)
    })
    exited = new Promise((resolve) => child.on('exit', (code) => resolve(code)))
  }, scaledMs(600_000))

  afterAll(async () => {
    if (child?.exitCode === null) {
      child.kill('SIGKILL')
      await exited
    }
    await new Promise((resolve) => upstream?.close(resolve))
    await database?.drop()
    await store?.release()
  })

  const listeningPort = (): number | undefined => {
    const line = logLines().find((entry) => entry.msg?.startsWith('Server listening at http://127.0.0.1:'))
    return line?.msg ? Number(line.msg.split(':').at(-1)) : undefined
  }

  const spanNamed = (trace: StoredTrace, name: string | RegExp): StoredSpan | undefined =>
    trace.spans.find((span) =>
      typeof name === 'string' ? span.operationName === name : name.test(span.operationName),
    )

  /** Whether `span` has `ancestor` above it in `trace`. */
  const descendsFrom = (trace: StoredTrace, span: StoredSpan, ancestor: StoredSpan): boolean => {
    const byId = new Map(trace.spans.map((entry) => [entry.spanID, entry]))
    let current: StoredSpan | undefined = span
    for (let depth = 0; current && depth < 50; depth += 1) {
      const parent: StoredSpan['references'][number] | undefined = current.references.find(
        (reference) => reference.refType === 'CHILD_OF',
      )
      if (parent?.spanID === ancestor.spanID) return true
      current = parent ? byId.get(parent.spanID) : undefined
    }
    return false
  }

  it('when a request reads Redis, calls an upstream with undici and queries a repository, then Jaeger holds one trace with each as a span under the request, found by its request id, and its log line carries the trace id', async () => {
    await eventually('the traced process listens', () => listeningPort() !== undefined, scaledMs(60_000))
    const response = await fetch(`http://127.0.0.1:${listeningPort()}/api/v1/traced`, {
      headers: { 'x-request-id': 'traced-request-1' },
    })
    expect(response.status).toBe(200)
    expect(await response.json()).toEqual({ count: 1 })

    let trace: StoredTrace | undefined
    await eventually(
      'the request trace is in Jaeger',
      async () => {
        const traces = await store.tracesOf(serviceName)
        trace = traces.find((candidate) => spanNamed(candidate, 'widgets.count') !== undefined)
        return trace !== undefined && spanNamed(trace, 'get') !== undefined
      },
      undefined,
      250,
    )
    const found = trace as StoredTrace
    const tagsOf = (span: StoredSpan | undefined) =>
      Object.fromEntries((span?.tags ?? []).map((tag) => [tag.key, tag.value]))
    // the request span is @fastify/otel's (it has the request id), named by route, the root of the request's trace:
    // no http server span above it (the http instrumentation leaves incoming requests to it)
    const request = found.spans.find((span) => tagsOf(span)['meridian.request_id'] === 'traced-request-1')
    expect(request?.operationName).toBe('GET /api/v1/traced')
    expect(tagsOf(request)['span.kind']).toBe('server')
    expect(request?.references).toEqual([])
    expect(found.spans.filter((span) => tagsOf(span)['span.kind'] === 'server')).toHaveLength(1)
    const redis = spanNamed(found, 'get')
    const undici = spanNamed(found, /^GET$/)
    const repository = spanNamed(found, 'widgets.count')
    expect(
      found.spans.map((span) => span.operationName),
      'spans of the trace',
    ).toEqual(expect.arrayContaining(['GET /api/v1/traced', 'get', 'widgets.count']))
    for (const [what, span] of Object.entries({ redis, undici, repository })) {
      expect(span, what).toBeDefined()
      expect(
        descendsFrom(found, span as StoredSpan, request as StoredSpan),
        `${what} under the request`,
      ).toBe(true)
    }
    expect(tagsOf(request)['http.route']).toBe('/api/v1/traced')
    const repositoryTags = Object.fromEntries(
      (repository as StoredSpan).tags.map((tag) => [tag.key, tag.value]),
    )
    expect(repositoryTags['db.system.name']).toBe('postgresql')

    const process = found.processes[(request as StoredSpan).processID]
    const resource = Object.fromEntries((process?.tags ?? []).map((tag) => [tag.key, tag.value]))
    expect(process?.serviceName).toBe(serviceName)
    expect(resource['service.version']).toBe(platformVersion)
    expect(String(resource['service.instance.id'])).toMatch(/-\d+$/)
    expect(resource['deployment.environment.name']).toBe('test')

    // an operator holding a request id (an error body's) finds its trace by the request span's tag
    const byRequestId = await store.tracesOf(serviceName, { 'meridian.request_id': 'traced-request-1' })
    expect(byRequestId.map((each) => each.traceID)).toEqual([found.traceID])

    const logged = logLines().find((line) => line.msg === 'traced work done')
    expect(logged?.requestId).toBe('traced-request-1')
    expect(logged?.trace_id).toBe(found.traceID)
    expect(found.spans.map((span) => span.spanID)).toContain(logged?.span_id)
  })

  it('when the process is stopped with SIGTERM, then it flushes and exits with code 0', async () => {
    child.kill('SIGTERM')
    expect(await exited).toBe(0)
  })
})
