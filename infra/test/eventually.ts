// Waiting in the trace store's tests for what Jaeger does in its own time: its batch processor stores a span a moment
// after it is accepted.
import { setTimeout as sleep } from 'node:timers/promises'

/** Polls until `found` returns a value, and returns it; fails naming `what` after timeoutMs. */
export async function eventually<T>(
  what: string,
  found: () => Promise<T | undefined>,
  timeoutMs = 20_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const value = await found()
    if (value !== undefined) return value
    if (Date.now() > deadline) throw new Error(`${what}: not seen within ${timeoutMs} ms`)
    await sleep(200)
  }
}
