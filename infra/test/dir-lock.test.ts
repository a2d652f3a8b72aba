// The lock between processes (src/dir-lock.ts): a second holder waits for the first, a dead holder's lock is taken
// over, and a wait with a limit ends in an error naming what was held.
import { spawnSync } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { holdDirLock, withDirLock } from '../src/dir-lock.ts'

const root = mkdtempSync(join(tmpdir(), 'meridian-dir-lock-'))
afterAll(() => rmSync(root, { recursive: true, force: true }))

describe('a lock between processes', () => {
  it('when it is held, then a second holder waits until it is let go, and is told once who holds it', async () => {
    const lock = join(root, 'held.lock')
    const order: string[] = []
    const told: (number | undefined)[] = []
    const release = await holdDirLock(lock)
    const second = withDirLock(lock, async () => order.push('second'), {
      waiting: (owner) => told.push(owner),
    })
    // the second is waiting: it has been told, and has not run
    await expect.poll(() => told).toEqual([process.pid])
    order.push('first')
    release()
    await second
    expect(order).toEqual(['first', 'second'])
    expect(existsSync(lock)).toBe(false)
  })

  it('when its holder has died, then it is taken over at once', async () => {
    const lock = join(root, 'dead.lock')
    // a process that has ended: its pid is no one's now
    const dead = spawnSync(process.execPath, [
      '-e',
      'process.stdout.write(String(process.pid))',
    ]).stdout.toString()
    mkdirSync(lock)
    writeFileSync(join(lock, 'pid'), dead)
    const waited: (number | undefined)[] = []
    const release = await holdDirLock(lock, { waiting: (owner) => waited.push(owner) })
    expect(waited).toEqual([])
    release()
  })

  it('when a live holder keeps it past the limit, then the wait ends in an error naming what it guards', async () => {
    const lock = join(root, 'kept.lock')
    const release = await holdDirLock(lock)
    await expect(holdDirLock(lock, { timeoutMs: 300, what: 'the test tree' })).rejects.toThrow(
      `the test tree stayed held by pid ${process.pid} for 300 ms`,
    )
    release()
  })

  it('when the work throws, then the lock is let go all the same', async () => {
    const lock = join(root, 'thrown.lock')
    await expect(
      withDirLock(lock, async () => {
        throw new Error('the work failed')
      }),
    ).rejects.toThrow('the work failed')
    expect(existsSync(lock)).toBe(false)
  })
})
