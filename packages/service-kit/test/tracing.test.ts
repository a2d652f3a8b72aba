// Tracing set up by the kit, in process with an in-memory exporter: nothing when off; spans for a request (named by
// route, with its request id and its URL as logged: no secret path segment or query value), a repository call, a Consul lookup and an outgoing undici call, parented; log lines
// with the span's ids; error bodies without them; the sampler and a parent's sampled flag honoured; shutdown flushes.
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tracedRepository } from '@meridian/db'
import {
  captureLogs,
  consulApi,
  eventually,
  freshDatabase,
  infraEndpoints,
  type TestDatabase,
  uniqueName,
} from '@meridian/testkit'
import { SpanKind, trace } from '@opentelemetry/api'
import type { ReadableSpan, SpanExporter } from '@opentelemetry/sdk-trace'
import { Type } from 'typebox'
import { request } from 'undici'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import {
  ConfigError,
  createDiscovery,
  createServiceApp,
  loadConfig,
  serviceEnv,
  TracingEnv,
} from '../src/index.ts'
import { activeTracing } from '../src/tracing/active-tracing.ts'
import { recordSpans, type SpanRecorder, startTracing } from '../src/tracing/index.ts'
import { batchSettingsOf, resourceAttributesOf, tracesEndpoint } from '../src/tracing/tracing-env.ts'

const offConfig = { OTEL_SDK_DISABLED: false, OTEL_TRACES_SAMPLER: 'parentbased_always_on' } as const
const parentOf = (span: ReadableSpan) => span.parentSpanContext?.spanId
const traceparent = (flags: '00' | '01') => `00-${'a'.repeat(32)}-${'b'.repeat(16)}-${flags}`

/** An app on the chassis with a route that logs, queries a repository and calls `upstreamUrl`; one that fails. */
async function tracedApp(database: TestDatabase, upstreamUrl: string) {
  const { stream, lines } = captureLogs()
  const app = await createServiceApp({
    name: 'traced',
    version: '1.0.0',
    environment: 'test',
    logLevel: 'info',
    logStream: stream,
    rateLimit: false,
  })
  const widgets = tracedRepository('widgets', {
    count: async () => (await database.sql<{ n: number }[]>`select 1::int as n`)[0]?.n ?? 0,
  })
  app.get('/things/:id', async (req) => {
    req.log.info('working on a thing')
    const upstream = await request(upstreamUrl)
    await upstream.body.dump()
    return { count: await widgets.count() }
  })
  app.get('/broken', async () => {
    throw new Error('the database is on fire')
  })
  app.post('/strict', { schema: { body: Type.Object({ n: Type.Integer() }) } }, async () => ({ ok: true }))
  app.post('/resets/:token', { config: { secretPathParameters: ['token'] } }, async () => ({ ok: true }))
  // forwards to the upstream as the gateway does: the same path, which is a secret route's
  app.post('/forward/:token', { config: { secretPathParameters: ['token'] } }, async (req) => {
    const { token } = req.params as { token: string }
    const upstream = await request(`${new URL(upstreamUrl).origin}/resets/${token}?code=c0d3`, {
      method: 'POST',
    })
    await upstream.body.dump()
    return { ok: true }
  })
  await app.ready()
  return { app, logs: lines }
}

describe('tracing off', () => {
  it('when no OTLP endpoint is set, then startTracing registers nothing and the global tracer provider stays the no-op one', () => {
    expect(startTracing({ config: offConfig })).toBeUndefined()
    expect(activeTracing()).toBeUndefined()
    const provider = trace.getTracerProvider() as unknown as { getDelegate(): object }
    expect(provider.getDelegate().constructor.name).toBe('NoopTracerProvider')
    expect(trace.getTracer('any').startSpan('nothing').isRecording()).toBe(false)
  })

  it('when OTEL_SDK_DISABLED is true, then an endpoint does not turn tracing on', () => {
    const config = {
      ...offConfig,
      OTEL_SDK_DISABLED: true,
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318',
    }
    expect(tracesEndpoint(config)).toBeUndefined()
    expect(startTracing({ config })).toBeUndefined()
    expect(activeTracing()).toBeUndefined()
  })

  it('when the app is built with tracing off, then a request logs no trace ids and registers no @fastify/otel', async () => {
    const database = await freshDatabase('tracing_off')
    const { app, logs } = await tracedApp(database, 'http://127.0.0.1:9/unused')
    try {
      expect(app.hasPlugin('@fastify/otel')).toBe(false)
      await app.inject({ method: 'GET', url: '/broken' })
      expect(logs.some((line) => 'trace_id' in line || 'span_id' in line)).toBe(false)
    } finally {
      await app.close()
      await database.drop()
    }
  })
})

