// The Idempotency-Key header's checks and a request's fingerprint, shared by every route that takes the header
// (payment's POST /payments, order's placing): what each stores and replays is the service's own.
import { createHmac, timingSafeEqual } from 'node:crypto'
import { AppError, ErrorCode, idempotencyKeyHeader, maxIdempotencyKeyLength } from '@meridian/contracts'
import type { preValidationHookHandler } from 'fastify'
import { Type } from 'typebox'
import { developmentOnlyDefault } from './config.ts'

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
 * The fingerprint of a request body under a key as it was written before IDEMPOTENCY_SECRET (no `v2:` prefix): an
 * HMAC keyed only by what the row itself holds (purpose, scope, key), so anyone with a copy of the database could
 * test guesses of the body offline. Only compared, never written: a row holding one is matched until it expires.
 */
export function legacyRequestFingerprint(purpose: string, scope: string, key: string, body: unknown): string {
  return createHmac('sha256', `${purpose}:${scope}:${key}`).update(canonicalJson(body)).digest('hex')
}

/** The prefix of a fingerprint keyed by IDEMPOTENCY_SECRET. */
export const fingerprintVersion = 'v2:'

const secretFormat = '^[^,\\s]{32,}(?:,[^,\\s]{32,}){0,3}$'

/**
 * IDEMPOTENCY_SECRET: the server secret request fingerprints are keyed by, so a stolen database copy cannot test
 * guesses of a body (a card number, whose brand and last four digits sit beside it) offline. A comma-separated list
 * rotates it: the first keys new fingerprints, every one is compared (`old,new` → `new,old` → `new` once the keys
 * made under `old` expired).
 */
export const idempotencySecretVariable = () =>
  Type.String({
    pattern: secretFormat,
    expectation: 'must be one to four comma-separated secrets of at least 32 characters, without white space',
    ...developmentOnlyDefault('insecure-development-idempotency-secret-0001'),
    description:
      'the secret request fingerprints of Idempotency-Keys are keyed by; comma-separated to rotate (the first keys new ones)',
  })

/** How a service fingerprints the requests it stores under an Idempotency-Key, and recognises them again. */
export interface RequestFingerprints {
  /** the fingerprint to store: `v2:` and an HMAC-SHA-256 keyed by the first secret */
  of(scope: string, key: string, body: unknown): string
  /** whether a stored fingerprint is this request's: under any of the secrets, or the legacy form */
  matches(stored: string, scope: string, key: string, body: unknown): boolean
}

/**
 * The fingerprints of one purpose (`meridian-payment`, `meridian-order`: a service's own, never another's) under
 * IDEMPOTENCY_SECRET's value. Purpose, scope and key are each length-prefixed into the message, so no two different
 * triples give the same text; the same key and body (whatever their keys' order) give the same fingerprint.
 */
export function requestFingerprints(purpose: string, secrets: string): RequestFingerprints {
  const keys = secrets.split(',').filter((each) => each.length > 0)
  if (keys.length === 0) throw new TypeError('IDEMPOTENCY_SECRET holds no secret')
  const under = (secret: string, scope: string, key: string, body: unknown): string => {
    const hmac = createHmac('sha256', secret)
    for (const part of [purpose, scope, key]) hmac.update(`${part.length}:${part};`)
    return `${fingerprintVersion}${hmac.update(canonicalJson(body)).digest('hex')}`
  }
  const equal = (a: string, b: string): boolean =>
    a.length === b.length && timingSafeEqual(Buffer.from(a), Buffer.from(b))
  return {
    of: (scope, key, body) => under(keys[0] as string, scope, key, body),
    matches(stored, scope, key, body) {
      if (!stored.startsWith(fingerprintVersion)) {
        return equal(stored, legacyRequestFingerprint(purpose, scope, key, body))
      }
      return keys.some((secret) => equal(stored, under(secret, scope, key, body)))
    },
  }
}
