// The simulator's own JSON API, unchanged in what it answers (services/payment's provider client, tests/e2e and bench
// use it): tokens, charges, refunds, a charge by id, an order's summary, stats, faults and reset, with its own
// idempotency (Idempotency-Key required on charges and refunds, one namespace, 422 on a mismatch). See README.md.
import type { IncomingMessage } from 'node:http'
import { cardDigits, summarizeCard } from './cards.ts'
import type { Core, RequestLog, SimulatorFaults } from './core.ts'
import { ApiError, isObject, newId, redact } from './errors.ts'
import { BodyTooLarge, readBody } from './http.ts'
import { createFingerprinter, type Outcome, type StoredResponse } from './idempotency.ts'
import { isRefundBehavior, refundBehaviors } from './options.ts'
import { type LegacyCharge, type LegacyRefund, orderSummary, type State, type Token } from './state.ts'

const maxBodyBytes = 64 * 1024
const maxAmount = 99_999_999

const invalid = (message: string) => new ApiError(400, 'invalid_request', message)

/** What one request's handlers share: the state it started with, the signal that drops it, its log line. */
interface Call {
  core: Core
  current: State
  signal: AbortSignal
  log: RequestLog
}

async function readText(req: IncomingMessage): Promise<string> {
  try {
    return await readBody(req, { limit: maxBodyBytes })
  } catch (error) {
    if (error instanceof BodyTooLarge)
      throw new ApiError(413, 'body_too_large', `the body is larger than ${maxBodyBytes} bytes`)
    throw error
  }
}

const readJson = async (req: IncomingMessage) => parseJson(await readText(req))

function parseJson(text: string): Record<string, unknown> {
  let value: unknown
  try {
    value = JSON.parse(text === '' ? '{}' : text)
  } catch {
    throw invalid('the body is not JSON')
  }
  if (!isObject(value)) throw invalid('the body must be a JSON object')
  return value
}

/** A card object of a request, checked: its summary (brand, last4, behaviours) and expiry, never its number. */
function parseCard(value: unknown, now: Date): Omit<Token, 'id'> {
  if (!isObject(value)) throw invalid('card must be an object {number, expMonth, expYear, cvc}')
  const { number, expMonth, expYear, cvc } = value
  if (typeof number !== 'string') throw invalid('card.number must be a string')
  if (typeof expMonth !== 'number' || !Number.isInteger(expMonth) || expMonth < 1 || expMonth > 12)
    throw invalid('card.expMonth must be an integer 1..12')
  if (typeof expYear !== 'number' || !Number.isInteger(expYear) || expYear < 2000 || expYear > 2100)
    throw invalid('card.expYear must be a four-digit year')
  if (typeof cvc !== 'string' || !/^\d{3,4}$/.test(cvc))
    throw invalid('card.cvc must be a string of 3 or 4 digits')
  const summary = cardDigits(number) === undefined ? undefined : summarizeCard(number)
  if (!summary) throw new ApiError(422, 'invalid_card', 'Your card number is incorrect.')
  const year = now.getUTCFullYear()
  if (expYear < year || (expYear === year && expMonth < now.getUTCMonth() + 1))
    throw new ApiError(422, 'expired_card', 'Your card has expired.')
  return { ...summary, expMonth, expYear }
}

/** The body of POST /v1/faults, checked: only known faults, each one of its settings. */
function parseFaults(body: Record<string, unknown>): Partial<SimulatorFaults> {
  const unknown = Object.keys(body).filter((key) => key !== 'refunds')
  if (unknown.length > 0) throw invalid(`unknown fault: ${redact(unknown.join(', ').slice(0, 200))}`)
  const { refunds } = body
  if (refunds === undefined) return {}
  if (!isRefundBehavior(refunds)) throw invalid(`refunds must be one of ${refundBehaviors.join(', ')}`)
  return { refunds }
}

function providerError(current: State): ApiError {
  current.stats.providerErrors++
  return new ApiError(500, 'provider_error', 'An error occurred with our connection to the payment provider.')
}

async function createToken(body: Record<string, unknown>, call: Call): Promise<StoredResponse> {
  const card = parseCard(body.card, new Date())
  await call.core.latency(call.signal)
  const token: Token = { id: newId('tok'), ...card }
  call.current.tokens.set(token.id, token)
  call.current.stats.tokens++
  call.log.brand = token.brand
  call.log.last4 = token.last4
  return { status: 201, body: { token: token.id, brand: token.brand, last4: token.last4 }, headers: {} }
}

