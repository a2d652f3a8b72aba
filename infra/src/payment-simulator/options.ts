// The simulator's settings: what createPaymentSimulator takes, and how main.ts reads them from the environment.
// Checked once at start, so that a wrong setting stops the simulator naming it rather than misbehaving later.

export interface LatencyRange {
  min: number
  max: number
}

/**
 * How the provider answers refunds: as asked (`succeed`), declined (`decline`: 402 `refund_declined`, not kept for the
 * key, so the same key refunds once the setting is back to `succeed`), or failing (`fail`: 500 `provider_error`).
 */
export const refundBehaviors = ['succeed', 'decline', 'fail'] as const
export type RefundBehavior = (typeof refundBehaviors)[number]

export const isRefundBehavior = (value: unknown): value is RefundBehavior =>
  refundBehaviors.includes(value as RefundBehavior)

/** Where the Stripe subset POSTs its events, and the secret (whsec_…) that signs them. */
export interface WebhookTarget {
  url: string
  secret: string
}

export interface PaymentSimulatorOptions {
  /** 3099 by default; 0 lets the kernel pick one (tests) */
  port?: number
  /** 127.0.0.1 by default */
  host?: string
  /** how long the delay card (4000000000000077) takes before it succeeds; 2000 ms by default, keep it under 5 s */
  delayMs?: number
  /** how long the hang card (4000000000000259) takes before it answers; 8000 ms by default */
  hangMs?: number
  /** an added latency for every /v1 call (not stats or reset), drawn from the seeded PRNG */
  latencyMs?: LatencyRange
  /** the share (0..1) of payment attempts and refunds that answer 500 api_error, drawn from the seeded PRNG */
  failureRate?: number
  /**
   * how refunds answer from the start and after each reset, until told otherwise (POST /v1/faults, setFaults);
   * 'succeed' by default
   */
  refunds?: RefundBehavior
  /** the seed of latency and failure draws; reset() starts the sequences again. 1 by default */
  seed?: number
  /** receives one JSON line per request and per webhook delivery (never a card number nor a key) */
  log?: (line: string) => void
  /** the one secret key the Stripe subset accepts; any `sk_test_…` when unset */
  secretKey?: string
  /** how long the Stripe subset keeps an Idempotency-Key's answer; 24 h by default */
  idempotencyTtlMs?: number
  /** endpoints that receive every event of the Stripe subset, signed with their secret */
  webhooks?: WebhookTarget[]
  /** the waits before each retry of a webhook delivery; [1000, 5000, 30000, 120000, 600000] by default */
  webhookRetryDelaysMs?: number[]
  /** how long a webhook delivery waits for an answer before it counts as failed; 10000 ms by default */
  webhookTimeoutMs?: number
  /** the simulator's address as a browser reaches it (the 3-D Secure page's links); its own url by default */
  publicUrl?: string
}

export const defaultPort = 3099
export const defaultHost = '127.0.0.1'
export const defaultDelayMs = 2000
export const defaultHangMs = 8000
export const defaultIdempotencyTtlMs = 24 * 60 * 60 * 1000
export const defaultWebhookRetryDelaysMs: readonly number[] = [1000, 5000, 30000, 120000, 600000]
export const defaultWebhookTimeoutMs = 10_000

function parseNumber(name: string, raw: string, check: (value: number) => boolean, expected: string): number {
  const value = Number(raw)
  if (raw.trim() === '' || !Number.isFinite(value) || !check(value))
    throw new Error(`${name} must be ${expected} (got '${raw}')`)
  return value
}

const nonNegativeInteger = (value: number) => Number.isInteger(value) && value >= 0

const isHttpUrl = (text: string) => {
  try {
    return ['http:', 'https:'].includes(new URL(text).protocol)
  } catch {
    return false
  }
}

