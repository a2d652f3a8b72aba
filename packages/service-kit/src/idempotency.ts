// The Idempotency-Key header's checks and a request's fingerprint, shared by every route that takes the header
// (payment's POST /payments, order's placing): what each stores and replays is the service's own.
import { createHmac } from 'node:crypto'
import { AppError, ErrorCode, idempotencyKeyHeader, maxIdempotencyKeyLength } from '@meridian/contracts'
import type { preValidationHookHandler } from 'fastify'

const printableAscii = /^[\x20-\x7E]+$/

const malformed = (message: string, problem: string): AppError =>
  new AppError(400, ErrorCode.VALIDATION_ERROR, {
    message,
    details: [{ field: 'Idempotency-Key', message: problem }],
  })

/**
 * The header's key; undefined when the request sent none. A key that is empty, longer than 255 characters or not
 * printable ASCII (a control or non-ASCII character), or sent twice, is 400 VALIDATION_ERROR: the request is
 * refused before it runs, never run without the key its client meant it to have.
 */
export function idempotencyKeyOf(value: string | string[] | undefined): string | undefined {
  if (value === undefined) return undefined
  if (Array.isArray(value)) {
    throw malformed('Only one Idempotency-Key header may be sent', 'must be sent once')
  }
  const shape = `must be 1 to ${maxIdempotencyKeyLength} printable ASCII characters`
  if (value.length === 0) throw malformed('The Idempotency-Key header is empty', shape)
  if (value.length > maxIdempotencyKeyLength) throw malformed('The Idempotency-Key header is too long', shape)
  if (!printableAscii.test(value)) {
    throw malformed('The Idempotency-Key header holds characters other than printable ASCII', shape)
  }
  return value
}

/** How many lines of the request's head carry header `name` (Node's `rawHeaders`: name, value, name, value...). */
export function headerLines(rawHeaders: readonly string[], name: string): number {
  let lines = 0
  for (let index = 0; index < rawHeaders.length; index += 2) {
    if (rawHeaders[index]?.toLowerCase() === name) lines++
  }
  return lines
}

/**
 * The 400 of a request whose head carries the Idempotency-Key header more than once. Node joins repeated lines into
 * one value (`a, b`), which would pass for a key of its own: counted in the raw head, they are refused.
 */
export function assertIdempotencyKeyOnce(rawHeaders: readonly string[]): void {
  if (headerLines(rawHeaders, idempotencyKeyHeader) > 1) {
    throw malformed('Only one Idempotency-Key header may be sent', 'must be sent once')
  }
}

/**
 * preValidation of a route taking the header: a malformed key, or one sent on two lines, is the 400 above, before the
 * schema would make it a 422 like any other invalid part of a request (and before the body is looked at).
 */
export const idempotencyKeyChecked: preValidationHookHandler = async (request) => {
  assertIdempotencyKeyOnce(request.raw.rawHeaders)
  idempotencyKeyOf(request.headers[idempotencyKeyHeader])
}

/** JSON with object keys sorted at every level: two bodies that differ only in key order are the same request. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, each]) => each !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    return `{${entries.map(([name, each]) => `${JSON.stringify(name)}:${canonicalJson(each)}`).join(',')}}`
  }
  return JSON.stringify(value)
}

/**
 * The fingerprint of a request body under a key: an HMAC keyed by the service's purpose (`meridian-payment`), the
 * key's scope and the key, so a body holding a card number or a token is kept only as this, never as text. The same
 * key and body (whatever their keys' order) give the same fingerprint; another body another.
 */
export function requestFingerprint(purpose: string, scope: string, key: string, body: unknown): string {
  return createHmac('sha256', `${purpose}:${scope}:${key}`).update(canonicalJson(body)).digest('hex')
}
