// Waiting in a test for what another process (a consumer, a relay) does in its own time.
import { scaledMs, waitMs } from './test-time.ts'

/**
 * Resolves once `check` answers true, polling every `intervalMs` (100 by default; a test waiting for something
 * quick, a message on a socket, may poll faster); fails naming `what` after `timeoutMs` (`waitMs`, 30 s, times
 * MERIDIAN_TEST_TIME_SCALE by default: a deadline only ends a wait that failed, so it can be generous).
 */
export async function eventually(
  what: string,
  check: () => boolean | Promise<boolean>,
  timeoutMs = scaledMs(waitMs),
  intervalMs = 100,
): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting until ${what}`)
    await new Promise((resolve) => setTimeout(resolve, intervalMs))
  }
}
