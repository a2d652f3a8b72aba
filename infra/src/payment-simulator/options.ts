// The simulator's settings: what createPaymentSimulator takes, and how main.ts reads them from the environment.

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
  /** the share (0..1) of charges and refunds that answer 500 provider_error, drawn from the seeded PRNG */
  failureRate?: number
  /**
   * how refunds answer from the start and after each reset, until told otherwise (POST /v1/faults, setFaults);
   * 'succeed' by default
   */
  refunds?: RefundBehavior
  /** the seed of latency and failure draws; reset() starts the sequences again. 1 by default */
  seed?: number
  /** receives one JSON line per request (never a card number); nothing is logged without it */
  log?: (line: string) => void
}

export const defaultPort = 3099
export const defaultHost = '127.0.0.1'
export const defaultDelayMs = 2000
export const defaultHangMs = 8000

function parseNumber(name: string, raw: string, check: (value: number) => boolean, expected: string): number {
  const value = Number(raw)
  if (raw.trim() === '' || !Number.isFinite(value) || !check(value))
    throw new Error(`${name} must be ${expected} (got '${raw}')`)
  return value
}

const nonNegativeInteger = (value: number) => Number.isInteger(value) && value >= 0

/** Checks options given in code, with the same rules as the environment's. */
export function validateOptions(options: PaymentSimulatorOptions): void {
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
 * The settings of the environment: PORT, HOST, PAYMENT_SIM_DELAY_MS, PAYMENT_SIM_HANG_MS,
 * PAYMENT_SIM_LATENCY_MS ('50-200', or '100' for a fixed latency), PAYMENT_SIM_FAILURE_RATE (0..1), PAYMENT_SIM_SEED,
 * PAYMENT_SIM_REFUNDS (succeed, decline or fail).
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
  validateOptions(options)
  return options
}
