// The payment provider (a Stripe-like JSON API; infra's simulator in development and tests): the one place that
// talks to it, through the kit's upstream client. Its failures are the kit's AppErrors (spec Errors rule 5):
// unreachable, unknown host or past the timeout -> 503 SERVICE_UNAVAILABLE; 402 -> 402 PAYMENT_SERVICE_ERROR with
// the provider's decline message; 429 -> 429 RATE_LIMITED, retryAfter 30; anything else -> 502 PAYMENT_SERVICE_ERROR.
// A card number only ever travels to the tokenization call: nothing here logs, keeps or traces it. Each call is a
// span of its own (`payment_provider.<operation>`) when tracing is on, with the idempotency key, never the card.
import { AppError, ErrorCode } from '@meridian/contracts'
import { createUpstreamClient, inSpan, type UpstreamClient, UpstreamStatusError } from '@meridian/service-kit'

export interface ProviderCard {
  number: string
  expMonth: number
  expYear: number
  cvc: string
}

export interface ProviderToken {
  token: string
  brand: string
  last4: string
}

export interface ProviderCharge {
  id: string
  status: string
  amount: number
  currency: string
  orderId: string
  brand: string
  last4: string
}

export interface ProviderRefund {
  id: string
  charge: string
  amount: number
  status: string
}

export interface ChargeRequest {
  /** integer minor units (cents) */
  amountCents: number
  currency: string
  orderId: string
  /** a provider token (tok_…) */
  token: string
  /** sent as the provider's Idempotency-Key: the same key never charges twice */
  idempotencyKey: string
  requestId?: string
}

export interface RefundRequest {
  chargeId: string
  /** integer minor units; the whole unrefunded rest when absent */
  amountCents?: number
  idempotencyKey: string
  requestId?: string
}

export interface PaymentProvider {
  tokenize(card: ProviderCard, requestId?: string): Promise<ProviderToken>
  charge(request: ChargeRequest): Promise<ProviderCharge>
  refund(request: RefundRequest): Promise<ProviderRefund>
  close(): Promise<void>
}

export interface PaymentProviderOptions {
  baseUrl: string
  /** deadline of one call, ms; default 5000 (spec Limits) */
  timeoutMs?: number
}

const withRequestId = (requestId: string | undefined) => (requestId ? { requestId } : {})

type Refusals = Readonly<Record<string, { field: string; message: string }>>

/** The provider's codes for a card it refuses when tokenizing it: the card the client sent, not a provider failure. */
const refusedCards: Refusals = {
  invalid_card: { field: 'source.card.number', message: 'is not a valid card number' },
  expired_card: { field: 'source.card', message: 'has expired' },
  invalid_request: { field: 'source.card', message: 'was refused by the payment provider' },
}

/** ... and for a charge: the token the client (or the order) gave. */
const refusedTokens: Refusals = {
  ...refusedCards,
  invalid_request: { field: 'source.token', message: 'was refused by the payment provider' },
  resource_missing: { field: 'source.token', message: 'is not a payment token the provider knows' },
}

/**
 * A source the provider refuses (an invalid or expired card, an unknown token) is the client's to fix: 422 naming the
 * field. Every other failure stays as rule 5 maps it (402, 429, 502, 503).
 */
async function refusingBadSources<T>(call: Promise<T>, refusals: Refusals): Promise<T> {
  try {
    return await call
  } catch (error) {
    const cause = error instanceof AppError ? error.cause : undefined
    const refusal =
      cause instanceof UpstreamStatusError && cause.upstreamCode !== undefined && cause.status < 500
        ? refusals[cause.upstreamCode]
        : undefined
    if (!refusal) throw error
    throw AppError.validation([refusal], 'The payment provider refused the payment method')
  }
}

/**
 * True when the provider answered the call with a failure of its own (a 5xx): it did not take the charge, unlike a
 * call left without an answer (a timeout, 503), whose charge may still be made, or one it still runs (409).
 */
export function isProviderFailure(error: unknown): boolean {
  const cause = error instanceof AppError ? error.cause : undefined
  return cause instanceof UpstreamStatusError && cause.status >= 500
}

