// Work started at a fixed rate, open loop: item i starts at start + i / rate whatever happened to the ones before it
// (bench:saga's and bench:realtime's orders, bench:graphql's posts), so a slow answer never slows the offered load.
import { monotonicMs } from './events/clock.ts'

export interface FixedRateRun {
  /** the most any item started behind its schedule, ms (the load generator's own lag) */
  lagMs: number
}

/** Starts `start(i)` for i in [0, total) at `ratePerSecond`; settles when every one of them has. */
export async function atFixedRate(
  total: number,
  ratePerSecond: number,
  start: (index: number) => Promise<void>,
): Promise<FixedRateRun> {
  const started = monotonicMs()
  let lagMs = 0
  const inFlight: Promise<void>[] = []
  for (let i = 0; i < total; i++) {
    const wait = started + (i * 1000) / ratePerSecond - monotonicMs()
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait))
    else lagMs = Math.max(lagMs, -wait)
    inFlight.push(start(i))
  }
  await Promise.all(inFlight)
  return { lagMs }
}
