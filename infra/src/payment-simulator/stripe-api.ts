// The Stripe subset's HTTP side (every path but the simulator's own endpoints and the 3-D Secure page): the route
// table, API keys (Bearer sk_test_…, a publishable pk_test_… on POST /v1/payment_methods only, which answers CORS for
// Stripe.js-like pages), bounded form parsing, Stripe's idempotency (per API key and path, replayed with
// Idempotent-Replayed, expiring), and the answer's encoding with Request-Id and Stripe-Version. Handlers live in
// stripe-payments.ts and stripe-resources.ts.
import type { IncomingMessage } from 'node:http'
import type { RequestLog } from './core.ts'
import { newId, redact, StripeError } from './errors.ts'
import { bodyTooLarge, type FormObject, formLimits, parseForm } from './form.ts'
import { BodyTooLarge, header, readBody } from './http.ts'
import { createFingerprinter, type Outcome, type StoredResponse } from './idempotency.ts'
import { apiVersion } from './objects.ts'
import type { StripeCall, StripeContext, StripeHandler } from './stripe-call.ts'
import {
  authenticatePaymentIntent,
  cancelPaymentIntent,
  capturePaymentIntent,
  confirmPaymentIntent,
  createPaymentIntent,
  createPaymentMethod,
  retrievePaymentIntent,
  retrievePaymentMethod,
} from './stripe-payments.ts'
import {
  createDispute,
  createRefund,
  createWebhookEndpoint,
  deleteWebhookEndpoint,
  listEvents,
  retrieveCharge,
  retrieveEvent,
  retrieveRefund,
} from './stripe-resources.ts'

interface Route {
  method: 'GET' | 'POST' | 'DELETE'
  pattern: RegExp
  handler: StripeHandler
  /** a publishable key (pk_test_…) is accepted too */
  publishable?: boolean
}

const id = '([^/]+)'
const routes: readonly Route[] = [
  { method: 'POST', pattern: /^\/v1\/payment_methods$/, handler: createPaymentMethod, publishable: true },
  { method: 'GET', pattern: new RegExp(`^/v1/payment_methods/${id}$`), handler: retrievePaymentMethod },
  { method: 'POST', pattern: /^\/v1\/payment_intents$/, handler: createPaymentIntent },
  { method: 'GET', pattern: new RegExp(`^/v1/payment_intents/${id}$`), handler: retrievePaymentIntent },
  {
    method: 'POST',
    pattern: new RegExp(`^/v1/payment_intents/${id}/confirm$`),
    handler: confirmPaymentIntent,
  },
  {
    method: 'POST',
    pattern: new RegExp(`^/v1/payment_intents/${id}/capture$`),
    handler: capturePaymentIntent,
  },
  { method: 'POST', pattern: new RegExp(`^/v1/payment_intents/${id}/cancel$`), handler: cancelPaymentIntent },
  { method: 'POST', pattern: /^\/v1\/refunds$/, handler: createRefund },
  { method: 'GET', pattern: new RegExp(`^/v1/refunds/${id}$`), handler: retrieveRefund },
  { method: 'GET', pattern: new RegExp(`^/v1/charges/${id}$`), handler: retrieveCharge },
  { method: 'POST', pattern: /^\/v1\/webhook_endpoints$/, handler: createWebhookEndpoint },
  { method: 'DELETE', pattern: new RegExp(`^/v1/webhook_endpoints/${id}$`), handler: deleteWebhookEndpoint },
  { method: 'GET', pattern: /^\/v1\/events$/, handler: listEvents },
  { method: 'GET', pattern: new RegExp(`^/v1/events/${id}$`), handler: retrieveEvent },
  {
    method: 'POST',
    pattern: new RegExp(`^/v1/test_helpers/payment_intents/${id}/authenticate$`),
    handler: authenticatePaymentIntent,
  },
  { method: 'POST', pattern: /^\/v1\/test_helpers\/disputes$/, handler: createDispute },
]

const corsPaths = new Set(['/v1/payment_methods'])

/** Headers of a browser-callable path (POST /v1/payment_methods), as Stripe.js needs them; the preflight's too. */
export function corsHeaders(path: string, preflight: boolean): Record<string, string> | undefined {
  if (!corsPaths.has(path)) return undefined
  return {
    'access-control-allow-origin': '*',
    ...(preflight
      ? {
          'access-control-allow-methods': 'POST',
          'access-control-allow-headers': 'authorization, content-type, idempotency-key, stripe-version',
          'access-control-max-age': '600',
        }
      : {}),
  }
}

const unauthorized = (message: string) => new StripeError(401, 'invalid_request_error', message)

/** A key as Stripe echoes it: its prefix and last four characters, the rest masked. */
function masked(key: string): string {
  const text = redact(key.slice(0, 120))
  const prefix = /^(sk|pk|rk)_(test|live)_/.exec(text)?.[0] ?? ''
  const rest = text.slice(prefix.length)
  return rest.length > 8
    ? `${prefix}${'*'.repeat(rest.length - 4)}${rest.slice(-4)}`
    : `${prefix}${'*'.repeat(rest.length)}`
}

/** The request's API key, checked (401 otherwise); Stripe.js's `key` parameter counts on a publishable route. */
function apiKeyOf(
  req: IncomingMessage,
  values: FormObject,
  route: Route | undefined,
  secretKey?: string,
): string {
  const authorization = header(req, 'authorization') ?? ''
  let key: string | undefined
  if (/^bearer /i.test(authorization)) key = authorization.slice(7).trim()
  else if (/^basic /i.test(authorization))
    key = Buffer.from(authorization.slice(6), 'base64').toString('utf8').split(':')[0]
  else if (route?.publishable && typeof values.key === 'string') key = values.key
  if (!key)
    throw unauthorized(
      "You did not provide an API key. You need to provide your API key in the Authorization header, using Bearer auth (e.g. 'Authorization: Bearer YOUR_SECRET_KEY').",
    )
  if (/^sk_test_\w+$/.test(key) && (secretKey === undefined || key === secretKey)) return key
  if (route?.publishable && /^pk_test_\w+$/.test(key)) return key
  if (/^pk_(test|live)_/.test(key))
    throw unauthorized(
      'This API call cannot be made with a publishable API key. Please use a secret API key.',
    )
  throw unauthorized(`Invalid API Key provided: ${masked(key)}`)
}

