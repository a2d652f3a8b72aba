// The one assertion that an HTTP answer is the spec's error envelope (its status and code, a message, the request id
// of the X-Request-Id header, an ISO 8601 timestamp, no stack and no other keys), so every suite checks the same thing.
import { expect } from 'vitest'

/** One field-level problem in `error.details`. */
export interface EnvelopeErrorDetail {
  field: string
  message: string
  received?: string
}

/** The envelope's `error` object, as the spec defines it. */
export interface EnvelopeError {
  code: string
  message: string
  details?: EnvelopeErrorDetail[]
  requestId: string
  timestamp: string
  retryAfter?: number
  stack?: string
}

/** What the assertion reads of an answer. light-my-request's `inject` response is one as it is. */
export interface HttpAnswer {
  statusCode: number
  headers: Record<string, unknown>
  json(): unknown
  /** the body as text, shown when it is not JSON */
  body?: string
}

/** An answer read by other means: fetch (once its body is read), node:http, a raw socket. */
export interface AnswerParts {
  status?: number
  statusCode?: number
  headers: Headers | Record<string, unknown>
  /** the body as text or bytes, or already parsed */
  body?: unknown
  /** the body as text */
  text?: string
}

export interface ErrorEnvelopeOptions {
  /** the answer carries `error.stack` (a 5xx outside production); without it, a stack fails the assertion */
  stack?: boolean
  /** put before every failure message, e.g. the input a loop is at */
  context?: string
}

const envelopeErrorKeys = ['code', 'message', 'details', 'requestId', 'timestamp', 'retryAfter', 'stack']

/** An answer of fetch, node:http or a socket in the shape `expectErrorEnvelope` reads. */
export function httpAnswer(parts: AnswerParts): HttpAnswer {
  const statusCode = parts.statusCode ?? parts.status
  if (statusCode === undefined) throw new TypeError('httpAnswer needs the status (status or statusCode)')
  const headers =
    parts.headers instanceof Headers ? Object.fromEntries(parts.headers.entries()) : parts.headers
  const { body } = parts
  const text =
    parts.text ??
    (typeof body === 'string'
      ? body
      : body instanceof Uint8Array
        ? Buffer.from(body).toString('utf8')
        : undefined)
  return {
    statusCode,
    headers,
    ...(text === undefined ? {} : { body: text }),
    json: () => (text === undefined ? body : JSON.parse(text)),
  }
}

/** A fetch Response whose body is still unread: reads it, once. */
export async function fetchedAnswer(response: Response): Promise<HttpAnswer> {
  return httpAnswer({ status: response.status, headers: response.headers, text: await response.text() })
}

/** A whole HTTP/1.1 answer as read from a socket (status line, headers, body), for answers no client would parse. */
export function rawHttpAnswer(message: string): HttpAnswer {
  const end = message.indexOf('\r\n\r\n')
  const [statusLine = '', ...headerLines] = (end === -1 ? message : message.slice(0, end)).split('\r\n')
  const status = /^HTTP\/\d(?:\.\d)? (\d{3})/.exec(statusLine)?.[1]
  if (!status) throw new Error(`not an HTTP answer: ${JSON.stringify(message.slice(0, 80))}`)
  const headers: Record<string, string> = {}
  for (const line of headerLines) {
    const colon = line.indexOf(':')
    if (colon > 0) headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim()
  }
  return httpAnswer({ status: Number(status), headers, text: end === -1 ? '' : message.slice(end + 4) })
}

/**
 * Asserts that the answer is the spec's error envelope with this status and code, and returns its `error` so the
 * caller can check the message, details or retryAfter further.
 */
export function expectErrorEnvelope(
  answer: HttpAnswer,
  status: number,
  code: string,
  options: ErrorEnvelopeOptions = {},
): EnvelopeError {
  const because = (what: string) => (options.context ? `${options.context}: ${what}` : what)
  const body = bodyOf(answer, because)
  // status and code beside the whole body, so that a wrong answer shows what came instead
  expect({ status: answer.statusCode, body }, because('status and code')).toMatchObject({
    status,
    body: { success: false, error: { code } },
  })
  expect(Object.keys(body as object).sort(), because('envelope keys')).toEqual(['error', 'success'])
  const error = (body as { error: Record<string, unknown> }).error
  expect(
    Object.keys(error).filter((key) => !envelopeErrorKeys.includes(key)),
    because('error keys outside the envelope'),
  ).toEqual([])
  expect(error.message, because('error.message')).toEqual(expect.stringMatching(/\S/))

  const requestId = headerOf(answer.headers, 'x-request-id')
  expect(requestId, because('X-Request-Id header')).toEqual(expect.stringMatching(/\S/))
  expect(error.requestId, because('error.requestId is the X-Request-Id header')).toBe(requestId)

  // ISO 8601 as Date#toISOString writes it, which is how every Meridian service stamps its errors
  expect(error.timestamp, because('error.timestamp')).toEqual(expect.any(String))
  const time = new Date(error.timestamp as string)
  expect(Number.isNaN(time.getTime()) ? 'Invalid Date' : time.toISOString(), because('error.timestamp')).toBe(
    error.timestamp,
  )

  if ('details' in error) {
    expect(error.details, because('error.details')).toEqual(expect.any(Array))
    const malformed = (error.details as unknown[]).filter((detail) => !isDetail(detail))
    expect(malformed, because('error.details entries')).toEqual([])
  }
  if ('retryAfter' in error) {
    const { retryAfter } = error
    expect(Number.isInteger(retryAfter) && (retryAfter as number) >= 0, because('error.retryAfter')).toBe(
      true,
    )
  }
  if (options.stack) expect(error.stack, because('error.stack')).toEqual(expect.stringMatching(/\S/))
  else expect(error, because('no error.stack')).not.toHaveProperty('stack')
  return error as unknown as EnvelopeError
}

function bodyOf(answer: HttpAnswer, because: (what: string) => string): unknown {
  try {
    return answer.json()
  } catch (cause) {
    throw new Error(
      because(
        `the ${answer.statusCode} answer is not JSON: ${JSON.stringify(answer.body?.slice(0, 200) ?? '')}`,
      ),
      { cause },
    )
  }
}

/** A header by name, whatever the case the answer's reader kept it in. */
function headerOf(headers: Record<string, unknown>, name: string): string | undefined {
  const key = Object.keys(headers).find((candidate) => candidate.toLowerCase() === name)
  const value = key === undefined ? undefined : headers[key]
  if (value === undefined || value === null) return undefined
  return Array.isArray(value) ? value.join(', ') : String(value)
}

function isDetail(detail: unknown): boolean {
  if (typeof detail !== 'object' || detail === null) return false
  const { field, message, received, ...rest } = detail as Record<string, unknown>
  return (
    typeof field === 'string' &&
    typeof message === 'string' &&
    (received === undefined || typeof received === 'string') &&
    Object.keys(rest).length === 0
  )
}
