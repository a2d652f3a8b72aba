// The gateway with tracing on: the service behind parents to the gateway's own span (its proxied call's), in the
// client's trace when the client sent a valid traceparent; one traceparent only; a hostile traceparent (malformed,
// 10 kB, all-zero ids, version ff) neither breaks the request nor reaches the service.
import { type ReadableSpan, recordSpans, type SpanRecorder } from '@meridian/service-kit/tracing'
import { uniqueName } from '@meridian/testkit'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { eventually, startGateway, type TestGateway } from './support/gateway.ts'
import { startUpstream, type UpstreamProcess } from './support/upstream-process.ts'

const validTraceparent = /^00-(?!0{32})[0-9a-f]{32}-(?!0{16})[0-9a-f]{16}-0[01]$/

describe('the gateway, traced', () => {
  let recorder: SpanRecorder
  let upstream: UpstreamProcess
  let gateway: TestGateway
  const service = uniqueName('traced-upstream')

  beforeAll(async () => {
    // before the gateway is built: its app registers request tracing only when tracing is on
    recorder = recordSpans({}, { name: 'gateway' })
    upstream = await startUpstream({ name: service, label: 'only', segment: 'traced' })
    gateway = await startGateway({ routes: [{ prefix: '/api/v1/traced', service }] })
    await eventually(() => gateway.app.upstreams.get(service)?.status()?.instances === 1)
  })
  afterAll(async () => {
    await gateway?.close()
    await upstream?.stop()
    await upstream?.deregister()
    await recorder?.stop()
  })

  /** What the service behind received, and the gateway's spans of that request (by its request id). */
  async function throughTheGateway(headers: Record<string, string> = {}) {
    const requestId = uniqueName('req')
    const response = await fetch(`${gateway.url}/api/v1/traced/whoami`, {
      headers: { ...headers, 'x-request-id': requestId },
    })
    const body = (await response.json()) as { headers: Record<string, string> }
    let requestSpan: ReadableSpan | undefined
    let proxied: ReadableSpan | undefined
    await eventually(() => {
      requestSpan = recorder.spans().find((span) => span.attributes['meridian.request_id'] === requestId)
      proxied = recorder
        .spans()
        .find(
          (span) =>
            span.parentSpanContext?.spanId === requestSpan?.spanContext().spanId && span.name === 'GET',
        )
      return proxied !== undefined
    })
    return { status: response.status, received: body.headers, requestSpan, proxied }
  }

  it('when a client sends no traceparent, then the service behind gets exactly one, naming the span of the gateway call it answers', async () => {
    const { status, received, requestSpan, proxied } = await throughTheGateway()
    expect(status).toBe(200)
    expect(received.traceparent).toMatch(validTraceparent)
    const [, traceId, parentId, flags] = received.traceparent?.split('-') ?? []
    expect(traceId).toBe(requestSpan?.spanContext().traceId)
    expect(parentId).toBe(proxied?.spanContext().spanId)
    expect(flags).toBe('01')
    // a new trace: the gateway's request span is its root
    expect(requestSpan?.parentSpanContext).toBeUndefined()
    expect(requestSpan?.name).toBe('GET /api/v1/traced/*')
  })

  it("when a client sends a valid traceparent, then the gateway's spans join its trace and the service parents to the gateway, not to the client", async () => {
    const clientTrace = '4bf92f3577b34da6a3ce929d0e0e4736'
    const clientSpan = '00f067aa0ba902b7'
    const { received, requestSpan, proxied } = await throughTheGateway({
      traceparent: `00-${clientTrace}-${clientSpan}-01`,
      tracestate: 'vendor=opaque',
    })
    expect(requestSpan?.spanContext().traceId).toBe(clientTrace)
    expect(requestSpan?.parentSpanContext?.spanId).toBe(clientSpan)
    expect(received.traceparent).toBe(`00-${clientTrace}-${proxied?.spanContext().spanId}-01`)
    expect(received.tracestate).toBe('vendor=opaque')
  })

  it('when a client sends a hostile traceparent, then the request succeeds, a new trace starts and the hostile value reaches no service', async () => {
    const hostile = {
      malformed: 'not-a-traceparent',
      tenKilobytes: `00-${'a'.repeat(32)}-${'b'.repeat(16)}-01-${'c'.repeat(10_000)}`,
      allZeroIds: `00-${'0'.repeat(32)}-${'0'.repeat(16)}-01`,
      versionFf: `ff-${'a'.repeat(32)}-${'b'.repeat(16)}-01`,
      twoValues: `00-${'a'.repeat(32)}-${'b'.repeat(16)}-01, 00-${'c'.repeat(32)}-${'d'.repeat(16)}-01`,
    }
    for (const [what, traceparent] of Object.entries(hostile)) {
      const { status, received, requestSpan } = await throughTheGateway({ traceparent })
      expect(status, what).toBe(200)
      expect(received.traceparent, what).toMatch(validTraceparent)
      expect(received.traceparent, what).not.toBe(traceparent)
      expect(received.traceparent, what).not.toContain('a'.repeat(32))
      expect(requestSpan?.parentSpanContext, what).toBeUndefined()
    }
  })
})