/** The Stripe subset's settings, checked. */
function validateStripeOptions(options: PaymentSimulatorOptions): void {
  const { secretKey, idempotencyTtlMs, webhooks, webhookRetryDelaysMs, webhookTimeoutMs, publicUrl } = options
  if (secretKey !== undefined && !/^sk_test_\w+$/.test(secretKey))
    throw new Error('secretKey must be a test secret key, sk_test_ and letters or digits')
  if (idempotencyTtlMs !== undefined && !(nonNegativeInteger(idempotencyTtlMs) && idempotencyTtlMs > 0))
    throw new Error(`idempotencyTtlMs must be a positive integer (got ${idempotencyTtlMs})`)
  for (const target of webhooks ?? []) {
    if (!isHttpUrl(target.url)) throw new Error('webhooks: each url must be an http(s) URL')
    if (typeof target.secret !== 'string' || target.secret === '')
      throw new Error('webhooks: each endpoint needs a secret (whsec_…)')
  }
  if (
    webhookRetryDelaysMs !== undefined &&
    (webhookRetryDelaysMs.length > 20 || !webhookRetryDelaysMs.every(nonNegativeInteger))
  )
    throw new Error('webhookRetryDelaysMs must be at most 20 non-negative integers')
  if (webhookTimeoutMs !== undefined && !(nonNegativeInteger(webhookTimeoutMs) && webhookTimeoutMs > 0))
    throw new Error(`webhookTimeoutMs must be a positive integer (got ${webhookTimeoutMs})`)
  if (publicUrl !== undefined && !isHttpUrl(publicUrl)) throw new Error('publicUrl must be an http(s) URL')
}

/** Checks options given in code, with the same rules as the environment's. */
export function validateOptions(options: PaymentSimulatorOptions): void {
  validateStripeOptions(options)
  const { delayMs, hangMs, latencyMs, failureRate, seed, port, refunds } = options
  if (port !== undefined && (!nonNegativeInteger(port) || port > 65535))
    throw new Error(`port must be an integer 0..65535 (got ${port})`)
  if (delayMs !== undefined && !nonNegativeInteger(delayMs))
    throw new Error(`delayMs must be a non-negative integer (got ${delayMs})`)
  if (hangMs !== undefined && !nonNegativeInteger(hangMs))
    throw new Error(`hangMs must be a non-negative integer (got ${hangMs})`)
  if (
    latencyMs !== undefined &&
    (!nonNegativeInteger(latencyMs.min) ||
      !nonNegativeInteger(latencyMs.max) ||
      latencyMs.min > latencyMs.max)
  )
    throw new Error(
      `latencyMs must be {min, max}, integers with 0 <= min <= max (got ${JSON.stringify(latencyMs)})`,
    )
  if (failureRate !== undefined && !(failureRate >= 0 && failureRate <= 1))
    throw new Error(`failureRate must be between 0 and 1 (got ${failureRate})`)
  if (seed !== undefined && !Number.isInteger(seed)) throw new Error(`seed must be an integer (got ${seed})`)
  if (refunds !== undefined && !isRefundBehavior(refunds))
    throw new Error(`refunds must be one of ${refundBehaviors.join(', ')} (got ${String(refunds)})`)
}

/**
 * The Stripe subset's settings of the environment: PAYMENT_SIM_SECRET_KEY, PAYMENT_SIM_IDEMPOTENCY_TTL_MS,
 * PAYMENT_SIM_WEBHOOK_URL with PAYMENT_SIM_WEBHOOK_SECRET (both or neither), PAYMENT_SIM_PUBLIC_URL.
 */
