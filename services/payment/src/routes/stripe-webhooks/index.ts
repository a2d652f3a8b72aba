// POST /payments/webhooks/stripe (under /api/v1 and /api; public: the provider calls it, with no bearer): the
// provider's webhook deliveries. The body is kept as the text that came, which the signature covers, and checked with
// the SDK's constructEvent against STRIPE_WEBHOOK_SECRET within Stripe's tolerance of five minutes: a missing or wrong
// signature, a stale timestamp or a body changed by one byte is a 400 in the interface's envelope and changes nothing.
// A verified event is applied once (domain/provider-events.ts) and answered 200 { received: true }, a redelivery too;
// a failure while applying it is a 5xx, and the provider delivers it again later.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { AppError } from '@meridian/contracts'
import { bodyLimitBytes, errorResponses } from '@meridian/service-kit'
import Stripe from 'stripe'
import { Type } from 'typebox'
import type { ProviderEvent, ProviderEventOutcome } from '../../domain/provider-events.ts'

/**
 * The most an event's body may hold: every route's limit (Stripe's events are a few KB). Not a smaller one of its own:
 * the gateway refuses a body over the common limit itself, and a service refusing a smaller one early closes the
 * connection under the gateway's upload, which the gateway can only answer 503 (found by the API fuzzing).
 */
export const webhookBodyLimit = bodyLimitBytes

/** How old a delivery's signed timestamp may be, seconds (Stripe's own default). */
export const webhookToleranceSeconds = 300

export interface StripeWebhookOptions {
  /** STRIPE_WEBHOOK_SECRET */
  webhookSecret: string
  receive(event: ProviderEvent): Promise<ProviderEventOutcome>
}

const WebhookReceived = Type.Object(
  { received: Type.Literal(true) },
  { additionalProperties: false, description: 'the event is applied (or was, when delivered before)' },
)

const WebhookHeaders = Type.Object({
  'stripe-signature': Type.Optional(
    Type.String({
      maxLength: 2000,
      description: 'the provider\'s signature of the body: t=<unix seconds>,v1=<hex HMAC-SHA256 of "t.body">',
    }),
  ),
})

export const stripeWebhookRoutes: FastifyPluginAsyncTypebox<StripeWebhookOptions> = async (
  app,
  { webhookSecret, receive },
) => {
  // this plugin's own parser: the text as it came (a parsed and re-serialised body would no longer match its signature)
  app.removeContentTypeParser('application/json')
  app.addContentTypeParser(
    'application/json',
    { parseAs: 'string', bodyLimit: webhookBodyLimit },
    (_request, body, done) => done(null, body),
  )
  app.post(
    '/payments/webhooks/stripe',
    {
      schema: {
        tags: ['payments'],
        summary: "The payment provider's webhook deliveries (Stripe's, signed; no bearer)",
        description: `The body is checked against its Stripe-Signature with the webhook secret, within ${webhookToleranceSeconds} s of its timestamp; a bad signature is 400 and changes nothing. An event is applied once: a charge whose answer was lost is settled by its payment_intent.succeeded or payment_intent.payment_failed; a refund made at the provider (charge.refunded) moves the payment's refunded amount to the provider's, and a chargeback (charge.dispute.created) marks it disputed.`,
        headers: WebhookHeaders,
        body: Type.String({
          maxLength: webhookBodyLimit,
          description: 'the event, as the JSON text the provider signed',
        }),
        response: { 200: WebhookReceived, ...errorResponses(400, 413, 415, 422) },
      },
    },
    async (request) => {
      let event: ProviderEvent
      try {
        event = Stripe.webhooks.constructEvent(
          request.body as string,
          request.headers['stripe-signature'] ?? '',
          webhookSecret,
          webhookToleranceSeconds,
        ) as unknown as ProviderEvent
      } catch (error) {
        // the message only: the error carries the body and the header it was given
        const why = error instanceof Error ? error.message.slice(0, 300) : 'not verified'
        request.log.warn({ why }, 'a webhook delivery with a bad signature was refused')
        throw AppError.badRequest(
          'The webhook signature does not match the body, or is older than five minutes',
        )
      }
      const outcome = await receive(event)
      request.log.info(
        { eventId: event.id, eventType: event.type, outcome },
        'provider webhook event received',
      )
      return { received: true as const }
    },
  )
}
