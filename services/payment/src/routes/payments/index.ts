// /payments: paying an order under an Idempotency-Key (POST), and reading a payment (GET, its payer, the customer of
// its order, or an admin). A card in the body (source.card) is taken in development and test only: in production it
// is refused before anything else happens (no key claimed, no provider call, no row), so that a card number never
// reaches Meridian there (docs/explanation/security.md, "PCI scope").
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import {
  AppError,
  CreatePaymentBody,
  idempotencyKeyHeader,
  Payment,
  PaymentIdParams,
  RequiredIdempotencyKeyHeader,
  replayedHeader,
} from '@meridian/contracts'
import { errorResponses, security } from '@meridian/service-kit'
import type { FastifyRequest, onRequestHookHandler, preValidationHookHandler } from 'fastify'
import { requireIdempotencyKey } from '../../domain/idempotency.ts'
import type { Payer, PaymentUseCases } from '../../domain/payments.ts'

/** Who may do what (see access.ts); without guards every route is open (and answers 401 for want of a payer). */
export interface PaymentsGuards {
  /** onRequest of POST /payments and GET /payments/:id */
  authenticated?: onRequestHookHandler[]
}

export interface PaymentsRoutesOptions {
  payments: PaymentUseCases
  guards?: PaymentsGuards
  /**
   * `tokenized`: a card in the body is made a payment method at the provider on the way (development and test);
   * `refused` (production, the default): a body with a card is a 422 naming source.card
   */
  cards?: 'tokenized' | 'refused'
}

const IdempotencyKeyHeaders = RequiredIdempotencyKeyHeader(
  'required (400 without it), 1 to 255 printable ASCII characters, unique per payment: the same key and body ' +
    'again answer the stored response (Idempotent-Replayed: true) and never charge twice; another body 422; while ' +
    'the first runs, 409. Keys are per caller and kept 24 hours.',
)

/**
 * The key is required, and its absence is a 400 (the idempotency-key draft), as a malformed key is: checked before
 * the schema would make it a 422 like any other invalid part of a request.
 */
const idempotencyKeyPresent: preValidationHookHandler = async (request) => {
  requireIdempotencyKey(request.headers[idempotencyKeyHeader])
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value)

/**
 * In production a card number never reaches Meridian: a body carrying source.card (whatever its content, valid or not)
 * is refused as the schema refuses a field, before the body is validated, the key claimed or the provider called.
 */
const cardsRefused: preValidationHookHandler = async (request) => {
  const { body } = request
  if (isObject(body) && isObject(body.source) && Object.hasOwn(body.source, 'card'))
    throw AppError.validation(
      [
        {
          field: 'source.card',
          message:
            "is not accepted in production: pay with source.token, a payment method (pm_…) the provider's own " +
            "elements made in the customer's browser",
        },
      ],
      'A card number is never accepted here',
    )
}

function payerOf(request: FastifyRequest): Payer {
  const principal = request.principal
  if (!principal) throw AppError.unauthorized()
  return {
    subject: principal.subject,
    isAdmin: principal.role === 'admin' || principal.roles.includes('admin'),
    isUser: principal.kind === 'user',
  }
}

export const paymentsRoutes: FastifyPluginAsyncTypebox<PaymentsRoutesOptions> = async (
  app,
  { payments, guards = {}, cards = 'refused' },
) => {
  const tags = ['payments']
  const authenticated = guards.authenticated ?? []
  const preValidation =
    cards === 'tokenized' ? [idempotencyKeyPresent] : [idempotencyKeyPresent, cardsRefused]

  app.post(
    '/payments',
    {
      onRequest: authenticated,
      preValidation,
      schema: {
        tags,
        summary:
          "Pay an order with the provider's payment method (pm_…) under an Idempotency-Key; a card in development and test only",
        security: security.requires('payments:write'),
        headers: IdempotencyKeyHeaders,
        body: CreatePaymentBody,
        response: {
          201: Payment,
          ...errorResponses(400, 401, 402, 404, 409, 422, 429, 502, 503),
        },
        description:
          "The order must be one payment knows, the caller's (any, for an admin: another customer's answers 404 as an " +
          'unknown one does), awaiting a payment (payment_failed: 409 when it is paid, being charged by its ' +
          'payment step, cancelled or failed, or another payment of it is in progress) and paid with the amount due ' +
          '(422 naming amount). A refused request charges nothing and is not stored: its key may be used again. A ' +
          'payment accepted here moves the order on (payment.processed: the saga reserves and ships it). ' +
          "source is a payment method the provider's own elements made in the customer's browser ({token: 'pm_…'}); " +
          'a card ({card: {…}}, made a payment method at the provider on the way, never kept) is taken in ' +
          'development and test only: in production it is refused, 422 VALIDATION_ERROR naming source.card, with ' +
          'nothing charged or stored.',
      },
    },
    async (request, reply) => {
      const answer = await payments.createPayment({
        payer: payerOf(request),
        idempotencyKey: request.headers[idempotencyKeyHeader],
        body: request.body,
      })
      if (answer.replayed) reply.header(replayedHeader, 'true')
      return reply
        .code(answer.status)
        .header('location', `/api/v1/payments/${answer.payment.paymentId}`)
        .send(answer.payment)
    },
  )

  app.get(
    '/payments/:id',
    {
      onRequest: authenticated,
      schema: {
        tags,
        summary: "Read a payment (its payer, its order's customer, or an admin)",
        security: security.requires('payments:read'),
        params: PaymentIdParams,
        response: { 200: Payment, ...errorResponses(401, 403, 404) },
      },
    },
    async (request) => payments.getPayment(request.params.id, payerOf(request)),
  )
}
