// The payment provider through Stripe's official SDK (`stripe`, pinned to the API version 2026-08-26.dahlia): a
// PaymentIntent created and confirmed in one call with the customer's payment method (a `pm_…` the provider's own
// elements made in the browser: no card number reaches Meridian), captured at once or later, confirmed again or
// cancelled, read back, and refunded in whole or in part. Every mutating call carries an idempotency key, so a call
// repeated after a lost answer never charges or refunds twice. The SDK's own retries are off: a failure is the kit's
// upstream rule (interface Errors rule 5) — unreachable or past the deadline -> 503 SERVICE_UNAVAILABLE; 402 (a card
// declined) -> 402 PAYMENT_SERVICE_ERROR with the provider's message; 429 -> 429 RATE_LIMITED, retryAfter 30; anything
// else -> 502 PAYMENT_SERVICE_ERROR — with the provider's error code kept (UpstreamStatusError.upstreamCode).
// STRIPE_API_BASE points it at the simulator or stripe-mock in development and tests; unset, it is Stripe itself.
import { AppError, ErrorCode } from '@meridian/contracts'
import {
  appErrorForUpstreamStatus,
  inSpan,
  UpstreamStatusError,
  upstreamUnavailable,
} from '@meridian/service-kit'
import Stripe from 'stripe'

const upstream = 'payment provider'

export interface StripeProviderOptions {
  /** STRIPE_SECRET_KEY */
  secretKey: string
  /** STRIPE_API_BASE: http(s)://host[:port] of the simulator or stripe-mock; undefined is Stripe itself */
  apiBase?: string
  /** deadline of one call, ms; default 5000 (interface Limits) */
  timeoutMs?: number
}

/** A PaymentIntent as the payment service needs it. */
export interface ProviderIntent {
  /** pi_… */
  id: string
  status: Stripe.PaymentIntent.Status
  amountCents: number
  /** what was captured so far */
  amountReceivedCents: number
  currency: string
  /** the order it pays (its metadata) */
  orderId: string | undefined
  /** the card's brand and last four digits, when the provider says them */
  card: { brand: string; last4: string } | undefined
  /** what the customer must do first (3-D Secure): the page to send them to, when it is one */
  action: { type: string; url: string | undefined } | undefined
  /** why its last attempt failed */
  failure: { code: string | undefined; declineCode: string | undefined; message: string } | undefined
}

export interface ProviderRefund {
  /** re_… */
  id: string
  paymentIntentId: string | undefined
  amountCents: number
  status: string
}

export interface IntentRequest {
  /** integer minor units (cents) */
  amountCents: number
  currency: string
  orderId: string
  /** the customer's payment method (pm_…) */
  paymentMethod: string
  /** automatic: charged at once; manual: authorised now, captured later */
  capture?: 'automatic' | 'manual'
  /**
   * where the customer comes back to after authenticating (3-D Secure, a redirect); without it the intent offers no
   * redirect (automatic_payment_methods.allow_redirects never) and a card that needs authentication says so in
   * next_action for the provider's own script
   */
  returnUrl?: string
  idempotencyKey: string
}

/** A charge's refunds as the provider tells them now (the truth a charge.refunded webhook is checked against). */
export interface ProviderChargeRefunds {
  /** ch_… */
  chargeId: string
  /** the PaymentIntent it belongs to (pi_…) */
  paymentIntentId: string | undefined
  /** the charge's whole refunded amount, cents */
  amountRefundedCents: number
  /** its refunds that succeeded (or are still pending: the money is on its way back), newest first */
  refunds: { id: string; amountCents: number }[]
}

/** A card as a development or test client sends it (never in production: the provider's elements take cards). */
export interface ProviderCardInput {
  number: string
  expMonth: number
  expYear: number
  cvc: string
}

export interface ProviderPaymentMethod {
  /** pm_… */
  id: string
  brand: string
  last4: string
}

