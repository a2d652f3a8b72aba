// The running parts the Stripe subset and the simulator's own endpoints share: the settings as resolved, the current
// state (replaced whole by reset), the faults in force, the seeded latency and failure draws, and the waits that reset
// and close cut short. One per simulator.
import { setTimeout as sleep } from 'node:timers/promises'
import {
  defaultDelayMs,
  defaultHangMs,
  defaultIdempotencyTtlMs,
  defaultWebhookRetryDelaysMs,
  defaultWebhookTimeoutMs,
  isRefundBehavior,
  type LatencyRange,
  type PaymentSimulatorOptions,
  type RefundBehavior,
  refundBehaviors,
  type WebhookTarget,
} from './options.ts'
import { mulberry32, type Random } from './random.ts'
import { newState, type State } from './state.ts'

/** What the simulator is told to get wrong, until told otherwise (POST /v1/faults, setFaults); reset() restores it. */
export interface SimulatorFaults {
  /** how every refund answers: succeed (as asked), decline or fail (500) */
  refunds: RefundBehavior
}

/** What one request's log line says: never a card number, a key, a secret nor a body. */
export interface RequestLog {
  idempotencyKey?: string
  replayed?: boolean
  orderId?: string
  charge?: string
  paymentIntent?: string
  requestId?: string
  brand?: string
  last4?: string
  code?: string
}

export interface Settings {
  delayMs: number
  hangMs: number
  failureRate: number
  latencyMs: LatencyRange | undefined
  secretKey: string | undefined
  idempotencyTtlMs: number
  webhooks: readonly WebhookTarget[]
  webhookRetryDelaysMs: readonly number[]
  webhookTimeoutMs: number
  log: ((line: string) => void) | undefined
}

export interface Core {
  readonly settings: Settings
  /** the state now; a request keeps the one it started with, so a reset in between leaves the new one untouched */
  state(): State
  faults(): SimulatorFaults
  setFaults(changes: Partial<SimulatorFaults>): SimulatorFaults
  reset(): void
  /** the configured latency, drawn from its seeded sequence */
  latency(signal: AbortSignal): Promise<void>
  /** one draw per charge or refund attempt; true: this one answers 500 */
  injectedFailure(): boolean
  wait(ms: number, signal: AbortSignal): Promise<void>
}

export function resolveSettings(options: PaymentSimulatorOptions): Settings {
  return {
    delayMs: options.delayMs ?? defaultDelayMs,
    hangMs: options.hangMs ?? defaultHangMs,
    failureRate: options.failureRate ?? 0,
    latencyMs: options.latencyMs,
    secretKey: options.secretKey,
    idempotencyTtlMs: options.idempotencyTtlMs ?? defaultIdempotencyTtlMs,
    webhooks: (options.webhooks ?? []).map((target) => ({ ...target })),
    webhookRetryDelaysMs: [...(options.webhookRetryDelaysMs ?? defaultWebhookRetryDelaysMs)],
    webhookTimeoutMs: options.webhookTimeoutMs ?? defaultWebhookTimeoutMs,
    log: options.log,
  }
}

export function createCore(options: PaymentSimulatorOptions): Core {
  const settings = resolveSettings(options)
  const seed = options.seed ?? 1
  const initialFaults = (): SimulatorFaults => ({ refunds: options.refunds ?? 'succeed' })
  let state = newState(settings.idempotencyTtlMs)
  let faults = initialFaults()
  // two sequences, so that how many calls had latency never changes which charge fails
  let latencyRandom: Random = mulberry32(seed)
  let failureRandom: Random = mulberry32(seed ^ 0x5bd1e995)

  const wait = (ms: number, signal: AbortSignal) =>
    ms > 0 ? sleep(ms, undefined, { signal }) : Promise.resolve()

  return {
    settings,
    state: () => state,
    faults: () => ({ ...faults }),
    setFaults(changes) {
      if (changes.refunds !== undefined) {
        if (!isRefundBehavior(changes.refunds))
          throw new Error(
            `refunds must be one of ${refundBehaviors.join(', ')} (got ${String(changes.refunds)})`,
          )
        faults = { ...faults, refunds: changes.refunds }
      }
      return { ...faults }
    },
    reset() {
      state.inFlight.abort()
      state = newState(settings.idempotencyTtlMs)
      faults = initialFaults()
      latencyRandom = mulberry32(seed)
      failureRandom = mulberry32(seed ^ 0x5bd1e995)
    },
    async latency(signal) {
      const range = settings.latencyMs
      if (!range) return
      await wait(range.min + Math.floor(latencyRandom() * (range.max - range.min + 1)), signal)
    },
    injectedFailure: () => failureRandom() < settings.failureRate,
    wait,
  }
}