describe('the OTEL_* variables', () => {
  it('when the endpoints are set, then the traces endpoint is the specific one, else <base>/v1/traces', () => {
    expect(tracesEndpoint({ ...offConfig, OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318/' })).toBe(
      'http://127.0.0.1:4318/v1/traces',
    )
    expect(
      tracesEndpoint({
        ...offConfig,
        OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318',
        OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://collector:4318/custom',
      }),
    ).toBe('http://collector:4318/custom')
  })

  it('when OTEL_RESOURCE_ATTRIBUTES has pairs, encoded values and malformed entries, then the pairs are decoded and the rest skipped', () => {
    expect(
      resourceAttributesOf('deployment.environment.name=prod,team=sales%20ops,broken,=nokey,k=%E0%A4%A'),
    ).toEqual({
      'deployment.environment.name': 'prod',
      team: 'sales ops',
      k: '%E0%A4%A',
    })
  })

  it('when OTEL_BSP_* are set, then the batch processor is given them (the SDK reads none itself); unset, its own defaults; out of range, refused', () => {
    const config = loadConfig(TracingEnv, {
      OTEL_BSP_SCHEDULE_DELAY: '200',
      OTEL_BSP_EXPORT_TIMEOUT: '10000',
      OTEL_BSP_MAX_QUEUE_SIZE: '4096',
      OTEL_BSP_MAX_EXPORT_BATCH_SIZE: '256',
    })
    expect(batchSettingsOf(config)).toEqual({
      scheduledDelayMillis: 200,
      exportTimeoutMillis: 10_000,
      maxQueueSize: 4096,
      maxExportBatchSize: 256,
    })
    expect(batchSettingsOf(loadConfig(TracingEnv, {}))).toEqual({})
    for (const [name, value] of [
      ['OTEL_BSP_SCHEDULE_DELAY', '0'],
      ['OTEL_BSP_EXPORT_TIMEOUT', '600001'],
      ['OTEL_BSP_MAX_QUEUE_SIZE', 'many'],
      ['OTEL_BSP_MAX_EXPORT_BATCH_SIZE', '-3'],
    ] as const)
      expect(() => loadConfig(TracingEnv, { [name]: value }), name).toThrow(new RegExp(name))
  })

  it('when a service loads its configuration with a bad sampler or endpoint, then the ConfigError names both', () => {
    const schema = serviceEnv({})
    const error = (() => {
      try {
        loadConfig(schema, {
          PORT: '0',
          DATABASE_URL: 'postgres://x@127.0.0.1/x',
          REDIS_URL: 'redis://127.0.0.1',
          NODE_ENV: 'test',
          OTEL_TRACES_SAMPLER: 'sometimes',
          OTEL_EXPORTER_OTLP_ENDPOINT: 'collector:4318',
          OTEL_TRACES_SAMPLER_ARG: '2',
        })
      } catch (caught) {
        return caught
      }
    })()
    expect(error).toBeInstanceOf(ConfigError)
    const problems = (error as ConfigError).problems.join('\n')
    expect(problems).toContain('OTEL_TRACES_SAMPLER: must be one of always_on')
    expect(problems).toContain('OTEL_EXPORTER_OTLP_ENDPOINT: must be an http:// or https:// URL')
    expect(problems).toContain('OTEL_TRACES_SAMPLER_ARG: must be a number >= 0 and <= 1')
    expect(loadConfig(TracingEnv, {}).OTEL_TRACES_SAMPLER).toBe('parentbased_always_on')
  })
})

describe('tracing on', () => {
  let recorder: SpanRecorder | undefined
  let database: TestDatabase
  let upstream: Server
  let upstreamUrl: string
  const upstreamTraceparents: (string | undefined)[] = []
  const upstreamBaggage: (string | undefined)[] = []

  beforeAll(async () => {
    database = await freshDatabase('tracing_on')
    upstream = createServer((incoming, response) => {
      upstreamTraceparents.push(incoming.headers.traceparent as string | undefined)
      upstreamBaggage.push(incoming.headers.baggage as string | undefined)
      response.end('ok')
    })
    await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve))
    upstreamUrl = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}/up`
  })
  afterEach(async () => {
    await recorder?.stop()
    recorder = undefined
  })
  afterAll(async () => {
    await new Promise((resolve) => upstream.close(resolve))
    await database.drop()
  })

  it('when a request queries a repository and calls an upstream, then its span is named by route with the request id, the repository and undici spans are its children, and the upstream got its trace context', async () => {
    recorder = recordSpans()
    const { app, logs } = await tracedApp(database, upstreamUrl)
    try {
      const response = await app.inject({
        method: 'GET',
        url: '/things/42',
        headers: { 'x-request-id': 'req-traced-1' },
      })
      expect(response.statusCode).toBe(200)
      const requestSpan = recorder.span('GET /things/:id')
      const repository = recorder.span('widgets.count')
      const outgoing = recorder.spans().find((span) => span.kind === SpanKind.CLIENT && span.name === 'GET')
      expect(requestSpan?.attributes['meridian.request_id']).toBe('req-traced-1')
      expect(requestSpan?.attributes['http.route']).toBe('/things/:id')
      expect(repository?.attributes).toEqual({
        'db.system.name': 'postgresql',
        'db.operation.name': 'count',
        'meridian.repository': 'widgets',
      })
      const descendsFromRequest = (span: ReadableSpan | undefined) => {
        const byId = new Map(recorder?.spans().map((each) => [each.spanContext().spanId, each]))
        for (let current = span; current !== undefined; current = byId.get(parentOf(current) ?? '')) {
          if (parentOf(current) === requestSpan?.spanContext().spanId) return true
        }
        return false
      }
      expect(descendsFromRequest(repository)).toBe(true)
      expect(descendsFromRequest(outgoing)).toBe(true)
      const traceId = requestSpan?.spanContext().traceId
      expect(upstreamTraceparents.at(-1)).toMatch(new RegExp(`^00-${traceId}-[0-9a-f]{16}-01$`))

      const logged = logs.find((line) => line.msg === 'working on a thing')
      expect(logged?.trace_id).toBe(traceId)
      expect(recorder.spans().map((span) => span.spanContext().spanId)).toContain(logged?.span_id)
      expect(logged?.requestId).toBe('req-traced-1')
      // a line written outside any span carries none
      app.log.info('outside any request')
      expect(logs.find((line) => line.msg === 'outside any request')).not.toHaveProperty('trace_id')
    } finally {
      await app.close()
    }
  })

  it("when a route's path parameter is secret and a query parameter a token, then the request span's url.path shows neither", async () => {
    recorder = recordSpans()
    const { app, logs } = await tracedApp(database, upstreamUrl)
    try {
      const secret = 'path-secret-7f3a9c'
      const response = await app.inject({
        method: 'POST',
        url: `/resets/${secret}?token=query-secret-1b2c&x=1`,
      })
      expect(response.statusCode).toBe(200)
      const span = recorder.span('POST /resets/:token')
      expect(span?.attributes['url.path']).toBe('/resets/[redacted]?token=[Redacted]&x=1')
      expect(JSON.stringify(span?.attributes)).not.toContain('secret')
      expect(JSON.stringify(logs)).not.toContain('secret-')

      // the call out to a path of a secret route (as the gateway forwards one) is traced without it too
      const forwarded = await app.inject({ method: 'POST', url: `/forward/${secret}` })
      expect(forwarded.statusCode).toBe(200)
      const outgoing = recorder.spans().find((each) => each.kind === SpanKind.CLIENT && each.name === 'POST')
      expect(outgoing?.attributes['url.path']).toBe('/resets/[redacted]')
      expect(outgoing?.attributes['url.query']).toBe('?code=[Redacted]')
      expect(outgoing?.attributes['url.full']).toMatch(
        /^http:\/\/127\.0\.0\.1:\d+\/resets\/\[redacted\]\?code=\[Redacted\]$/,
      )
      expect(
        recorder
          .spans()
          .map((each) => JSON.stringify(each.attributes))
          .join(),
      ).not.toContain(secret)
    } finally {
      await app.close()
    }
  })

  it('when a caller sends W3C baggage, then none of it reaches the next service (no key is allowed by default)', async () => {
    recorder = recordSpans()
    const { app } = await tracedApp(database, upstreamUrl)
    try {
      const response = await app.inject({
        method: 'GET',
        url: '/things/43',
        headers: { baggage: `tenant=acme,padding=${'x'.repeat(4000)}` },
      })
      expect(response.statusCode).toBe(200)
      // the call reached the upstream with the trace context, and without the caller's baggage
      expect(upstreamTraceparents.at(-1)).toMatch(/^00-/)
      expect(upstreamBaggage.at(-1)).toBeUndefined()
    } finally {
      await app.close()
    }
  })

  it('when a request fails with a 500 or a 400, then the error bodies carry the request id and no trace internals', async () => {
    recorder = recordSpans()
    const { app } = await tracedApp(database, upstreamUrl)
    try {
      const failures = [
        { method: 'GET', url: '/broken', status: 500 },
        { method: 'POST', url: '/strict', payload: '{"n": ', status: 400 },
        { method: 'POST', url: '/strict', payload: '{"n": "many"}', status: 422 },
      ] as const
      for (const [index, failure] of failures.entries()) {
        const requestId = `req-failing-${index}`
        const response = await app.inject({
          method: failure.method,
          url: failure.url,
          headers: { 'x-request-id': requestId, 'content-type': 'application/json' },
          ...('payload' in failure ? { payload: failure.payload } : {}),
        })
        expect(response.statusCode, response.body).toBe(failure.status)
        const span = recorder.spans().find((each) => each.attributes['meridian.request_id'] === requestId)
        expect(span, `the span of ${requestId}`).toBeDefined()
        const { traceId, spanId } = (span as ReadableSpan).spanContext()
        expect(response.body).not.toContain(traceId)
        expect(response.body).not.toContain(spanId)
        expect(response.body).not.toMatch(/trace|span_id/i)
        expect(response.body).toContain(requestId)
      }
    } finally {
      await app.close()
    }
  })

  it('when a discovery looks a service up in Consul, then the lookup is a span of its own and its blocking watch is not', async () => {
    recorder = recordSpans()
    const { consulHttpAddr, consulToken } = infraEndpoints()
    const name = uniqueName('traced-svc')
    const discovery = createDiscovery({
      consul: { address: consulHttpAddr, ...(consulToken ? { token: consulToken } : {}) },
      name,
      logger: { info() {}, warn() {}, error() {} } as never,
      wait: '1s',
    })
    try {
      await discovery.ready()
      // two blocking queries answered, each by a change (an instance joins, then leaves): none of them is a span
      const { baseUrl, headers } = consulApi()
      const id = `${name}-1`
      const agent = (path: string, body?: unknown) =>
        fetch(`${baseUrl}/v1/agent/service/${path}`, {
          method: 'PUT',
          headers,
          ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        })
      await agent('register', { ID: id, Name: name, Address: '127.0.0.1', Port: 4999 })
      await eventually('the watch reports the instance', () => discovery.instances().length === 1)
      await agent(`deregister/${id}`)
      await eventually('the watch reports it gone', () => discovery.instances().length === 0)
      const lookups = recorder.spans().filter((span) => span.name === 'consul.discovery')
      expect(lookups).toHaveLength(1)
      expect(lookups[0]?.attributes).toMatchObject({
        'meridian.discovered_service': name,
        'meridian.instances': 0,
      })
      expect(lookups[0]?.kind).toBe(SpanKind.CLIENT)
    } finally {
      await discovery.close()
    }
  })

  it('when the sampler is parentbased_traceidratio at 0, then a new request records nothing; at 1, it does', async () => {
    recorder = recordSpans({ OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: 0 })
    let built = await tracedApp(database, upstreamUrl)
    await built.app.inject({ method: 'GET', url: '/things/1' })
    await built.app.close()
    expect(recorder.spans()).toEqual([])
    await recorder.stop()

    recorder = recordSpans({ OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: 1 })
    built = await tracedApp(database, upstreamUrl)
    await built.app.inject({ method: 'GET', url: '/things/1' })
    await built.app.close()
    expect(recorder.span('GET /things/:id')).toBeDefined()
  })

  it("when a request arrives with a traceparent, then its sampled flag decides, whatever the root ratio, and the spans join the caller's trace", async () => {
    recorder = recordSpans({ OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: 0 })
    const { app } = await tracedApp(database, upstreamUrl)
    try {
      await app.inject({ method: 'GET', url: '/things/1', headers: { traceparent: traceparent('01') } })
      const sampled = recorder.span('GET /things/:id')
      expect(sampled?.spanContext().traceId).toBe('a'.repeat(32))
      expect(parentOf(sampled as ReadableSpan)).toBe('b'.repeat(16))

      recorder.clear()
      await app.inject({ method: 'GET', url: '/things/1', headers: { traceparent: traceparent('00') } })
      expect(recorder.spans()).toEqual([])
    } finally {
      await app.close()
    }
  })

  it('when tracing shuts down, then spans still in the batch are exported first, and the globals are the no-op ones again', async () => {
    // InMemorySpanExporter forgets its spans when it is shut down: this one keeps them
    const exported: ReadableSpan[] = []
    const exporter: SpanExporter = {
      export(spans, done) {
        exported.push(...spans)
        done({ code: 0 })
      },
      shutdown: async () => {},
    }
    const tracing = startTracing({
      config: { ...offConfig },
      exporter,
      service: { name: 'flushing' },
      instrumentations: 'none',
    })
    trace.getTracer('test').startSpan('batched').end()
    // the batch goes out every 5 s by default: nothing yet
    expect(exported).toEqual([])
    await tracing?.shutdown(5000)
    expect(exported.map((span) => span.name)).toEqual(['batched'])
    expect(exported[0]?.resource.attributes['service.name']).toBe('flushing')
    expect(activeTracing()).toBeUndefined()
    expect(trace.getTracer('after').startSpan('dropped').isRecording()).toBe(false)
  })
})
