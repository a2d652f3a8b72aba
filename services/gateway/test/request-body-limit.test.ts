// Request bodies of unknown length at the edge: counted as they flow, refused past 1 MB with 413, and neither a body
// over the limit nor an upload the client breaks off counts against the only instance of a service.
import { request as httpRequest } from 'node:http'
import { bodyLimitBytes } from '@meridian/service-kit'
import { expectErrorEnvelope, httpAnswer, scaledMs, uniqueName } from '@meridian/testkit'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { loadGatewayConfig } from '../src/config.ts'
import { eventually, type TestGateway } from './support/gateway.ts'
import { type SingleUpstream, startSingleUpstream } from './support/single-upstream.ts'
import type { UpstreamProcess } from './support/upstream-process.ts'

const single = uniqueName('gw-body-single')

// more hostile requests than it takes to eject an instance or to open the circuit, at the defaults
const defaults = loadGatewayConfig({ NODE_ENV: 'test' })
const repeats = Math.max(defaults.EJECT_AFTER_FAILURES, defaults.BREAKER_FAILURE_THRESHOLD) + 2

let setup: SingleUpstream
let gateway: TestGateway
let upstream: UpstreamProcess

beforeAll(async () => {
  // the spec's thresholds (EJECT_AFTER_FAILURES, BREAKER_FAILURE_THRESHOLD) as they are, not the support's
  setup = await startSingleUpstream(single, 'uploads')
  ;({ gateway, upstream } = setup)
}, scaledMs(60_000))

afterAll(async () => {
  await setup?.close()
})

const status = () => setup.status()

interface Upload {
  status: number
  headers: Record<string, string | string[] | undefined>
  text: string
}

/**
 * A POST whose body is written in 64 KiB chunks without a Content-Length (chunked transfer coding). Writing stops
 * when the answer arrives; a write failing after that (the gateway closed the connection) is the expected end.
 */
function chunkedUpload(options: { bytes: number; requestId: string }): Promise<Upload> {
  return new Promise((resolve, reject) => {
    let answered = false
    const outgoing = httpRequest(
      {
        host: '127.0.0.1',
        port: gateway.port,
        path: '/api/v1/uploads/echo',
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-request-id': options.requestId },
      },
      (incoming) => {
        answered = true
        let text = ''
        incoming.setEncoding('utf8')
        incoming.on('data', (chunk: string) => {
          text += chunk
        })
        incoming.on('error', reject)
        incoming.on('end', () =>
          resolve({ status: incoming.statusCode ?? 0, headers: incoming.headers, text }),
        )
      },
    )
    outgoing.on('error', (error) => {
      if (!answered) reject(error)
    })
    // a JSON string of exactly `bytes` bytes: `"xxx…"`
    const body = Buffer.alloc(options.bytes, 'x')
    body[0] = 0x22
    body[body.length - 1] = 0x22
    let offset = 0
    const writeMore = () => {
      while (offset < body.length && !answered) {
        const chunk = body.subarray(offset, offset + 64 * 1024)
        offset += chunk.length
        if (!outgoing.write(chunk)) return void outgoing.once('drain', writeMore)
      }
      outgoing.end()
    }
    writeMore()
  })
}

/**
 * A chunked POST that sends `bytes`, then, once the service has the request (the gateway's upstream call has begun),
 * drops the connection without ending the body.
 */
async function abandonedUpload(options: { bytes: number; requestId: string }): Promise<void> {
  const calls = async () => (await upstream.hits())['POST /api/v1/uploads/echo'] ?? 0
  const callsBefore = await calls()
  const outgoing = httpRequest({
    host: '127.0.0.1',
    port: gateway.port,
    path: '/api/v1/uploads/echo',
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-request-id': options.requestId },
  })
  outgoing.on('error', () => {})
  const closed = new Promise<void>((resolve) => outgoing.on('close', () => resolve()))
  outgoing.write(Buffer.alloc(options.bytes, ' '))
  await eventually(async () => (await calls()) > callsBefore)
  outgoing.destroy()
  await closed
}

const gatewayLines = (requestId: string) => gateway.logs.filter((line) => line.requestId === requestId)

/** Nothing was held against the instance or the service: no failed attempt, no ejection, no open circuit. */
function expectNoVerdictAgainstTheInstance(): void {
  const against = gateway.logs.filter(
    (line) =>
      line.upstream === single &&
      ['upstream attempt failed', 'upstream instance ejected', 'upstream circuit opened'].includes(
        String(line.msg),
      ),
  )
  expect(against).toEqual([])
  expect(status()).toMatchObject({ instances: 1, available: 1, ejected: [], circuit: 'closed' })
}

async function expectNormalTrafficServed(): Promise<void> {
  for (let i = 0; i < 3; i += 1) {
    const response = await fetch(`${gateway.url}/api/v1/uploads/whoami`)
    expect(response.status).toBe(200)
    expect(((await response.json()) as { instance: string }).instance).toBe('only')
  }
}

describe('chunked bodies within the limit', () => {
  it('when a chunked body is exactly 1 MB, then it reaches the service whole', async () => {
    const answer = await chunkedUpload({ bytes: bodyLimitBytes, requestId: uniqueName('exact') })
    expect(answer.status).toBe(200)
    const echoed = JSON.parse(answer.text) as { body: string }
    expect(echoed.body).toBe('x'.repeat(bodyLimitBytes - 2))
  })
})

describe('chunked bodies over the limit', () => {
  it('when a chunked body passes 1 MB by one byte, then the gateway itself answers 413 and closes the connection', async () => {
    const requestId = uniqueName('over-by-one')
    const answer = await chunkedUpload({ bytes: bodyLimitBytes + 1, requestId })
    expect(answer.headers.connection).toBe('close')
    expect(answer.headers['x-request-id']).toBe(requestId)
    const error = expectErrorEnvelope(httpAnswer(answer), 413, 'PAYLOAD_TOO_LARGE')
    // nothing beside the required fields: no details, no retryAfter
    expect(error).toEqual({
      code: 'PAYLOAD_TOO_LARGE',
      message: 'Request body is larger than 1 MB',
      requestId,
      timestamp: error.timestamp,
    })
    // refused by the gateway's own count, not relayed from the service's limit
    expect(gatewayLines(requestId)).toContainEqual(
      expect.objectContaining({
        msg: 'request body refused during the upstream call',
        code: 'BODY_TOO_LARGE',
      }),
    )
  })

  it('when one client keeps sending oversized chunked bodies, then the only instance is neither ejected nor its circuit opened', async () => {
    for (let i = 0; i < repeats; i += 1) {
      const answer = await chunkedUpload({ bytes: 3 * bodyLimitBytes, requestId: uniqueName('oversized') })
      expectErrorEnvelope(httpAnswer(answer), 413, 'PAYLOAD_TOO_LARGE', { context: `attempt ${i}` })
    }
    expectNoVerdictAgainstTheInstance()
    await expectNormalTrafficServed()
    // the service never received more than its own limit: it never had to refuse a body
    expect(upstream.logs.filter((line) => line.statusCode === 413)).toEqual([])
  })
})

describe('uploads the client breaks off', () => {
  it('when clients drop their connection in the middle of uploads, then the only instance is not ejected', async () => {
    const requestIds = Array.from({ length: repeats }, () => uniqueName('abandoned'))
    for (const requestId of requestIds) {
      await abandonedUpload({ bytes: 256 * 1024, requestId })
      await eventually(() =>
        gatewayLines(requestId).some((line) => line.msg === 'client went away during the upstream call'),
      )
    }
    expectNoVerdictAgainstTheInstance()
    await expectNormalTrafficServed()
  })
})
