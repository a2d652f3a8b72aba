// Idempotency-Key rules of POST /payments (IETF httpapi idempotency-key draft, Stripe's storage rules): what a key
// is, how a request is fingerprinted, which outcomes are stored, and the key sent on to the provider.
import { randomUUID } from 'node:crypto'
import { AppError, ErrorCode, replayedHeader } from '@meridian/contracts'
import { idempotencyKeyOf, type RequestFingerprints, requestFingerprints } from '@meridian/service-kit'

/**
 * The header's key, or 400 BAD_REQUEST when it is missing or blank (payment requires one); a malformed key is 400
 * VALIDATION_ERROR (service-kit's idempotencyKeyOf: longer than 255 characters, not printable ASCII).
 */
export function requireIdempotencyKey(value: string | string[] | undefined): string {
  const sent = Array.isArray(value) ? value[0] : value
  if (sent === undefined || sent.trim() === '') {
    throw AppError.badRequest('An Idempotency-Key header is required', [
      { field: 'Idempotency-Key', message: 'is required' },
    ])
  }
  return idempotencyKeyOf(value) as string
}

/**
 * The fingerprints of payment's requests, keyed by IDEMPOTENCY_SECRET and the caller's scope and key: a body holding
 * a card number is stored only as this HMAC, never as text, and a copy of the database alone cannot test guesses of
 * it. Keys stored before the secret keep matching their retries until they expire (IDEMPOTENCY_KEY_TTL_SECONDS).
 */
export const paymentFingerprints = (secret: string): RequestFingerprints =>
  requestFingerprints('meridian-payment', secret)

/**
 * A new provider Idempotency-Key for a payment request, unique to it. It is kept with the caller's key
 * (data/idempotency-keys-repository.ts): a retry of the same request (after a 5xx, which is not stored here) reaches
 * the provider with it again and is never charged twice, while a new request — after the caller's key expired, or
 * with another body — never replays an earlier charge at the provider.
 */
export const newProviderChargeKey = (): string => `pay-${randomUUID()}`

/** Stripe's rule: an outcome is stored (and replayed) unless it is a 5xx, which a retry may run again. */
export const isStoredOutcome = (status: number): boolean => status < 500

/** What is kept of an error outcome: enough to answer the same error envelope again. */
export interface StoredError {
  error: { code: string; message: string; details?: unknown[]; retryAfter?: number }
}

export function storedErrorOf(error: AppError): StoredError {
  return {
    error: {
      code: error.code,
      message: error.message,
      ...(error.details ? { details: error.details } : {}),
      ...(error.retryAfter === undefined ? {} : { retryAfter: error.retryAfter }),
    },
  }
}

/** The stored error outcome as an AppError again, marked as a replay. */
export function replayedError(status: number, body: unknown): AppError {
  const stored = (body as Partial<StoredError>).error
  return new AppError(status, stored?.code ?? ErrorCode.INTERNAL_ERROR, {
    ...(stored?.message ? { message: stored.message } : {}),
    ...(stored?.details ? { details: stored.details as never } : {}),
    ...(stored?.retryAfter === undefined ? {} : { retryAfter: stored.retryAfter }),
    headers: { [replayedHeader]: 'true' },
  })
}

export const idempotencyMismatch = (): AppError =>
  AppError.validation(
    [{ field: 'Idempotency-Key', message: 'was already used with a different request body' }],
    'This Idempotency-Key was already used with a different request',
  )

export const idempotencyInProgress = (): AppError =>
  AppError.conflict('A request with this Idempotency-Key is still being processed; retry later')
