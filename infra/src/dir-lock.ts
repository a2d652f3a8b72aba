// A lock between processes of this machine: a folder made atomically (mkdir), holding its owner's pid; a holder whose
// process died is taken over. For what several test files, workspaces or scripts may reach at once (the engines'
// start, the one development Jaeger, a tree unpacked in the cache folder).
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { dirname } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { isAlive } from './processes.ts'

export interface DirLockOptions {
  /** how long to wait for another holder before throwing (default: for ever) */
  timeoutMs?: number
  /** what the lock guards, for the error when the wait is too long */
  what?: string
  /** called once, when the lock is found held (with the holder's pid when it is known) */
  waiting?: (owner: number | undefined) => void
}

/** Waits (polling) until no other live process holds `lockDir`, then holds it; the returned function lets it go. */
export async function holdDirLock(lockDir: string, options: DirLockOptions = {}): Promise<() => void> {
  const ownerFile = `${lockDir}/pid`
  const deadline = options.timeoutMs === undefined ? Number.POSITIVE_INFINITY : Date.now() + options.timeoutMs
  mkdirSync(dirname(lockDir), { recursive: true })
  let told = false
  for (;;) {
    try {
      mkdirSync(lockDir)
      writeFileSync(ownerFile, String(process.pid))
      return () => rmSync(lockDir, { recursive: true, force: true })
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error
      const text = existsSync(ownerFile) ? readFileSync(ownerFile, 'utf8') : ''
      const owner = /^\d+$/.test(text) ? Number(text) : undefined
      // a holder that died; a folder without a pid is one being made (its pid comes in a moment)
      if (owner !== undefined && !isAlive(owner)) {
        rmSync(lockDir, { recursive: true, force: true })
        continue
      }
      if (Date.now() > deadline)
        throw new Error(
          `${options.what ?? lockDir} stayed held by pid ${owner ?? '?'} for ${options.timeoutMs} ms`,
        )
      if (!told) options.waiting?.(owner)
      told = true
      await sleep(250)
    }
  }
}

/** `work` while holding `lockDir` (holdDirLock), let go however it ends. */
export async function withDirLock<T>(
  lockDir: string,
  work: () => Promise<T>,
  options: DirLockOptions = {},
): Promise<T> {
  const release = await holdDirLock(lockDir, options)
  try {
    return await work()
  } finally {
    release()
  }
}
