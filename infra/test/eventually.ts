// Waiting in infra's tests for what an engine does in its own time: Jaeger's batch processor stores a span a moment
// after it is accepted; a cluster elects a leader, moves partitions, replicates a catalog.
import { setTimeout as sleep } from 'node:timers/promises'
import { scaledMs } from '../src/test-time.ts'

/**
 * Polls until `found` returns a value, and returns it; fails naming `what` after timeoutMs (a minute times
 * MERIDIAN_TEST_TIME_SCALE by default: engines on a loaded machine, clusters of them, take their time).
 */
export async function eventually<T>(
  what: string,
  found: () => Promise<T | undefined>,
  timeoutMs = scaledMs(60_000),
): Promise<T> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const value = await found()
    if (value !== undefined) return value
    if (Date.now() > deadline) throw new Error(`${what}: not seen within ${timeoutMs} ms`)
    await sleep(200)
  }
}
