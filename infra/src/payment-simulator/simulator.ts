// The payment provider simulator: a small Stripe-like JSON API over node:http (tokens, charges, refunds, an order's
// summary), with the provider's own idempotency (Idempotency-Key), test cards that decline, rate-limit, fail, delay
// or hang (cards.ts), seeded latency and failure injection for fault runs, and refunds that decline or fail until told
// otherwise (its faults). State lives in memory only. See README.md for the API and the rules.
import { createHmac, randomBytes } from 'node:crypto'
import { once } from 'node:events'
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { setTimeout as sleep } from 'node:timers/promises'
import { type CardBehavior, type CardBrand, cardDigits, summarizeCard } from './cards.ts'
import {
  defaultDelayMs,
  defaultHangMs,
  defaultHost,
  defaultPort,
  isRefundBehavior,
  type PaymentSimulatorOptions,
  type RefundBehavior,
  refundBehaviors,
  validateOptions,
} from './options.ts'
import { mulberry32, type Random } from './random.ts'

export interface SimulatorStats {
  /** every request answered or abandoned, stats and reset included */
  requests: number
  tokens: number
  /** charges that succeeded */
  charges: number
  /** charge attempts that failed (402, 429, 500): never counted as charged */
  failedCharges: number
  refunds: number
  /** refunds the provider declined (402 refund_declined, while its refunds are set to decline): never refunded */
  declinedRefunds: number
  /** minor units charged by succeeded charges */
  charged: number
  /** minor units refunded */
  refunded: number
  /** answers replayed from the idempotency store */
  replays: number
  /** 500 provider_error answers of charges and refunds (the provider-error card and the failure rate) */
  providerErrors: number
}

export interface OrderSummary {
  orderId: string
  charges: number
  failedCharges: number
  refunds: number
  charged: number
  refunded: number
}

/** What the simulator is told to get wrong, until told otherwise (POST /v1/faults, setFaults); reset() restores it. */
export interface SimulatorFaults {
  /** how every refund answers: succeed (as asked), decline (402 refund_declined) or fail (500 provider_error) */
  refunds: RefundBehavior
}

export interface PaymentSimulator {
  url: string
  port: number
  close(): Promise<void>
  stats(): SimulatorStats
  /** the faults in force */
  faults(): SimulatorFaults
  /** changes the faults in force (as POST /v1/faults does); answers them */
  setFaults(changes: Partial<SimulatorFaults>): SimulatorFaults
  /** forgets every token, charge, refund and idempotency key, starts the seeded sequences again, drops calls in flight */
  reset(): void
}

interface Token {
  id: string
  brand: CardBrand
  last4: string
  behavior: CardBehavior
  expMonth: number
  expYear: number
}

interface Charge {
  id: string
  object: 'charge'
  status: 'succeeded' | 'failed'
  amount: number
  currency: string
  orderId: string
  description: string | null
  brand: CardBrand
  last4: string
  amountRefunded: number
  refunded: boolean
  failureCode: string | null
  created: string
}

interface Refund {
  id: string
  object: 'refund'
  charge: string
  amount: number
  status: 'succeeded'
  created: string
}

interface StoredResponse {
  status: number
  body: unknown
  headers: Record<string, string>
}

/** response undefined: the first call with the key is still running */
interface IdempotencyRecord {
  fingerprint: string
  response?: StoredResponse
}

interface State {
  tokens: Map<string, Token>
  charges: Map<string, Charge>
  refunds: Map<string, Refund>
  idempotency: Map<string, IdempotencyRecord>
  stats: SimulatorStats
}

/** What one request's log line says: never a card number nor a body. */
interface RequestLog {
  idempotencyKey?: string
  replayed?: boolean
  orderId?: string
  charge?: string
  brand?: CardBrand
  last4?: string
  code?: string
}

interface Outcome extends StoredResponse {
  /** false: the answer is not kept for the key (validation errors and 500s), a retry with it runs again */
  store: boolean
}

