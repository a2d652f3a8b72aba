// The saga's clock: every `intervalMs` the deadlines that have passed fire (a step asked again, failed, or a
// compensation escalated). Started when the app is ready, stopped before it closes (a firing round finishes first).
// Several order processes may run it: each instance is decided on under a row lock that the others skip.
import type { FastifyInstance } from 'fastify'
import type { SagaProcess } from '../domain/saga-process.ts'

export interface SagaDeadlinesOptions {
  saga: Pick<SagaProcess, 'fireDeadlines'>
  intervalMs: number
}

/** Adds the clock to `app`: its onReady hook starts it, its onClose hook stops it. */
export function scheduleSagaDeadlines(
  app: FastifyInstance,
  { saga, intervalMs }: SagaDeadlinesOptions,
): void {
  let timer: NodeJS.Timeout | undefined
  let round: Promise<void> = Promise.resolve()
  let stopped = false

  const tick = () => {
    round = saga
      .fireDeadlines()
      .then((fired) => {
        if (fired > 0) app.log.debug({ fired }, 'saga deadlines fired')
      })
      .catch((error: unknown) =>
        app.log.warn({ err: error }, 'saga deadlines: a round failed; the next one retries'),
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
