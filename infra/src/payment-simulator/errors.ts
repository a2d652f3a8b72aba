// The simulator's errors: ApiError answers its own endpoints' (control-api.ts) in their JSON shape
// ({error: {code, message, ...}}), StripeError the Stripe subset's in Stripe's ({error: {type, code, param, message, ...}}); each one knows
// whether an idempotency key keeps it. Also the redaction of client text echoed in messages and log lines.
import { randomBytes } from 'node:crypto'
import type { Outcome } from './idempotency.ts'

/** A new object id in Stripe's style: `pi_` and 24 hex digits. */
export const newId = (prefix: string): string => `${prefix}_${randomBytes(12).toString('hex')}`

/** Client text echoed in a message or a log line, without any card-like run of digits it may hold. */
export const redact = (text: string): string => text.replace(/\d{12,19}/g, '[redacted]')

export const isObject = (value: unknown): value is Record<string, unknown> =>
  value !== null && typeof value === 'object' && !Array.isArray(value)

export function isAbort(error: unknown): boolean {
  return error instanceof Error && error.name === 'AbortError'
}

/** An answer of the simulator's own endpoints: {error: {code, message, ...extra}}. */
export class ApiError extends Error {
  readonly status: number
  readonly code: string
  readonly extra: Record<string, unknown>
  readonly headers: Record<string, string>

  constructor(
    status: number,
    code: string,
    message: string,
    extra: Record<string, unknown> = {},
    headers: Record<string, string> = {},
  ) {
    super(message)
    this.status = status
    this.code = code
    this.extra = extra
    this.headers = headers
  }

  outcome(store: boolean): Outcome {
    return {
      status: this.status,
      body: { error: { code: this.code, message: this.message, ...this.extra } },
      headers: this.headers,
      store,
    }
  }
}

export type StripeErrorType =
  | 'api_error'
  | 'card_error'
  | 'idempotency_error'
  | 'invalid_request_error'
  | 'rate_limit_error'

/** The fields of a Stripe error besides its type and message. */
export interface StripeErrorFields {
  code?: string
  param?: string
  decline_code?: string
  charge?: string
  payment_intent?: unknown
  payment_method?: unknown
}

/**
 * An answer of the Stripe subset: {error: {type, code?, param?, message, ...}}. `stored`: whether an idempotency key
 * keeps it (Stripe keeps what the endpoint answered once it ran, not a request refused before, nor a 500).
 */
export class StripeError extends Error {
  readonly status: number
  readonly type: StripeErrorType
  readonly fields: StripeErrorFields
  readonly stored: boolean
  readonly headers: Record<string, string>

  constructor(
    status: number,
    type: StripeErrorType,
    message: string,
    fields: StripeErrorFields = {},
    stored = false,
    headers: Record<string, string> = {},
  ) {
    super(message)
    this.status = status
    this.type = type
    this.fields = fields
    this.stored = stored
    this.headers = headers
  }

  get code(): string {
    return this.fields.code ?? this.type
  }

  outcome(): Outcome {
    return {
      status: this.status,
      body: { error: { ...this.fields, message: this.message, type: this.type } },
      headers: this.headers,
      store: this.stored,
    }
  }
}

/** 400 invalid_request_error of a parameter: a request refused before it ran, never kept for a key. */
export const invalidParameter = (param: string, message: string, code = 'parameter_invalid'): StripeError =>
  new StripeError(400, 'invalid_request_error', message, { code, param })

export const unknownParameter = (param: string): StripeError =>
  invalidParameter(redact(param), `Received unknown parameter: ${redact(param)}`, 'parameter_unknown')

export const missingParameter = (param: string): StripeError =>
  invalidParameter(param, `Missing required param: ${param}.`, 'parameter_missing')

/**
 * resource_missing, kept for the key (the endpoint ran and found nothing): 404 for the object of the path, 400 for
 * one a parameter names, as Stripe answers.
 */
export const resourceMissing = (kind: string, id: string, param: string, status = 404): StripeError =>
  new StripeError(
    status,
    'invalid_request_error',
    `No such ${kind}: '${redact(id).slice(0, 200)}'`,
    { code: 'resource_missing', param },
    true,
  )

/** 500 api_error: never kept, so a retry with the same key runs again. */
export const stripeApiError = (): StripeError =>
  new StripeError(500, 'api_error', 'An unknown error occurred while processing your request. Please retry.')