class ApiError extends Error {
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

const maxBodyBytes = 64 * 1024
const maxAmount = 99_999_999

const newId = (prefix: string) => `${prefix}_${randomBytes(12).toString('hex')}`

const emptyStats = (): SimulatorStats => ({
  requests: 0,
  tokens: 0,
  charges: 0,
  failedCharges: 0,
  refunds: 0,
  declinedRefunds: 0,
  charged: 0,
  refunded: 0,
  replays: 0,
  providerErrors: 0,
})

const newState = (): State => ({
  tokens: new Map(),
  charges: new Map(),
  refunds: new Map(),
  idempotency: new Map(),
  stats: emptyStats(),
})

/** JSON with the keys of every object sorted: the same body in another key order is the same request. */
function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`
  if (value !== null && typeof value === 'object')
    return `{${Object.keys(value)
      .sort()
      .map((key) => `${JSON.stringify(key)}:${canonicalJson((value as Record<string, unknown>)[key])}`)
      .join(',')}}`
  return JSON.stringify(value)
}

/** Client text echoed in a message or a log line, without any card-like run of digits it may hold. */
const redact = (text: string) => text.replace(/\d{12,19}/g, '[redacted]')

const isObject = (value: unknown): value is Record<string, unknown> =>
  value !== null && typeof value === 'object' && !Array.isArray(value)

const invalid = (message: string) => new ApiError(400, 'invalid_request', message)

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = []
    let size = 0
    req.on('data', (chunk: Buffer) => {
      size += chunk.length
      if (size > maxBodyBytes) {
        reject(new ApiError(413, 'body_too_large', `the body is larger than ${maxBodyBytes} bytes`))
        req.resume()
        return
      }
      chunks.push(chunk)
    })
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')))
    req.on('error', reject)
  })
}

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

/** A card object of a request, checked: its summary (brand, last4, behaviour) and expiry, never its number. */
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

function isAbort(error: unknown): boolean {
  return error instanceof Error && error.name === 'AbortError'
}

export async function createPaymentSimulator(
  options: PaymentSimulatorOptions = {},
): Promise<PaymentSimulator> {
  validateOptions(options)
  const host = options.host ?? defaultHost
  const delayMs = options.delayMs ?? defaultDelayMs
  const hangMs = options.hangMs ?? defaultHangMs
  const failureRate = options.failureRate ?? 0
  const seed = options.seed ?? 1
  const fingerprintSecret = randomBytes(32)

  let state = newState()
  const initialFaults = (): SimulatorFaults => ({ refunds: options.refunds ?? 'succeed' })
  let faults = initialFaults()
  let inFlight = new AbortController()
  // two sequences, so that how many calls had latency never changes which charge fails
  let latencyRandom: Random = mulberry32(seed)
  let failureRandom: Random = mulberry32(seed ^ 0x5bd1e995)

  const fingerprint = (path: string, body: unknown) =>
    createHmac('sha256', fingerprintSecret)
      .update(`POST ${path}\n${canonicalJson(body)}`)
      .digest('hex')

  const wait = (ms: number, signal: AbortSignal) =>
    ms > 0 ? sleep(ms, undefined, { signal }) : Promise.resolve()

  async function latency(signal: AbortSignal): Promise<void> {
    const range = options.latencyMs
    if (!range) return
    await wait(range.min + Math.floor(latencyRandom() * (range.max - range.min + 1)), signal)
  }

  /** one draw per charge or refund attempt; true: this one answers 500 */
  const injectedFailure = () => failureRandom() < failureRate

  function publicCharge(charge: Charge) {
    return { ...charge }
  }

  function providerError(current: State): ApiError {
    current.stats.providerErrors++
    return new ApiError(
      500,
      'provider_error',
      'An error occurred with our connection to the payment provider.',
    )
  }

  async function createToken(
    body: Record<string, unknown>,
    log: RequestLog,
    current: State,
    signal: AbortSignal,
  ): Promise<StoredResponse> {
    const card = parseCard(body.card, new Date())
    await latency(signal)
    const token: Token = { id: newId('tok'), ...card }
    current.tokens.set(token.id, token)
    current.stats.tokens++
    log.brand = token.brand
    log.last4 = token.last4
    return { status: 201, body: { token: token.id, brand: token.brand, last4: token.last4 }, headers: {} }
  }

  async function createCharge(
    body: Record<string, unknown>,
    log: RequestLog,
    current: State,
    signal: AbortSignal,
  ): Promise<Outcome> {
    const { amount, currency, source, orderId, description } = body
    if (typeof amount !== 'number' || !Number.isInteger(amount) || amount < 1 || amount > maxAmount)
      throw invalid(`amount must be an integer number of minor units, 1..${maxAmount}`)
    if (currency !== 'usd') throw invalid("currency must be 'usd'")
    if (typeof orderId !== 'string' || orderId === '' || orderId.length > 200)
      throw invalid('orderId must be a non-empty string')
    if (description !== undefined && description !== null && typeof description !== 'string')
      throw invalid('description must be a string')
    log.orderId = redact(orderId)
    let card: Omit<Token, 'id'>
    if (typeof source === 'string') {
      const token = current.tokens.get(source)
      if (!token) throw new ApiError(404, 'resource_missing', `No such token: '${redact(source)}'`)
      card = token
    } else if (isObject(source)) card = parseCard(source.card, new Date())
    else throw invalid("source must be a token ('tok_…') or {card: {number, expMonth, expYear, cvc}}")
    log.brand = card.brand
    log.last4 = card.last4

    await latency(signal)
    const charge: Charge = {
      id: newId('ch'),
      object: 'charge',
      status: 'succeeded',
      amount,
      currency,
      orderId,
      description: typeof description === 'string' ? description : null,
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
    if (injectedFailure()) return fail(providerError(current), false, false)
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
        await wait(delayMs, signal)
        break
      case 'hang':
        await wait(hangMs, signal)
        break
      case 'succeed':
        break
    }
    current.charges.set(charge.id, charge)
    current.stats.charges++
    current.stats.charged += amount
    log.charge = charge.id
    return { status: 201, body: publicCharge(charge), headers: {}, store: true }
  }

  async function createRefund(
    body: Record<string, unknown>,
    log: RequestLog,
    current: State,
    signal: AbortSignal,
  ): Promise<Outcome> {
    const { charge: chargeId, amount } = body
    if (typeof chargeId !== 'string' || chargeId === '') throw invalid("charge must be a charge id ('ch_…')")
    if (
      amount !== undefined &&
      (typeof amount !== 'number' || !Number.isInteger(amount) || amount < 1 || amount > maxAmount)
    )
      throw invalid('amount must be a positive integer number of minor units')
    log.charge = redact(chargeId)
    await latency(signal)
    // the draw is made whatever the faults, so that setting them never shifts the seeded sequence
    if (injectedFailure() || faults.refunds === 'fail') return providerError(current).outcome(false)
    // checked after the latency, right before the change: two refunds in flight never refund more than the charge
    const charge = current.charges.get(chargeId)
    if (!charge) throw new ApiError(404, 'resource_missing', `No such charge: '${redact(chargeId)}'`)
    log.orderId = redact(charge.orderId)
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
    const refundAmount = typeof amount === 'number' ? amount : remaining
    if (refundAmount > remaining)
      throw new ApiError(
        422,
        'amount_too_large',
        `Refund amount (${refundAmount}) is greater than the unrefunded amount of the charge (${remaining}).`,
        { remaining },
      )
    // thrown, so not kept for the key: the same refund asked again once refunds succeed is made then
    if (faults.refunds === 'decline') {
      current.stats.declinedRefunds++
      throw new ApiError(402, 'refund_declined', 'The refund was declined by the payment provider.')
    }
    const refund: Refund = {
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

  function orderSummary(current: State, orderId: string): OrderSummary {
    const charges = [...current.charges.values()].filter((charge) => charge.orderId === orderId)
    const succeeded = charges.filter((charge) => charge.status === 'succeeded')
    const ids = new Set(charges.map((charge) => charge.id))
    const refunds = [...current.refunds.values()].filter((refund) => ids.has(refund.charge))
    return {
      orderId,
      charges: succeeded.length,
      failedCharges: charges.length - succeeded.length,
      refunds: refunds.length,
      charged: succeeded.reduce((sum, charge) => sum + charge.amount, 0),
      refunded: refunds.reduce((sum, refund) => sum + refund.amount, 0),
    }
  }

  /**
   * The provider's idempotency: the first call with a key runs and its answer is kept (whatever it was, except a 500
   * or a rejected request); the same key with the same body again gets that answer with Idempotent-Replayed: true;
   * with another body 422 idempotency_mismatch; while the first still runs 409 idempotency_in_progress.
   */
  async function idempotent(
    req: IncomingMessage,
    path: string,
    log: RequestLog,
    current: State,
    execute: (body: Record<string, unknown>) => Promise<Outcome>,
  ): Promise<Outcome> {
    const text = await readBody(req)
    const header = req.headers['idempotency-key']
    const key = Array.isArray(header) ? header[0] : header
    if (!key || key.length > 255)
      throw new ApiError(
        400,
        'idempotency_key_required',
        'An Idempotency-Key header (1..255 characters) is required.',
      )
    log.idempotencyKey = redact(key)
    const body = parseJson(text)
    const print = fingerprint(path, body)
    const existing = current.idempotency.get(key)
    if (existing) {
      if (existing.fingerprint !== print)
        throw new ApiError(
          422,
          'idempotency_mismatch',
          'Keys for idempotent requests can only be used with the same parameters they were first used with.',
        )
      if (!existing.response)
        throw new ApiError(
          409,
          'idempotency_in_progress',
          'A request with this Idempotency-Key is still being processed; retry later.',
        )
      current.stats.replays++
      log.replayed = true
      const stored = existing.response
      return {
        status: stored.status,
        body: stored.body,
        headers: { ...stored.headers, 'idempotent-replayed': 'true' },
        store: true,
      }
    }
    const record: IdempotencyRecord = { fingerprint: print }
    current.idempotency.set(key, record)
    let outcome: Outcome
    try {
      outcome = await execute(body)
    } catch (error) {
      if (current.idempotency.get(key) === record) current.idempotency.delete(key)
      throw error
    }
    if (outcome.store)
      record.response = { status: outcome.status, body: outcome.body, headers: outcome.headers }
    else if (current.idempotency.get(key) === record) current.idempotency.delete(key)
    return outcome
  }

  async function route(req: IncomingMessage, path: string, log: RequestLog): Promise<StoredResponse> {
    const current = state
    const signal = inFlight.signal
    const method = req.method ?? 'GET'
    const ok = (status: number, body: unknown): StoredResponse => ({ status, body, headers: {} })
    const notAllowed = () =>
      new ApiError(405, 'method_not_allowed', `${method} is not allowed on ${redact(path)}`)

    if (path === '/health') return ok(200, { status: 'ok' })
    if (path === '/v1/stats') {
      if (method !== 'GET') throw notAllowed()
      return ok(200, { ...current.stats })
    }
    if (path === '/v1/reset') {
      if (method !== 'POST') throw notAllowed()
      reset()
      return ok(200, { reset: true })
    }
    if (path === '/v1/faults') {
      if (method === 'GET') return ok(200, { ...faults })
      if (method !== 'POST') throw notAllowed()
      return ok(200, setFaults(parseFaults(parseJson(await readBody(req)))))
    }
    if (path === '/v1/tokens') {
      if (method !== 'POST') throw notAllowed()
      return createToken(parseJson(await readBody(req)), log, current, signal)
    }
    if (path === '/v1/charges') {
      if (method !== 'POST') throw notAllowed()
      return idempotent(req, path, log, current, (body) => createCharge(body, log, current, signal))
    }
    if (path === '/v1/refunds') {
      if (method !== 'POST') throw notAllowed()
      return idempotent(req, path, log, current, (body) => createRefund(body, log, current, signal))
    }
    const chargeMatch = /^\/v1\/charges\/([^/]+)$/.exec(path)
    if (chargeMatch) {
      if (method !== 'GET') throw notAllowed()
      const id = decodeURIComponent(chargeMatch[1]!)
      await latency(signal)
      const charge = current.charges.get(id)
      if (!charge) throw new ApiError(404, 'resource_missing', `No such charge: '${redact(id)}'`)
      log.orderId = redact(charge.orderId)
      return ok(200, publicCharge(charge))
    }
    const summaryMatch = /^\/v1\/orders\/([^/]+)\/summary$/.exec(path)
    if (summaryMatch) {
      if (method !== 'GET') throw notAllowed()
      const orderId = decodeURIComponent(summaryMatch[1]!)
      log.orderId = redact(orderId)
      await latency(signal)
      return ok(200, orderSummary(current, orderId))
    }
    throw new ApiError(404, 'not_found', `No route ${method} ${redact(path)}`)
  }

  function send(res: ServerResponse, response: StoredResponse): void {
    if (res.headersSent || res.destroyed) return
    const text = JSON.stringify(response.body)
    res.writeHead(response.status, {
      ...response.headers,
      'content-type': 'application/json; charset=utf-8',
      'content-length': Buffer.byteLength(text),
    })
    res.end(text)
  }

  const server = createServer((req, res) => {
    const started = performance.now()
    const path = new URL(req.url ?? '/', 'http://simulator').pathname
    const log: RequestLog = {}
    state.stats.requests++
    res.on('close', () => {
      if (!options.log) return
      const line = {
        time: new Date().toISOString(),
        method: req.method,
        path: redact(path),
        status: res.writableFinished ? res.statusCode : 0,
        durationMs: Math.round(performance.now() - started),
        ...(res.writableFinished ? {} : { aborted: true }),
        ...log,
      }
      options.log(JSON.stringify(line))
    })
    // tokenization is what a shop's browser page calls itself (the card never touches the shop's servers), as a
    // provider's tokenization endpoint allows from any page: no credentials, only a card in, a token out
    if (path === '/v1/tokens') {
      res.setHeader('access-control-allow-origin', '*')
      if (req.method === 'OPTIONS') {
        res.writeHead(204, {
          'access-control-allow-methods': 'POST',
          'access-control-allow-headers': 'content-type',
          'access-control-max-age': '600',
        })
        res.end()
        return
      }
    }
    route(req, path, log).then(
      (response) => {
        const error =
          isObject(response.body) && isObject(response.body.error) ? response.body.error : undefined
        if (typeof error?.code === 'string') log.code = error.code
        send(res, response)
      },
      (error: unknown) => {
        if (error instanceof ApiError) {
          log.code = error.code
          send(res, error.outcome(false))
        } else if (isAbort(error)) res.destroy()
        else {
          log.code = 'internal_error'
          send(res, {
            status: 500,
            body: { error: { code: 'internal_error', message: String(error) } },
            headers: {},
          })
        }
      },
    )
  })

  function setFaults(changes: Partial<SimulatorFaults>): SimulatorFaults {
    if (changes.refunds !== undefined) {
      if (!isRefundBehavior(changes.refunds))
        throw new Error(
          `refunds must be one of ${refundBehaviors.join(', ')} (got ${String(changes.refunds)})`,
        )
      faults = { ...faults, refunds: changes.refunds }
    }
    return { ...faults }
  }

  function reset(): void {
    inFlight.abort()
    inFlight = new AbortController()
    state = newState()
    faults = initialFaults()
    latencyRandom = mulberry32(seed)
    failureRandom = mulberry32(seed ^ 0x5bd1e995)
  }

  server.listen(options.port ?? defaultPort, host)
  await once(server, 'listening') // rejects with the 'error' of a port already taken
  const port = (server.address() as AddressInfo).port
  return {
    url: `http://${host.includes(':') ? `[${host}]` : host}:${port}`,
    port,
    stats: () => ({ ...state.stats }),
    faults: () => ({ ...faults }),
    setFaults,
    reset,
    async close() {
      inFlight.abort()
      const closed = new Promise<void>((resolve, reject) =>
        server.close((error) => (error ? reject(error) : resolve())),
      )
      server.closeAllConnections()
      await closed
    },
  }
}