/** A charge's body, checked; its card from a token or passed straight. */
function chargeRequest(body: Record<string, unknown>, call: Call) {
  const { amount, currency, source, orderId, description } = body
  if (typeof amount !== 'number' || !Number.isInteger(amount) || amount < 1 || amount > maxAmount)
    throw invalid(`amount must be an integer number of minor units, 1..${maxAmount}`)
  if (currency !== 'usd') throw invalid("currency must be 'usd'")
  if (typeof orderId !== 'string' || orderId === '' || orderId.length > 200)
    throw invalid('orderId must be a non-empty string')
  if (description !== undefined && description !== null && typeof description !== 'string')
    throw invalid('description must be a string')
  call.log.orderId = redact(orderId)
  let card: Omit<Token, 'id'>
  if (typeof source === 'string') {
    const token = call.current.tokens.get(source)
    if (!token) throw new ApiError(404, 'resource_missing', `No such token: '${redact(source)}'`)
    card = token
  } else if (isObject(source)) card = parseCard(source.card, new Date())
  else throw invalid("source must be a token ('tok_…') or {card: {number, expMonth, expYear, cvc}}")
  call.log.brand = card.brand
  call.log.last4 = card.last4
  return {
    amount,
    currency,
    orderId,
    card,
    description: typeof description === 'string' ? description : null,
  }
}

async function createCharge(body: Record<string, unknown>, call: Call): Promise<Outcome> {
  const { amount, currency, orderId, card, description } = chargeRequest(body, call)
  const { core, current, signal, log } = call
  await core.latency(signal)
  const charge: LegacyCharge = {
    id: newId('ch'),
    object: 'charge',
    status: 'succeeded',
    amount,
    currency,
    orderId,
    description,
    brand: card.brand,
    last4: card.last4,
    amountRefunded: 0,
    refunded: false,
    failureCode: null,
    created: new Date().toISOString(),
  }
  const fail = (error: ApiError, store: boolean, showCharge: boolean): Outcome => {
    charge.status = 'failed'
    charge.failureCode = error.code
    current.charges.set(charge.id, charge)
    current.stats.failedCharges++
    log.charge = charge.id
    if (showCharge) error.extra.charge = charge.id
    return error.outcome(store)
  }
  if (core.injectedFailure()) return fail(providerError(current), false, false)
  switch (card.behavior) {
    case 'decline':
      return fail(new ApiError(402, 'card_declined', 'Your card was declined.'), true, true)
    case 'rate_limit':
      return fail(
        new ApiError(
          429,
          'rate_limited',
          'Too many requests hit the API too quickly.',
          {},
          { 'retry-after': '30' },
        ),
        true,
        true,
      )
    case 'provider_error':
      return fail(providerError(current), false, false)
    case 'delay':
      await core.wait(core.settings.delayMs, signal)
      break
    case 'hang':
      await core.wait(core.settings.hangMs, signal)
      break
    case 'succeed':
      break
  }
  current.charges.set(charge.id, charge)
  current.stats.charges++
  current.stats.charged += amount
  log.charge = charge.id
  return { status: 201, body: { ...charge }, headers: {}, store: true }
}

/** The charge a refund is for, checked right before the change: two refunds in flight never refund more than it. */
function refundableCharge(chargeId: string, amount: number | undefined, call: Call) {
  const charge = call.current.charges.get(chargeId)
  if (!charge) throw new ApiError(404, 'resource_missing', `No such charge: '${redact(chargeId)}'`)
  call.log.orderId = redact(charge.orderId)
  if (charge.status !== 'succeeded')
    throw new ApiError(
      422,
      'charge_not_refundable',
      `Charge ${redact(chargeId)} did not succeed: nothing to refund.`,
    )
  const remaining = charge.amount - charge.amountRefunded
  if (remaining === 0)
    throw new ApiError(
      422,
      'charge_already_refunded',
      `Charge ${redact(chargeId)} has already been refunded.`,
    )
  const refundAmount = amount ?? remaining
  if (refundAmount > remaining)
    throw new ApiError(
      422,
      'amount_too_large',
      `Refund amount (${refundAmount}) is greater than the unrefunded amount of the charge (${remaining}).`,
      { remaining },
    )
  return { charge, refundAmount }
}

async function createRefund(body: Record<string, unknown>, call: Call): Promise<Outcome> {
  const { charge: chargeId, amount } = body
  if (typeof chargeId !== 'string' || chargeId === '') throw invalid("charge must be a charge id ('ch_…')")
  if (
    amount !== undefined &&
    (typeof amount !== 'number' || !Number.isInteger(amount) || amount < 1 || amount > maxAmount)
  )
    throw invalid('amount must be a positive integer number of minor units')
  const { core, current } = call
  call.log.charge = redact(chargeId)
  await core.latency(call.signal)
  // the draw is made whatever the faults, so that setting them never shifts the seeded sequence
  if (core.injectedFailure() || core.faults().refunds === 'fail') return providerError(current).outcome(false)
  const { charge, refundAmount } = refundableCharge(chargeId, amount as number | undefined, call)
  // thrown, so not kept for the key: the same refund asked again once refunds succeed is made then
  if (core.faults().refunds === 'decline') {
    current.stats.declinedRefunds++
    throw new ApiError(402, 'refund_declined', 'The refund was declined by the payment provider.')
  }
  const refund: LegacyRefund = {
    id: newId('re'),
    object: 'refund',
    charge: chargeId,
    amount: refundAmount,
    status: 'succeeded',
    created: new Date().toISOString(),
  }
  current.refunds.set(refund.id, refund)
  charge.amountRefunded += refundAmount
  charge.refunded = charge.amountRefunded === charge.amount
  current.stats.refunds++
  current.stats.refunded += refundAmount
  return { status: 201, body: refund, headers: {}, store: true }
}