function stripeOptionsFromEnv(env: NodeJS.ProcessEnv, options: PaymentSimulatorOptions): void {
  const set = (name: string) => env[name] !== undefined && env[name] !== ''
  if (set('PAYMENT_SIM_SECRET_KEY')) options.secretKey = env.PAYMENT_SIM_SECRET_KEY!
  if (set('PAYMENT_SIM_IDEMPOTENCY_TTL_MS'))
    options.idempotencyTtlMs = parseNumber(
      'PAYMENT_SIM_IDEMPOTENCY_TTL_MS',
      env.PAYMENT_SIM_IDEMPOTENCY_TTL_MS!,
      (v) => nonNegativeInteger(v) && v > 0,
      'milliseconds',
    )
  if (set('PAYMENT_SIM_WEBHOOK_URL') !== set('PAYMENT_SIM_WEBHOOK_SECRET'))
    throw new Error('PAYMENT_SIM_WEBHOOK_URL and PAYMENT_SIM_WEBHOOK_SECRET go together: set both or neither')
  if (set('PAYMENT_SIM_WEBHOOK_URL'))
    options.webhooks = [{ url: env.PAYMENT_SIM_WEBHOOK_URL!, secret: env.PAYMENT_SIM_WEBHOOK_SECRET! }]
  if (set('PAYMENT_SIM_PUBLIC_URL')) options.publicUrl = env.PAYMENT_SIM_PUBLIC_URL!
}

/**
 * The settings of the environment: PORT, HOST, PAYMENT_SIM_DELAY_MS, PAYMENT_SIM_HANG_MS,
 * PAYMENT_SIM_LATENCY_MS ('50-200', or '100' for a fixed latency), PAYMENT_SIM_FAILURE_RATE (0..1), PAYMENT_SIM_SEED,
 * PAYMENT_SIM_REFUNDS (succeed, decline or fail), and the Stripe subset's (stripeOptionsFromEnv).
 */
export function optionsFromEnv(env: NodeJS.ProcessEnv = process.env): PaymentSimulatorOptions {
  const options: PaymentSimulatorOptions = { port: defaultPort, host: env.HOST || defaultHost }
  const set = (name: string) => env[name] !== undefined && env[name] !== ''
  if (set('PORT'))
    options.port = parseNumber('PORT', env.PORT!, (v) => nonNegativeInteger(v) && v <= 65535, 'a port number')
  if (set('PAYMENT_SIM_DELAY_MS'))
    options.delayMs = parseNumber(
      'PAYMENT_SIM_DELAY_MS',
      env.PAYMENT_SIM_DELAY_MS!,
      nonNegativeInteger,
      'milliseconds',
    )
  if (set('PAYMENT_SIM_HANG_MS'))
    options.hangMs = parseNumber(
      'PAYMENT_SIM_HANG_MS',
      env.PAYMENT_SIM_HANG_MS!,
      nonNegativeInteger,
      'milliseconds',
    )
  if (set('PAYMENT_SIM_LATENCY_MS')) {
    const raw = env.PAYMENT_SIM_LATENCY_MS!
    const parts = raw.split('-')
    const [min = '', max = min] = parts
    const expected = "milliseconds, 'min-max' or one value"
    if (parts.length > 2) throw new Error(`PAYMENT_SIM_LATENCY_MS must be ${expected} (got '${raw}')`)
    options.latencyMs = {
      min: parseNumber('PAYMENT_SIM_LATENCY_MS', min, nonNegativeInteger, expected),
      max: parseNumber('PAYMENT_SIM_LATENCY_MS', max, nonNegativeInteger, expected),
    }
  }
  if (set('PAYMENT_SIM_FAILURE_RATE'))
    options.failureRate = parseNumber(
      'PAYMENT_SIM_FAILURE_RATE',
      env.PAYMENT_SIM_FAILURE_RATE!,
      (v) => v >= 0 && v <= 1,
      'a number between 0 and 1',
    )
  if (set('PAYMENT_SIM_SEED'))
    options.seed = parseNumber('PAYMENT_SIM_SEED', env.PAYMENT_SIM_SEED!, Number.isInteger, 'an integer')
  if (set('PAYMENT_SIM_REFUNDS')) {
    const raw = env.PAYMENT_SIM_REFUNDS!
    if (!isRefundBehavior(raw))
      throw new Error(`PAYMENT_SIM_REFUNDS must be one of ${refundBehaviors.join(', ')} (got '${raw}')`)
    options.refunds = raw
  }
  stripeOptionsFromEnv(env, options)
  validateOptions(options)
  return options
}