/** Refused answers a later call with the same key may not get again: a timeout, the same key still running, a rate limit. */
const passingRefusals: readonly number[] = [408, 409, 429]

/**
 * Why the provider declined a refund, when it did: a 4xx answer it will give again to the same refund (declined,
 * amount too large, charge not refundable or unknown) — the provider's own message for a 402, its code otherwise.
 * Undefined for anything a later call may change (unreachable, timed out, a 5xx, 408, 409, 429) and for errors that
 * are not the provider's answer.
 */
export function refundDeclineOf(error: unknown): string | undefined {
  const cause = error instanceof AppError ? error.cause : undefined
  if (!(cause instanceof UpstreamStatusError)) return undefined
  if (cause.status < 400 || cause.status >= 500 || passingRefusals.includes(cause.status)) return undefined
  if (cause.status === 402 && error instanceof AppError) return error.message.slice(0, 500)
  return `the payment provider refused the refund (${cause.upstreamCode?.slice(0, 100) ?? cause.status})`
}

export function createPaymentProvider({
  baseUrl,
  timeoutMs = 5000,
}: PaymentProviderOptions): PaymentProvider {
  const client: UpstreamClient = createUpstreamClient({
    name: 'payment provider',
    baseUrl,
    timeoutMs,
    errorCode: ErrorCode.PAYMENT_SERVICE_ERROR,
  })

  return {
    tokenize: (card, requestId) =>
      inSpan(
        'payment_provider.tokenize',
        { kind: 'client', attributes: () => providerAttributes('tokenize') },
        () => tokenize(card, requestId),
      ),
    charge: (request) =>
      inSpan(
        'payment_provider.charge',
        {
          kind: 'client',
          attributes: () => ({
            ...providerAttributes('charge'),
            'meridian.payment.idempotency_key': request.idempotencyKey,
            'meridian.order_id': request.orderId,
          }),
        },
        () => charge(request),
      ),
    refund: (request) =>
      inSpan(
        'payment_provider.refund',
        {
          kind: 'client',
          attributes: () => ({
            ...providerAttributes('refund'),
            'meridian.payment.idempotency_key': request.idempotencyKey,
            'meridian.payment.charge_id': request.chargeId,
          }),
        },
        () => refund(request),
      ),
    close: () => client.close(),
  }

  async function tokenize(card: ProviderCard, requestId?: string): Promise<ProviderToken> {
    const { body } = await refusingBadSources(
      client.request<ProviderToken>({
        method: 'POST',
        path: '/v1/tokens',
        body: {
          card: { number: card.number, expMonth: card.expMonth, expYear: card.expYear, cvc: card.cvc },
        },
        ...withRequestId(requestId),
      }),
      refusedCards,
    )
    return { token: body.token, brand: body.brand, last4: body.last4 }
  }

  async function charge({
    amountCents,
    currency,
    orderId,
    token,
    idempotencyKey,
    requestId,
  }: ChargeRequest): Promise<ProviderCharge> {
    const { body } = await refusingBadSources(
      client.request<ProviderCharge>({
        method: 'POST',
        path: '/v1/charges',
        headers: { 'idempotency-key': idempotencyKey },
        body: { amount: amountCents, currency, source: token, orderId },
        ...withRequestId(requestId),
      }),
      refusedTokens,
    )
    return body
  }

  async function refund({
    chargeId,
    amountCents,
    idempotencyKey,
    requestId,
  }: RefundRequest): Promise<ProviderRefund> {
    const { body } = await client.request<ProviderRefund>({
      method: 'POST',
      path: '/v1/refunds',
      headers: { 'idempotency-key': idempotencyKey },
      body: { charge: chargeId, ...(amountCents === undefined ? {} : { amount: amountCents }) },
      ...withRequestId(requestId),
    })
    return body
  }
}

/** What every provider span says of the call. */
const providerAttributes = (operation: string) => ({
  'peer.service': 'payment-provider',
  'meridian.payment.operation': operation,
})
