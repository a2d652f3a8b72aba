// The charge reconciler's clock: every `intervalMs` a round settles the charges whose outcome was left unknown
// (domain/reconciler.ts). Started when the app is ready, stopped before it closes (a running round finishes first).
// Several payment processes may run it: each order is reconciled under its advisory lock, which the others skip.
import type { FastifyInstance } from 'fastify'
import type { ChargeReconciler } from '../domain/reconciler.ts'

export interface ChargeReconciliationOptions {
  reconciler: Pick<ChargeReconciler, 'reconcile'>
  intervalMs: number
}

/** Adds the clock to `app`: its onReady hook starts it, its onClose hook stops it. */
export function scheduleChargeReconciliation(
  app: FastifyInstance,
  { reconciler, intervalMs }: ChargeReconciliationOptions,
): void {
  let timer: NodeJS.Timeout | undefined
  let round: Promise<void> = Promise.resolve()
  let stopped = false

  const tick = () => {
    round = reconciler
      .reconcile()
      .then((results) => {
        if (results.length > 0) app.log.debug({ attempts: results.length }, 'charge reconciliation round')
      })
      .catch((error: unknown) =>
        app.log.warn({ err: error }, 'charge reconciliation: a round failed; the next one retries'),
      )
      .finally(() => {
        if (!stopped) timer = setTimeout(tick, intervalMs)
      })
  }

  app.addHook('onReady', async () => {
    timer = setTimeout(tick, intervalMs)
  })
  app.addHook('onClose', async () => {
    stopped = true
    clearTimeout(timer)
    await round
  })
}
