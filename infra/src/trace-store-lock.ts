// The tests that use the one development Jaeger (its ports are fixed) take turns, across files and workspaces: vitest
// runs files in parallel and the test command runs two workspaces at once, and one stopping Jaeger (a test that
// started it leaves it stopped, jaeger.test stops it on purpose) under another's feet failed the other at random.
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { holdDirLock } from './dir-lock.ts'

const lockDir = join(tmpdir(), 'meridian-trace-store-tests.lock')

/**
 * Waits (polling, up to `timeoutMs`) until no other test file holds the trace store, then holds it; the returned
 * function lets it go. A holder whose process died is taken over.
 */
export function holdTraceStore(timeoutMs = 300_000): Promise<() => void> {
  return holdDirLock(lockDir, { timeoutMs, what: 'the trace store' })
}
