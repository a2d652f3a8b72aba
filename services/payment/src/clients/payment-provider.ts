// The payment provider port of the payment service: a payment method made from a card (development and tests only:
// in production a card never reaches Meridian, the provider's own elements make the payment method in the browser),
// a charge (a PaymentIntent created and confirmed at once) and a refund, through Stripe's official SDK
// (stripe-provider.ts: the simulator or stripe-mock in development and tests, Stripe itself in production). Failures
// are the kit's AppErrors (interface Errors rule 5): unreachable or past the deadline -> 503 SERVICE_UNAVAILABLE; 402
// (declined) -> 402 PAYMENT_SERVICE_ERROR with the provider's message; 429 -> 429 RATE_LIMITED, retryAfter 30;
// anything else -> 502 PAYMENT_SERVICE_ERROR. A payment method or card the provider refuses is the client's: 422
// naming the field. A card number only travels to the payment-method call: nothing here logs, keeps or traces it.
// Each operation is a span (`payment_provider.<operation>`) when tracing is on, with the idempotency key, never the
// card.
import { AppError, ErrorCode } from '@meridian/contracts'
import { appErrorForUpstreamStatus, inSpan, UpstreamStatusError } from '@meridian/service-kit'
import { createStripeProvider, type ProviderIntent, type StripeProviderOptions } from './stripe-provider.ts'

export interface ProviderCard {
  number: string
  expMonth: number
  expYear: number
  cvc: string
}

export interface ProviderToken {
  /** the payment method (pm_…) */
  token: string
  brand: string
  last4: string
}

