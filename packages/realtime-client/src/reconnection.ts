// The reconnection policies of the spec (Limits: real-time client reconnection) and the Manager options they become.
import type { ManagerOptions } from 'socket.io-client'

/** How the shared connection retries after losing its transport. */
export interface ReconnectionPolicy {
  /** Attempts before giving up (`reconnect_failed`); `Infinity` never gives up. */
  attempts: number
  /** Delay before the first attempt, in ms. */
  initialDelayMs: number
  /** Ceiling of the exponential delay, in ms. */
  maxDelayMs: number
  /** Jitter: each delay is scaled by a random factor in [1 - factor, 1 + factor]. */
  randomizationFactor: number
}

/** The spec's two policies: 10 attempts up to 5 s apart, or unlimited attempts up to 30 s apart. */
export const reconnectionPolicies = {
  default: { attempts: 10, initialDelayMs: 1000, maxDelayMs: 5000, randomizationFactor: 0.5 },
  persistent: {
    attempts: Number.POSITIVE_INFINITY,
    initialDelayMs: 1000,
    maxDelayMs: 30_000,
    randomizationFactor: 0.5,
  },
} as const satisfies Record<string, ReconnectionPolicy>

/** A named policy, a custom one, or `false` for no automatic reconnection. */
export type ReconnectionSetting = keyof typeof reconnectionPolicies | ReconnectionPolicy | false

/** The socket.io-client Manager options that implement a reconnection setting. */
export function reconnectionManagerOptions(
  setting: ReconnectionSetting,
): Pick<
  ManagerOptions,
  | 'reconnection'
  | 'reconnectionAttempts'
  | 'reconnectionDelay'
  | 'reconnectionDelayMax'
  | 'randomizationFactor'
> {
  const policy = setting === false ? reconnectionPolicies.default : resolvePolicy(setting)
  return {
    reconnection: setting !== false,
    reconnectionAttempts: policy.attempts,
    reconnectionDelay: policy.initialDelayMs,
    reconnectionDelayMax: policy.maxDelayMs,
    randomizationFactor: policy.randomizationFactor,
  }
}

function resolvePolicy(setting: Exclude<ReconnectionSetting, false>): ReconnectionPolicy {
  return typeof setting === 'string' ? reconnectionPolicies[setting] : setting
}

/**
 * The spec's delay before reconnection attempt `attempt` (0 for the first retry):
 * `min(initial * 2^attempt, max) * (1 ± factor)`, the sign and size of the jitter drawn from `random` in [0, 1).
 * socket.io-client computes its own delays from the same parameters (its jitter is applied before the cap, so its
 * delays never exceed `max`); this function documents the schedule and serves tests.
 */
export function reconnectDelay(
  attempt: number,
  { initial, max, factor }: { initial: number; max: number; factor: number },
  random: () => number = Math.random,
): number {
  if (!Number.isInteger(attempt) || attempt < 0)
    throw new RangeError(`attempt must be an integer >= 0: ${attempt}`)
  if (factor < 0 || factor > 1) throw new RangeError(`factor must be within [0, 1]: ${factor}`)
  const base = Math.min(initial * 2 ** attempt, max)
  return base * (1 + factor * (2 * random() - 1))
}