const fingerprint = createFingerprinter()

/**
 * The provider's idempotency: the first call with a key runs and its answer is kept (whatever it was, except a 500
 * or a rejected request); the same key with the same body again gets that answer with Idempotent-Replayed: true;
 * with another body 422 idempotency_mismatch; while the first still runs 409 idempotency_in_progress.
 */
async function idempotent(
  req: IncomingMessage,
  path: string,
  call: Call,
  execute: (body: Record<string, unknown>) => Promise<Outcome>,
): Promise<Outcome> {
  const text = await readText(req)
  const header = req.headers['idempotency-key']
  const key = Array.isArray(header) ? header[0] : header
  if (!key || key.length > 255)
    throw new ApiError(
      400,
      'idempotency_key_required',
      'An Idempotency-Key header (1..255 characters) is required.',
    )
  call.log.idempotencyKey = redact(key)
  const body = parseJson(text)
  const claim = call.current.legacyKeys.claim(key, fingerprint(`POST ${path}`, body))
  if (claim.kind === 'mismatch')
    throw new ApiError(
      422,
      'idempotency_mismatch',
      'Keys for idempotent requests can only be used with the same parameters they were first used with.',
    )
  if (claim.kind === 'in_flight')
    throw new ApiError(
      409,
      'idempotency_in_progress',
      'A request with this Idempotency-Key is still being processed; retry later.',
    )
  if (claim.kind === 'replay') {
    call.current.stats.replays++
    call.log.replayed = true
    const stored = claim.response
    return { ...stored, headers: { ...stored.headers, 'idempotent-replayed': 'true' }, store: true }
  }
  try {
    const outcome = await execute(body)
    claim.settle(outcome)
    return outcome
  } catch (error) {
    claim.abandon()
    throw error
  }
}

async function readCharge(id: string, call: Call): Promise<StoredResponse> {
  await call.core.latency(call.signal)
  const charge = call.current.charges.get(id)
  if (!charge) throw new ApiError(404, 'resource_missing', `No such charge: '${redact(id)}'`)
  call.log.orderId = redact(charge.orderId)
  return { status: 200, body: { ...charge }, headers: {} }
}

async function summary(orderId: string, call: Call): Promise<StoredResponse> {
  call.log.orderId = redact(orderId)
  await call.core.latency(call.signal)
  return { status: 200, body: orderSummary(call.current, orderId), headers: {} }
}

/** The simulator's own API: its answer to one request, or a thrown ApiError (or AbortError when dropped). */
export async function legacyRoute(
  core: Core,
  req: IncomingMessage,
  path: string,
  log: RequestLog,
): Promise<StoredResponse> {
  const current = core.state()
  const call: Call = { core, current, signal: current.inFlight.signal, log }
  const method = req.method ?? 'GET'
  const ok = (status: number, body: unknown): StoredResponse => ({ status, body, headers: {} })
  const only = (allowed: string) => {
    if (method !== allowed)
      throw new ApiError(405, 'method_not_allowed', `${method} is not allowed on ${redact(path)}`)
  }
  const routes: Record<string, () => Promise<StoredResponse> | StoredResponse> = {
    '/health': () => ok(200, { status: 'ok' }),
    '/v1/stats': () => {
      only('GET')
      return ok(200, { ...current.stats })
    },
    '/v1/reset': () => {
      only('POST')
      core.reset()
      return ok(200, { reset: true })
    },
    '/v1/faults': async () => {
      if (method === 'GET') return ok(200, core.faults())
      only('POST')
      return ok(200, core.setFaults(parseFaults(await readJson(req))))
    },
    '/v1/tokens': async () => {
      only('POST')
      return createToken(await readJson(req), call)
    },
    '/v1/charges': () => {
      only('POST')
      return idempotent(req, path, call, (body) => createCharge(body, call))
    },
    '/v1/refunds': () => {
      only('POST')
      return idempotent(req, path, call, (body) => createRefund(body, call))
    },
  }
  const exact = Object.hasOwn(routes, path) ? routes[path] : undefined
  if (exact) return exact()
  const chargeMatch = /^\/v1\/charges\/([^/]+)$/.exec(path)
  if (chargeMatch) {
    only('GET')
    return readCharge(decodeURIComponent(chargeMatch[1]!), call)
  }
  const summaryMatch = /^\/v1\/orders\/([^/]+)\/summary$/.exec(path)
  if (summaryMatch) {
    only('GET')
    return summary(decodeURIComponent(summaryMatch[1]!), call)
  }
  throw new ApiError(404, 'not_found', `No route ${method} ${redact(path)}`)
}

/** The paths of the simulator's own API: requests to them are its, whatever their headers. */
export const isLegacyPath = (path: string): boolean =>
  /^\/(health|v1\/(stats|reset|faults|tokens|charges)|v1\/orders\/[^/]+\/summary)$/.test(path)
