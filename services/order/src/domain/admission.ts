// Back-pressure on new orders (ORDER_ADMISSION_TARGET_MS): when orders arrive faster than the system ships them, the
// sagas in flight pile up and every order waits longer — at a rate the machine cannot carry, 30 s and growing. Instead
// the order service admits only as many orders in flight as the recent shipping rate carries in the target time
// (Little's law: in flight = rate × time), at least a minimum for a burst on a quiet system, and answers the others
// 503 SERVICE_UNAVAILABLE with Retry-After at once, before anything is priced or written: a client retries, under
// its Idempotency-Key, once the queue has room. Replays of an order placed before are never refused.
import { AppError, ErrorCode, loadShedHeader } from '@meridian/contracts'
import type { SagaLoad } from '../data/saga-load.ts'

export interface AdmissionSettings {
  /** how long an order may take from placed to shipped when the system is busy, ms */
  targetMs: number
  /** the fewest orders in flight admitted, whatever the rate */
  minInFlight: number
  /** the window the shipping rate is measured over, ms */
  windowMs: number
}

/** Seconds a refused client is told to wait: the queue drains in about the target time. */
export const admissionRetryAfterSeconds = 1

/** The orders in flight admitted: what the recent shipping rate carries in the target time, at least the minimum. */
export function admissionLimit(load: SagaLoad, settings: AdmissionSettings): number {
  const shippedPerSecond = load.shippedInWindow / (settings.windowMs / 1000)
  return Math.max(settings.minInFlight, Math.ceil((shippedPerSecond * settings.targetMs) / 1000))
}

export interface Admission {
  /** Throws 503 with Retry-After when the orders in flight reached the limit; else counts one more admitted. */
  admit(): void
  /** Reads the load again (the admission round); what it found and the limit it gives. */
  refresh(): Promise<SagaLoad & { limit: number }>
}

export function createAdmission(
  settings: AdmissionSettings,
  readLoad: () => Promise<SagaLoad>,
  onRefused: () => void = () => undefined,
): Admission {
  let load: SagaLoad = { inFlight: 0, shippedInWindow: 0 }
  // admitted since the load was read: in flight too, though the last reading could not count them
  let admittedSince = 0
  return {
    admit() {
      if (load.inFlight + admittedSince < admissionLimit(load, settings)) {
        admittedSince += 1
        return
      }
      onRefused()
      // marked as shed on purpose: a proxy counts no failure against this instance (it is well)
      throw new AppError(503, ErrorCode.SERVICE_UNAVAILABLE, {
        message: 'Orders are arriving faster than they can be fulfilled: try again shortly',
        retryAfter: admissionRetryAfterSeconds,
        headers: { [loadShedHeader]: 'orders' },
      })
    },
    async refresh() {
      const read = await readLoad()
      load = read
      admittedSince = 0
      return { ...read, limit: admissionLimit(read, settings) }
    },
  }
}
