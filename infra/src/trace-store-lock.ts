// The tests that use the one development Jaeger (its ports are fixed) take turns, across files and workspaces: vitest
// runs files in parallel and the test command runs two workspaces at once, and one stopping Jaeger (a test that
// started it leaves it stopped, jaeger.test stops it on purpose) under another's feet failed the other at random.
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { isAlive } from './processes.ts'

const lockDir = join(tmpdir(), 'meridian-trace-store-tests.lock')
const ownerFile = join(lockDir, 'pid')

/**
 * Waits (polling, up to `timeoutMs`) until no other test file holds the trace store, then holds it; the returned
 * function lets it go. A holder whose process died is taken over.
 */
export async function holdTraceStore(timeoutMs = 300_000): Promise<() => void> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    try {
      mkdirSync(lockDir)
      writeFileSync(ownerFile, String(process.pid))
      return () => rmSync(lockDir, { recursive: true, force: true })
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error
      const owner = existsSync(ownerFile) ? Number(readFileSync(ownerFile, 'utf8')) : Number.NaN
      if (Number.isInteger(owner) && owner > 0 && !isAlive(owner)) {
        rmSync(lockDir, { recursive: true, force: true })
        continue
      }
      if (Date.now() > deadline)
        throw new Error(`the trace store stayed held by pid ${owner} for ${timeoutMs} ms`)
      await sleep(250)
    }
  }
}