export interface ProviderCharge {
  /** the PaymentIntent (pi_…) */
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

/** A charge's refunds as the provider tells them now (what a charge.refunded webhook is checked against). */
export interface ProviderChargeRefunds {
  /** ch_… */
  chargeId: string
  /** the PaymentIntent it belongs to (pi_…) */
  paymentIntentId: string | undefined
  /** the charge's whole refunded amount, cents */
  amountRefundedCents: number
  /** its refunds that succeeded or are on their way (re_…), as the provider lists them with the charge */
  refunds: { id: string; amountCents: number }[]
}

export interface ChargeRequest {
  /** integer minor units (cents) */
  amountCents: number
  currency: string
  orderId: string
  /** the payment method (pm_…, or a tok_… the provider takes as one) */
  token: string
  /** sent as the provider's Idempotency-Key: the same key never charges twice */
  idempotencyKey: string
}

export interface RefundRequest {
  /** the charge's PaymentIntent (pi_…) */
  chargeId: string
  /** integer minor units; the whole unrefunded rest when absent */
  amountCents?: number
  idempotencyKey: string
}

/** The answer to a charge that may ask the customer to authenticate first (3-D Secure). */
export type ChargeAnswer =
  | { kind: 'charged'; charge: ProviderCharge }
  /** the card's issuer asks the customer first: the provider's payment (pi_…) waits, with its page when it gave one */
  | { kind: 'authenticate'; intentId: string; authenticateUrl: string | undefined }

/** Where a payment that waited for the customer's authentication stands at the provider. */
export type AuthenticationStanding =
  | { status: 'succeeded'; charge: ProviderCharge }
  /** still waiting for the customer (or the provider still processes it) */
  | { status: 'waiting'; authenticateUrl: string | undefined }
  /** refused, failed, or cancelled: nothing was charged */
  | { status: 'failed'; reason: string }

/** Why a payment whose authentication was not completed in time failed. */
export const authenticationExpired = "The card's authentication (3-D Secure) was not completed in time"

export interface PaymentProvider {
  tokenize(card: ProviderCard): Promise<ProviderToken>
  /** a charge made now; one whose card asks for authentication is declined (402) */
  charge(request: ChargeRequest): Promise<ProviderCharge>
  /**
   * a charge that may ask the customer to authenticate first (the order step's): with a return address configured,
   * such a card answers `authenticate` with the provider's page; without one it is declined as `charge` declines it
   */
  chargeOrAuthenticate(request: ChargeRequest): Promise<ChargeAnswer>
  /** where a payment that waited for authentication stands (the provider's payment, read back) */
  authentication(intentId: string): Promise<AuthenticationStanding>
  /** cancels a payment still waiting for authentication; answers what it became (succeeded if it beat the cancel) */
  abandonAuthentication(intentId: string, idempotencyKey: string): Promise<AuthenticationStanding>
  refund(request: RefundRequest): Promise<ProviderRefund>
  close(): Promise<void>
  /** a charge's (ch_…) refunded amount and refunds, as the provider tells them now */
  chargeRefunds(chargeId: string): Promise<ProviderChargeRefunds>
}

export interface PaymentProviderOptions extends StripeProviderOptions {
  /**
   * where the customer's browser comes back to after authenticating a payment (PAYMENT_RETURN_URL): with it, a card
   * that asks for 3-D Secure waits for the customer; without it, such a card is declined
   */
  returnUrl?: string
}

type Refusals = Readonly<Record<string, { field: string; message: string }>>

/** Stripe's codes for a card it refuses when making a payment method of it: the card the client sent. */
const refusedCards: Refusals = {
  incorrect_number: { field: 'source.card.number', message: 'is not a valid card number' },
  invalid_number: { field: 'source.card.number', message: 'is not a valid card number' },
  expired_card: { field: 'source.card', message: 'has expired' },
  invalid_expiry_month: { field: 'source.card.expMonth', message: 'is not a valid expiry month' },
  invalid_expiry_year: { field: 'source.card.expYear', message: 'is not a valid expiry year' },
  invalid_cvc: { field: 'source.card.cvc', message: 'is not a valid security code' },
  incorrect_cvc: { field: 'source.card.cvc', message: 'is not a valid security code' },
  parameter_invalid_empty: { field: 'source.card', message: 'was refused by the payment provider' },
}

/** ... and for a charge: the payment method the client (or the order) gave. */
const refusedTokens: Refusals = {
  ...refusedCards,
  resource_missing: { field: 'source.token', message: 'is not a payment method the provider knows' },
  payment_method_unexpected_state: { field: 'source.token', message: 'cannot be used for a payment' },
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

/** A refund the provider reported as failed (Stripe answers 200 with status failed): a decline, as a 402 says it. */
function refundFailed(): AppError {
  const cause = new UpstreamStatusError('payment provider', 'POST', '/v1/refunds', 402, 'refund_failed')
  return appErrorForUpstreamStatus(
    cause,
    ErrorCode.PAYMENT_SERVICE_ERROR,
    'The refund was declined by the payment provider.',
  )
}

/** A charge that needs the customer first (3-D Secure): declined for now, as an off-session payment is. */
function authenticationRequired(): AppError {
  const cause = new UpstreamStatusError(
    'payment provider',
    'POST',
    '/v1/payment_intents',
    402,
    'authentication_required',
  )
  return appErrorForUpstreamStatus(
    cause,
    ErrorCode.PAYMENT_SERVICE_ERROR,
    'The card requires authentication (3-D Secure) before it can be charged',
  )
}

export function createPaymentProvider(options: PaymentProviderOptions): PaymentProvider {
  const stripe = createStripeProvider(options)
  const span = <T>(operation: string, attributes: Record<string, string>, run: () => Promise<T>) =>
    inSpan(
      `payment_provider.${operation}`,
      { kind: 'client', attributes: () => ({ ...providerAttributes(operation), ...attributes }) },
      run,
    )

  return {
    tokenize: (card) =>
      span('tokenize', {}, async () => {
        const method = await refusingBadSources(stripe.createPaymentMethod(card), refusedCards)
        return { token: method.id, brand: method.brand, last4: method.last4 }
      }),
    charge: (request) =>
      span(
        'charge',
        {
          'meridian.payment.idempotency_key': request.idempotencyKey,
          'meridian.order_id': request.orderId,
        },
        async () => {
          const answer = await chargeOrAuthenticate(request, undefined)
          if (answer.kind !== 'charged') throw authenticationRequired()
          return answer.charge
        },
      ),
    chargeOrAuthenticate: (request) =>
      span(
        'charge',
        {
          'meridian.payment.idempotency_key': request.idempotencyKey,
          'meridian.order_id': request.orderId,
        },
        () => chargeOrAuthenticate(request, options.returnUrl),
      ),
    authentication: (intentId) =>
      span('authentication', { 'meridian.payment.charge_id': intentId }, async () =>
        authenticationStandingOf(await stripe.retrieveIntent(intentId)),
      ),
    abandonAuthentication: (intentId, idempotencyKey) =>
      span(
        'abandon_authentication',
        { 'meridian.payment.charge_id': intentId, 'meridian.payment.idempotency_key': idempotencyKey },
        async () => {
          try {
            return authenticationStandingOf(
              await stripe.cancelIntent({ paymentIntentId: intentId, idempotencyKey }),
            )
          } catch (error) {
            // a payment that is no longer cancellable (the customer authenticated meanwhile) is read as it is
            const cause = error instanceof AppError ? error.cause : undefined
            if (!(cause instanceof UpstreamStatusError) || cause.status !== 400) throw error
            return authenticationStandingOf(await stripe.retrieveIntent(intentId))
          }
        },
      ),
    refund: (request) =>
      span(
        'refund',
        {
          'meridian.payment.idempotency_key': request.idempotencyKey,
          'meridian.payment.charge_id': request.chargeId,
        },
        async () => {
          const refund = await stripe.refund({
            paymentIntentId: request.chargeId,
            idempotencyKey: request.idempotencyKey,
            ...(request.amountCents === undefined ? {} : { amountCents: request.amountCents }),
          })
          if (refund.status === 'failed' || refund.status === 'canceled') throw refundFailed()
          return {
            id: refund.id,
            charge: request.chargeId,
            amount: refund.amountCents,
            status: refund.status,
          }
        },
      ),
    chargeRefunds: (chargeId) =>
      span('charge_refunds', { 'meridian.payment.charge_id': chargeId }, () =>
        stripe.retrieveChargeRefunds(chargeId),
      ),
    close: async () => {},
  }

  async function chargeOrAuthenticate(
    { amountCents, currency, orderId, token, idempotencyKey }: ChargeRequest,
    returnUrl: string | undefined,
  ): Promise<ChargeAnswer> {
    const intent = await refusingBadSources(
      stripe.createIntent({
        amountCents,
        currency,
        orderId,
        paymentMethod: token,
        idempotencyKey,
        ...(returnUrl ? { returnUrl } : {}),
      }),
      refusedTokens,
    )
    if (intent.status === 'requires_action') {
      if (!returnUrl) throw authenticationRequired()
      return { kind: 'authenticate', intentId: intent.id, authenticateUrl: intent.action?.url }
    }
    if (intent.status !== 'succeeded')
      throw new AppError(502, ErrorCode.PAYMENT_SERVICE_ERROR, {
        message: `payment provider left the charge ${intent.status}`,
      })
    return { kind: 'charged', charge: chargedBy(intent, orderId) }
  }
}

/** The charge a succeeded PaymentIntent made. */
function chargedBy(intent: ProviderIntent, orderId: string): ProviderCharge {
  return {
    id: intent.id,
    status: 'succeeded',
    amount: intent.amountReceivedCents || intent.amountCents,
    currency: intent.currency,
    orderId: intent.orderId ?? orderId,
    brand: intent.card?.brand ?? 'unknown',
    last4: intent.card?.last4 ?? '0000',
  }
}

/** Where a PaymentIntent that waited for authentication stands, read from the intent. */
export function authenticationStandingOf(intent: ProviderIntent): AuthenticationStanding {
  switch (intent.status) {
    case 'succeeded':
      return { status: 'succeeded', charge: chargedBy(intent, intent.orderId ?? '') }
    case 'requires_action':
    case 'requires_confirmation':
    case 'processing':
      return { status: 'waiting', authenticateUrl: intent.action?.url }
    case 'canceled':
      return { status: 'failed', reason: authenticationExpired }
    default:
      return {
        status: 'failed',
        reason: intent.failure?.message ?? "The card's authentication (3-D Secure) failed",
      }
  }
}

/** What every provider span says of the call. */
const providerAttributes = (operation: string) => ({
  'peer.service': 'payment-provider',
  'meridian.payment.operation': operation,
})
