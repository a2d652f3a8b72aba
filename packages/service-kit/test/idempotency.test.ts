// The Idempotency-Key header's checks and the request fingerprint every route taking the header shares.
import { createHmac } from 'node:crypto'
import { AppError } from '@meridian/contracts'
import { describe, expect, it } from 'vitest'
import { canonicalJson, idempotencyKeyOf, requestFingerprint } from '../src/index.ts'

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

describe('requestFingerprint', () => {
  it('when two bodies differ only in the order of their keys, then they are the same request', () => {
    const one = { b: [1, { d: 2, c: 3 }], a: 'x', gone: undefined }
    const other = { a: 'x', b: [1, { c: 3, d: 2 }] }
    expect(canonicalJson(one)).toBe('{"a":"x","b":[1,{"c":3,"d":2}]}')
    expect(requestFingerprint('meridian-order', 'scope', 'key', one)).toBe(
      requestFingerprint('meridian-order', 'scope', 'key', other),
    )
  })

  it('when the body, the scope, the key or the purpose differ, then so does the fingerprint', () => {
    const body = { amount: 10 }
    const fingerprint = requestFingerprint('meridian-order', 'scope', 'key', body)
    expect(fingerprint).toMatch(/^[0-9a-f]{64}$/)
    for (const other of [
      requestFingerprint('meridian-order', 'scope', 'key', { amount: 11 }),
      requestFingerprint('meridian-order', 'other', 'key', body),
      requestFingerprint('meridian-order', 'scope', 'other', body),
      requestFingerprint('meridian-payment', 'scope', 'key', body),
    ]) {
      expect(other).not.toBe(fingerprint)
    }
  })

  it('when payment fingerprints a body, then it is the HMAC it always stored (keys kept before the move still match)', () => {
    const body = { orderId: 'o-1', amount: 23.8 }
    const before = createHmac('sha256', 'meridian-payment:payer:key-1')
      .update('{"amount":23.8,"orderId":"o-1"}')
      .digest('hex')
    expect(requestFingerprint('meridian-payment', 'payer', 'key-1', body)).toBe(before)
  })
})