export interface StripeProvider {
  /** a payment method made from a card: development and tests only (production refuses cards before this) */
  createPaymentMethod(card: ProviderCardInput): Promise<ProviderPaymentMethod>
  /** creates the intent and confirms it: succeeded, requires_capture, requires_action (3-D Secure), or a 402 */
  createIntent(request: IntentRequest): Promise<ProviderIntent>
  /** confirms an intent again (after the customer authenticated, or with another payment method) */
  confirmIntent(request: {
    paymentIntentId: string
    paymentMethod?: string
    returnUrl?: string
    idempotencyKey: string
  }): Promise<ProviderIntent>
  /** captures an authorised intent, in whole or up to `amountCents` */
  captureIntent(request: {
    paymentIntentId: string
    amountCents?: number
    idempotencyKey: string
  }): Promise<ProviderIntent>
  /** cancels an intent not captured (a 3-D Secure left unanswered) */
  cancelIntent(request: { paymentIntentId: string; idempotencyKey: string }): Promise<ProviderIntent>
  retrieveIntent(paymentIntentId: string): Promise<ProviderIntent>
  /** a charge's refunded amount and its refunds (expanded: Stripe leaves them out of a Charge otherwise) */
  retrieveChargeRefunds(chargeId: string): Promise<ProviderChargeRefunds>
  /** refunds an intent's capture, in whole (no amount) or in part */
  refund(request: {
    paymentIntentId: string
    amountCents?: number
    orderId?: string
    idempotencyKey: string
  }): Promise<ProviderRefund>
}

/** The SDK's options: the deadline, no retries of its own, no telemetry header, and the simulator's address if any. */
export function stripeClientOptions({ apiBase, timeoutMs = 5000 }: StripeProviderOptions) {
  const base = apiBase === undefined ? undefined : new URL(apiBase)
  const protocol: 'http' | 'https' | undefined =
    base?.protocol === 'http:' ? 'http' : base ? 'https' : undefined
  return {
    apiVersion: '2026-08-26.dahlia' as const,
    maxNetworkRetries: 0,
    timeout: timeoutMs,
    telemetry: false,
    appInfo: { name: 'meridian-payment' },
    ...(base && protocol
      ? { host: base.hostname, port: Number(base.port || (protocol === 'http' ? 80 : 443)), protocol }
      : {}),
  }
}

/** What the SDK's failure is by the kit's upstream rule; anything that is not the provider's answer is rethrown. */
export function providerFailure(error: unknown, method: string, path: string): unknown {
  if (error instanceof Stripe.errors.StripeConnectionError) return upstreamUnavailable(upstream, error)
  if (!(error instanceof Stripe.errors.StripeError)) return error
  const status = error.statusCode
  if (status === undefined) return upstreamUnavailable(upstream, error)
  const cause = new UpstreamStatusError(upstream, method, path, status, error.code ?? error.rawType)
  return appErrorForUpstreamStatus(
    cause,
    ErrorCode.PAYMENT_SERVICE_ERROR,
    status === 402 ? error.message.slice(0, 500) : undefined,
  )
}

function intentOf(intent: Stripe.PaymentIntent): ProviderIntent {
  const charge = typeof intent.latest_charge === 'object' ? intent.latest_charge : null
  const card = charge?.payment_method_details?.card
  const next = intent.next_action
  const failure = intent.last_payment_error
  return {
    id: intent.id,
    status: intent.status,
    amountCents: intent.amount,
    amountReceivedCents: intent.amount_received,
    currency: intent.currency,
    orderId: intent.metadata?.orderId,
    card: card?.brand && card.last4 ? { brand: card.brand, last4: card.last4 } : undefined,
    action: next ? { type: next.type, url: next.redirect_to_url?.url ?? undefined } : undefined,
    failure: failure
      ? {
          code: failure.code ?? undefined,
          declineCode: failure.decline_code ?? undefined,
          message: (failure.message ?? 'the payment failed').slice(0, 500),
        }
      : undefined,
  }
}

/** What a call's span says: the provider, the API call (payment_intents.create, …) and its idempotency key. */
const spanAttributes = (call: string, idempotencyKey?: string) => ({
  'peer.service': 'payment-provider',
  'meridian.payment.provider_call': call,
  ...(idempotencyKey ? { 'meridian.payment.idempotency_key': idempotencyKey } : {}),
})

