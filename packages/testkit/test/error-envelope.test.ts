// The shared error-envelope assertion: what it accepts, what each departure from the spec's envelope fails on, and
// the answers of fetch, node:http and raw sockets it reads through its adapters.
import { describe, expect, it } from 'vitest'
import {
  expectErrorEnvelope,
  fetchedAnswer,
  type HttpAnswer,
  httpAnswer,
  rawHttpAnswer,
} from '../src/index.ts'

const requestId = 'req-envelope-1'
const timestamp = '2026-05-04T10:20:30.456Z'

/** An inject-like answer whose envelope's error is the given one (merged over a valid 404). */
function answer(error: Record<string, unknown> = {}, options: { status?: number; header?: string } = {}) {
  const body = {
    success: false,
    error: { code: 'NOT_FOUND', message: 'Route GET /x not found', requestId, timestamp, ...error },
  }
  return httpAnswer({
    status: options.status ?? 404,
    headers:
      options.header === undefined ? { 'x-request-id': requestId } : { 'x-request-id': options.header },
    text: JSON.stringify(body),
  })
}

const withBody = (body: unknown): HttpAnswer => ({
  statusCode: 404,
  headers: { 'x-request-id': requestId },
  json: () => body,
})

describe('expectErrorEnvelope', () => {
  it('when the answer is the envelope with its status and code, then it passes and returns the error', () => {
    expect(expectErrorEnvelope(answer(), 404, 'NOT_FOUND')).toEqual({
      code: 'NOT_FOUND',
      message: 'Route GET /x not found',
      requestId,
      timestamp,
    })
  })

  it('when the optional details and retryAfter are there in their shapes, then it passes', () => {
    const details = [
      { field: 'age', message: 'must be >= 18', received: '12' },
      { field: 'name', message: 'x' },
    ]
    expect(expectErrorEnvelope(answer({ details, retryAfter: 30 }), 404, 'NOT_FOUND')).toMatchObject({
      details,
      retryAfter: 30,
    })
  })

  it('when the status or the code differs, then it fails naming both beside the body', () => {
    expect(() => expectErrorEnvelope(answer(), 400, 'NOT_FOUND')).toThrow(/status and code/)
    expect(() => expectErrorEnvelope(answer(), 404, 'BAD_REQUEST')).toThrow(/status and code/)
    expect(() => expectErrorEnvelope(answer({}, { status: 200 }), 404, 'NOT_FOUND')).toThrow(
      /status and code/,
    )
  })

  it('when success is not false or the envelope has keys of its own, then it fails', () => {
    const error = { code: 'NOT_FOUND', message: 'm', requestId, timestamp }
    expect(() => expectErrorEnvelope(withBody({ success: true, error }), 404, 'NOT_FOUND')).toThrow(
      /status and code/,
    )
    expect(() => expectErrorEnvelope(withBody({ success: false, error, data: 1 }), 404, 'NOT_FOUND')).toThrow(
      /envelope keys/,
    )
    expect(() => expectErrorEnvelope(answer({ hint: 'x' }), 404, 'NOT_FOUND')).toThrow(
      /keys outside the envelope/,
    )
  })

  it('when the message is missing, empty or not text, then it fails', () => {
    for (const message of [undefined, '', '  ', 42]) {
      expect(() => expectErrorEnvelope(answer({ message }), 404, 'NOT_FOUND'), String(message)).toThrow(
        /error\.message/,
      )
    }
  })

  it('when error.requestId differs from X-Request-Id, or the header is absent, then it fails', () => {
    expect(() => expectErrorEnvelope(answer({}, { header: 'another-id' }), 404, 'NOT_FOUND')).toThrow(
      /error\.requestId is the X-Request-Id header/,
    )
    const headerless = { ...answer(), headers: {} }
    expect(() => expectErrorEnvelope(headerless, 404, 'NOT_FOUND')).toThrow(/X-Request-Id header/)
    expect(() => expectErrorEnvelope(answer({ requestId: undefined }), 404, 'NOT_FOUND')).toThrow(
      /error\.requestId/,
    )
  })

  it('when the timestamp is not an ISO 8601 string, then it fails', () => {
    for (const stamp of [undefined, 1_777_890_030_456, 'yesterday', 'Mon, 04 May 2026 10:20:30 GMT']) {
      expect(
        () => expectErrorEnvelope(answer({ timestamp: stamp }), 404, 'NOT_FOUND'),
        String(stamp),
      ).toThrow(/error\.timestamp/)
    }
  })

  it('when details are not an array of field problems, or retryAfter is not whole seconds, then it fails', () => {
    expect(() => expectErrorEnvelope(answer({ details: { field: 'a' } }), 404, 'NOT_FOUND')).toThrow(
      /error\.details/,
    )
    expect(() => expectErrorEnvelope(answer({ details: [{ field: 'a' }] }), 404, 'NOT_FOUND')).toThrow(
      /error\.details entries/,
    )
    for (const retryAfter of [1.5, -1, '30']) {
      expect(() => expectErrorEnvelope(answer({ retryAfter }), 404, 'NOT_FOUND')).toThrow(/error\.retryAfter/)
    }
  })

  it('when a stack is there, then it fails unless the caller expects one; expected, it must be there', () => {
    const withStack = answer({ stack: 'Error: boom\n    at x' })
    expect(() => expectErrorEnvelope(withStack, 404, 'NOT_FOUND')).toThrow(/no error\.stack/)
    expect(expectErrorEnvelope(withStack, 404, 'NOT_FOUND', { stack: true }).stack).toContain('boom')
    expect(() => expectErrorEnvelope(answer(), 404, 'NOT_FOUND', { stack: true })).toThrow(/error\.stack/)
  })

  it('when a context is given, then a failure message starts with it', () => {
    expect(() => expectErrorEnvelope(answer(), 400, 'NOT_FOUND', { context: 'GET /x' })).toThrow(
      /^GET \/x: status and code/,
    )
  })

  it('when the body is not JSON, then it fails showing the status and the start of the body', () => {
    const html = httpAnswer({ status: 502, headers: {}, text: '<html>Bad Gateway</html>' })
    expect(() => expectErrorEnvelope(html, 502, 'BAD_GATEWAY')).toThrow(
      /502 answer is not JSON: "<html>Bad Gateway/,
    )
  })
})

