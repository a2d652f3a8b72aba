// The Idempotency-Key header's checks and the request fingerprint every route taking the header shares.
import { createHmac } from 'node:crypto'
import { AppError } from '@meridian/contracts'
import { describe, expect, it } from 'vitest'
import {
  canonicalJson,
  idempotencyKeyOf,
  legacyRequestFingerprint,
  requestFingerprints,
} from '../src/index.ts'

/** The AppError `value` is refused with; fails when it is a key. */
function refusal(value: string | string[]): AppError {
  try {
    idempotencyKeyOf(value)
  } catch (error) {
    if (error instanceof AppError) return error
    throw error
  }
  throw new Error(`${JSON.stringify(value)} was taken as a key`)
}

describe('idempotencyKeyOf', () => {
  it('when no header came, then there is no key; 1 to 255 printable ASCII characters are a key as sent', () => {
    expect(idempotencyKeyOf(undefined)).toBeUndefined()
    for (const key of [
      'k',
      'k'.repeat(255),
      '6f1c2a9e-1f4b-4c5e-9d7a-0b8c3e2f1a6d',
      'order 42: ~!@#$%^&*()',
    ]) {
      expect(idempotencyKeyOf(key)).toBe(key)
    }
  })

  it('when the key is empty, too long, holds a control or non-ASCII character, or came twice, then 400 VALIDATION_ERROR naming the header', () => {
    for (const value of [
      '',
      'k'.repeat(256),
      'a\tb',
      'a\u0000b',
      'bell\u0007',
      'del\u007f',
      'clé',
      '🙂',
      ['a', 'b'],
    ]) {
      const error = refusal(value)
      expect(error.statusCode, JSON.stringify(value)).toBe(400)
      expect(error.code).toBe('VALIDATION_ERROR')
      expect(error.details?.[0]?.field).toBe('Idempotency-Key')
    }
  })
})

describe('requestFingerprints', () => {
  const secret = 'a-server-secret-of-at-least-32-characters-0001'
  const order = requestFingerprints('meridian-order', secret)

  it('when two bodies differ only in the order of their keys, then they are the same request', () => {
    const one = { b: [1, { d: 2, c: 3 }], a: 'x', gone: undefined }
    const other = { a: 'x', b: [1, { c: 3, d: 2 }] }
    expect(canonicalJson(one)).toBe('{"a":"x","b":[1,{"c":3,"d":2}]}')
    expect(order.of('scope', 'key', one)).toBe(order.of('scope', 'key', other))
    expect(order.matches(order.of('scope', 'key', one), 'scope', 'key', other)).toBe(true)
  })

  it('when the body, the scope, the key, the purpose or the secret differ, then so does the fingerprint', () => {
    const body = { amount: 10 }
    const fingerprint = order.of('scope', 'key', body)
    expect(fingerprint).toMatch(/^v2:[0-9a-f]{64}$/)
    for (const other of [
      order.of('scope', 'key', { amount: 11 }),
      order.of('other', 'key', body),
      order.of('scope', 'other', body),
      // the parts are length-prefixed: moving a character from the scope to the key is another request
      order.of('scop', 'ekey', body),
      requestFingerprints('meridian-payment', secret).of('scope', 'key', body),
      requestFingerprints('meridian-order', 'another-server-secret-of-32-characters-0002').of(
        'scope',
        'key',
        body,
      ),
    ]) {
      expect(other).not.toBe(fingerprint)
      expect(order.matches(other, 'scope', 'key', body)).toBe(false)
    }
  })

  it('when a database copy is all an attacker has, then the stored fingerprint cannot be recomputed from the row', () => {
    // a252e60 keyed the HMAC by purpose, scope and key only, all of which the row holds: a guessed card number could
    // be checked offline. Under the secret, the row's own fields no longer give the fingerprint.
    const body = { orderId: 'o-1', amount: 23.8, source: { card: { number: '4242424242424242' } } }
    const stored = requestFingerprints('meridian-payment', secret).of('payer', 'key-1', body)
    const fromTheRow = createHmac('sha256', 'meridian-payment:payer:key-1')
      .update(canonicalJson(body))
      .digest('hex')
    expect(stored).not.toContain(fromTheRow)
    expect(legacyRequestFingerprint('meridian-payment', 'payer', 'key-1', body)).toBe(fromTheRow)
  })

  it('when a row was written before the secret (no v2: prefix), then it still matches its retry until it expires', () => {
    const body = { orderId: 'o-1', amount: 23.8 }
    const before = createHmac('sha256', 'meridian-payment:payer:key-1')
      .update('{"amount":23.8,"orderId":"o-1"}')
      .digest('hex')
    const payment = requestFingerprints('meridian-payment', secret)
    expect(payment.matches(before, 'payer', 'key-1', body)).toBe(true)
    expect(payment.matches(before, 'payer', 'key-1', { ...body, amount: 24 })).toBe(false)
  })

  it('when the secret is rotated (new,old), then new fingerprints use the new one and the old ones still match', () => {
    const old = 'the-old-server-secret-of-32-characters-00001'
    const fresh = 'the-new-server-secret-of-32-characters-00002'
    const body = { amount: 10 }
    const underOld = requestFingerprints('meridian-order', old).of('scope', 'key', body)
    const rotated = requestFingerprints('meridian-order', `${fresh},${old}`)
    expect(rotated.matches(underOld, 'scope', 'key', body)).toBe(true)
    expect(rotated.of('scope', 'key', body)).toBe(
      requestFingerprints('meridian-order', fresh).of('scope', 'key', body),
    )
    expect(requestFingerprints('meridian-order', fresh).matches(underOld, 'scope', 'key', body)).toBe(false)
  })
})