export function createStripeProvider(options: StripeProviderOptions): StripeProvider {
  const stripe = new Stripe(options.secretKey, stripeClientOptions(options))
  /** one call: its span, and its failure by the kit's rule */
  const call = <T>(
    operation: string,
    [method, path]: ['GET' | 'POST', string],
    idempotencyKey: string | undefined,
    run: () => Promise<T>,
  ) =>
    inSpan(
      `stripe.${operation}`,
      { kind: 'client', attributes: () => spanAttributes(operation, idempotencyKey) },
      async () => {
        try {
          return await run()
        } catch (error) {
          throw providerFailure(error, method, path)
        }
      },
    )
  const expand = ['latest_charge']

  return {
    createPaymentMethod: (card) =>
      call('payment_methods.create', ['POST', '/v1/payment_methods'], undefined, async () => {
        const method = await stripe.paymentMethods.create({
          type: 'card',
          card: { number: card.number, exp_month: card.expMonth, exp_year: card.expYear, cvc: card.cvc },
        })
        return { id: method.id, brand: method.card?.brand ?? 'unknown', last4: method.card?.last4 ?? '0000' }
      }),
    createIntent: (request) =>
      call('payment_intents.create', ['POST', '/v1/payment_intents'], request.idempotencyKey, async () =>
        intentOf(
          await stripe.paymentIntents.create(
            {
              amount: request.amountCents,
              currency: request.currency,
              payment_method: request.paymentMethod,
              confirm: true,
              capture_method: request.capture ?? 'automatic',
              ...(request.returnUrl
                ? { return_url: request.returnUrl }
                : { automatic_payment_methods: { enabled: true, allow_redirects: 'never' as const } }),
              metadata: { orderId: request.orderId },
              expand,
            },
            { idempotencyKey: request.idempotencyKey },
          ),
        ),
      ),
    confirmIntent: ({ paymentIntentId, paymentMethod, returnUrl, idempotencyKey }) =>
      call('payment_intents.confirm', ['POST', '/v1/payment_intents/:id/confirm'], idempotencyKey, async () =>
        intentOf(
          await stripe.paymentIntents.confirm(
            paymentIntentId,
            {
              ...(paymentMethod ? { payment_method: paymentMethod } : {}),
              ...(returnUrl ? { return_url: returnUrl } : {}),
              expand,
            },
            { idempotencyKey },
          ),
        ),
      ),
    captureIntent: ({ paymentIntentId, amountCents, idempotencyKey }) =>
      call('payment_intents.capture', ['POST', '/v1/payment_intents/:id/capture'], idempotencyKey, async () =>
        intentOf(
          await stripe.paymentIntents.capture(
            paymentIntentId,
            { ...(amountCents === undefined ? {} : { amount_to_capture: amountCents }), expand },
            { idempotencyKey },
          ),
        ),
      ),
    cancelIntent: ({ paymentIntentId, idempotencyKey }) =>
      call('payment_intents.cancel', ['POST', '/v1/payment_intents/:id/cancel'], idempotencyKey, async () =>
        intentOf(
          await stripe.paymentIntents.cancel(
            paymentIntentId,
            { cancellation_reason: 'abandoned', expand },
            { idempotencyKey },
          ),
        ),
      ),
    retrieveIntent: (paymentIntentId) =>
      call('payment_intents.retrieve', ['GET', '/v1/payment_intents/:id'], undefined, async () =>
        intentOf(await stripe.paymentIntents.retrieve(paymentIntentId, { expand })),
      ),
    retrieveChargeRefunds: (chargeId) =>
      call('charges.retrieve', ['GET', '/v1/charges/:id'], undefined, async () => {
        const charge = await stripe.charges.retrieve(chargeId, { expand: ['refunds'] })
        const intent = charge.payment_intent
        return {
          chargeId: charge.id,
          paymentIntentId: typeof intent === 'string' ? intent : intent?.id,
          amountRefundedCents: charge.amount_refunded,
          refunds: (charge.refunds?.data ?? [])
            .filter((refund) => refund.status === 'succeeded' || refund.status === 'pending')
            .map((refund) => ({ id: refund.id, amountCents: refund.amount })),
        }
      }),
    refund: ({ paymentIntentId, amountCents, orderId, idempotencyKey }) =>
      call('refunds.create', ['POST', '/v1/refunds'], idempotencyKey, async () => {
        const refund = await stripe.refunds.create(
          {
            payment_intent: paymentIntentId,
            ...(amountCents === undefined ? {} : { amount: amountCents }),
            ...(orderId ? { metadata: { orderId } } : {}),
          },
          { idempotencyKey },
        )
        return {
          id: refund.id,
          paymentIntentId:
            typeof refund.payment_intent === 'string' ? refund.payment_intent : refund.payment_intent?.id,
          amountCents: refund.amount,
          status: refund.status ?? 'pending',
        }
      }),
  }
}

/** A failure the provider answered for the payment method (declined, 3-D Secure refused): the client's to fix. */
export function isDecline(error: unknown): boolean {
  const cause = error instanceof AppError ? error.cause : undefined
  return cause instanceof UpstreamStatusError && cause.status === 402
}