describe('reading answers of other clients', () => {
  it('when a fetch answer is given with its Headers and read text, then the header is found whatever its case', () => {
    const headers = new Headers({ 'X-Request-Id': requestId, 'Content-Type': 'application/json' })
    const text = JSON.stringify({
      success: false,
      error: { code: 'GATEWAY_TIMEOUT', message: 'm', requestId, timestamp },
    })
    expect(expectErrorEnvelope(httpAnswer({ status: 504, headers, text }), 504, 'GATEWAY_TIMEOUT').code).toBe(
      'GATEWAY_TIMEOUT',
    )
  })

  it('when a fetch Response is given unread, then its body is read and its headers kept', async () => {
    const envelope = {
      success: false,
      error: { code: 'RATE_LIMITED', message: 'm', requestId, timestamp, retryAfter: 5 },
    }
    const response = new Response(JSON.stringify(envelope), {
      status: 429,
      headers: { 'x-request-id': requestId, 'retry-after': '5' },
    })
    const answer = await fetchedAnswer(response)
    expect(answer.headers['retry-after']).toBe('5')
    expect(expectErrorEnvelope(answer, 429, 'RATE_LIMITED').retryAfter).toBe(5)
  })

  it('when the body is given as bytes or already parsed, then it is read the same', () => {
    const envelope = { success: false, error: { code: 'BAD_REQUEST', message: 'm', requestId, timestamp } }
    const headers = { 'X-Request-ID': requestId }
    for (const body of [Buffer.from(JSON.stringify(envelope)), JSON.stringify(envelope), envelope]) {
      expect(expectErrorEnvelope(httpAnswer({ statusCode: 400, headers, body }), 400, 'BAD_REQUEST')).toEqual(
        envelope.error,
      )
    }
  })

  it('when a whole HTTP answer is read from a socket, then its status line, headers and body are parsed', () => {
    const body = JSON.stringify({
      success: false,
      error: { code: 'NOT_IMPLEMENTED', message: 'm', requestId, timestamp },
    })
    const message =
      'HTTP/1.1 501 Not Implemented\r\nContent-Type: application/json; charset=utf-8\r\n' +
      `X-Request-Id: ${requestId}\r\nConnection: close\r\n\r\n${body}`
    const parsed = rawHttpAnswer(message)
    expect(parsed.statusCode).toBe(501)
    expect(parsed.headers).toMatchObject({ 'x-request-id': requestId, connection: 'close' })
    expect(expectErrorEnvelope(parsed, 501, 'NOT_IMPLEMENTED').requestId).toBe(requestId)
    expect(() => rawHttpAnswer('garbage')).toThrow(/not an HTTP answer/)
  })

  it('when neither status nor statusCode is given, then the adapter refuses', () => {
    expect(() => httpAnswer({ headers: {}, text: '{}' })).toThrow(/needs the status/)
  })
})