async function readForm(req: IncomingMessage): Promise<FormObject> {
  try {
    // read to the end (up to 16 times the limit), so that a client still sending gets the 400 and not a reset
    return parseForm(
      await readBody(req, { limit: formLimits.maxBodyBytes, drainUpTo: 16 * formLimits.maxBodyBytes }),
    )
  } catch (error) {
    throw error instanceof BodyTooLarge ? bodyTooLarge() : error
  }
}

const fingerprint = createFingerprinter()

/** Runs a handler: its answer is kept for a key; a StripeError is answered (and kept if it says so). */
async function execute(call: StripeCall, handler: StripeHandler): Promise<Outcome> {
  try {
    await call.context.core.latency(call.signal)
    return { ...(await handler(call)), store: true }
  } catch (error) {
    if (error instanceof StripeError) return error.outcome()
    throw error
  }
}

/**
 * Stripe's idempotency: keys per API key and path; the same key and parameters replay the first answer (4xx
 * included, not a 500 nor a request refused before it ran) with Idempotent-Replayed: true; other parameters are a 400
 * idempotency_error; a key whose first call still runs a 409 idempotency_key_in_use.
 */
async function idempotent(
  call: StripeCall,
  apiKey: string,
  path: string,
  handler: StripeHandler,
): Promise<Outcome> {
  const key = call.idempotencyKey
  if (key === null) return execute(call, handler)
  if (key.length > 255)
    throw new StripeError(
      400,
      'invalid_request_error',
      'Idempotency-Key must be at most 255 characters long.',
      {
        code: 'idempotency_key_too_long',
      },
    )
  call.log.idempotencyKey = redact(key)
  const { state } = call.view
  const scope = `${fingerprint('api-key', apiKey)} ${path} ${key}`
  const claim = state.stripeKeys.claim(scope, fingerprint(`POST ${path}`, call.values))
  if (claim.kind === 'mismatch')
    throw new StripeError(
      400,
      'idempotency_error',
      `Keys for idempotent requests can only be used with the same parameters they were first used with. Try using a key other than '${redact(key)}' if you meant to execute a different request.`,
    )
  if (claim.kind === 'in_flight')
    throw new StripeError(
      409,
      'idempotency_error',
      'There is currently another in-progress request using this Idempotency-Key (that probably means you submitted twice, and the other request is still going through). Please try again later.',
      { code: 'idempotency_key_in_use' },
    )
  if (claim.kind === 'replay') {
    state.stats.replays++
    call.log.replayed = true
    return {
      ...claim.response,
      headers: { ...claim.response.headers, 'idempotent-replayed': 'true' },
      store: true,
    }
  }
  try {
    const outcome = await execute(call, handler)
    outcome.headers = { ...outcome.headers, 'original-request': call.requestId }
    claim.settle(outcome)
    return outcome
  } catch (error) {
    claim.abandon()
    throw error
  }
}

function findRoute(method: string, path: string): { route: Route; ids: string[] } | undefined {
  for (const route of routes) {
    if (route.method !== method) continue
    const match = route.pattern.exec(path)
    if (!match) continue
    try {
      return { route, ids: match.slice(1).map((part) => decodeURIComponent(part)) }
    } catch {
      return undefined
    }
  }
  return undefined
}

/** One request of the Stripe subset: its answer (errors included), or a thrown AbortError when it was dropped. */
export async function stripeAnswer(
  context: StripeContext,
  req: IncomingMessage,
  url: URL,
  requestId: string,
  log: RequestLog,
): Promise<StoredResponse> {
  const method = req.method ?? 'GET'
  const path = url.pathname
  try {
    const found = findRoute(method, path)
    const values = method === 'POST' ? await readForm(req) : parseForm(url.search.slice(1))
    const apiKey = apiKeyOf(req, values, found?.route, context.core.settings.secretKey)
    if (!found)
      throw new StripeError(
        404,
        'invalid_request_error',
        `Unrecognized request URL (${method}: ${redact(path).slice(0, 200)}). The payment simulator speaks a subset of Stripe's API: see its README.md.`,
      )
    if (found.route.publishable) delete values.key
    const state = context.core.state()
    const call: StripeCall = {
      context,
      view: { state, baseUrl: context.baseUrl() },
      signal: state.inFlight.signal,
      values,
      ids: found.ids,
      requestId,
      idempotencyKey: method === 'POST' ? (header(req, 'idempotency-key') ?? null) : null,
      log,
    }
    return method === 'POST'
      ? await idempotent(call, apiKey, path, found.route.handler)
      : await execute(call, found.route.handler)
  } catch (error) {
    if (error instanceof StripeError) return error.outcome()
    throw error
  }
}

/** The headers every answer of the Stripe subset carries. */
export function stripeHeaders(req: IncomingMessage, requestId: string): Record<string, string> {
  const key = header(req, 'idempotency-key')
  return {
    'request-id': requestId,
    'stripe-version': apiVersion,
    'cache-control': 'no-cache, no-store',
    ...(key && req.method === 'POST' && key.length <= 255 ? { 'idempotency-key': key } : {}),
  }
}

export const newRequestId = (): string => newId('req')
