// Work a service does on a clock of its own (the saga's deadlines, the payment reconciler's rounds): one round every
// `intervalMs`, never two at once, started when the app is ready and stopped before it closes (a round in progress
// finishes first). A failed round is logged and the next one runs as planned. Several instances may run the same
// rounds: the work must take its own row or advisory locks.
import type { FastifyInstance } from 'fastify'

export interface RoundsOptions<Result> {
  /** what the rounds do, in the log lines */
  name: string
  intervalMs: number
  round: () => Promise<Result>
  /** a line at debug after a round, when it did something (default: none) */
  describe?: (result: Result) => Record<string, unknown> | undefined
}

/** Adds the clock to `app`: its onReady hook starts it, its onClose hook stops it. */
export function scheduleRounds<Result>(
  app: FastifyInstance,
  { name, intervalMs, round, describe }: RoundsOptions<Result>,
): void {
  let timer: NodeJS.Timeout | undefined
  let running: Promise<void> = Promise.resolve()
  let stopped = false

  const tick = () => {
    running = round()
      .then((result) => {
        const details = describe?.(result)
        if (details) app.log.debug(details, `${name}: round done`)
      })
      .catch((error: unknown) =>
        app.log.warn({ err: error }, `${name}: a round failed; the next one retries`),
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
    await running
  })
}
