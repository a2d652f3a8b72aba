// A query on a connection whose link closed is refused with CONNECTION_CLOSED, which the caller can catch and retry;
// it never ends the process. postgres.js 3.4.9 threw a TypeError from a timer instead (writing to the socket closed()
// had dropped: upstream issues #1154 and #1208), which ended a payment instance mid-saga in the cluster campaign and
// lost refunds: patches/postgres@3.4.9.patch settles the write with the connection's error. The scenario runs in a
// child process, where an error nobody can catch shows as its exit.
import { execFile } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { freshDatabase, type TestDatabase } from '@meridian/testkit'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

const fixture = fileURLToPath(new URL('./fixtures/write-after-close.ts', import.meta.url))

let db: TestDatabase

beforeAll(async () => {
  db = await freshDatabase('db_closed')
})

afterAll(async () => {
  await db?.drop()
})

describe('a connection whose link closed', () => {
  it('when a reserved connection loses its link and is queried, then the query is refused with CONNECTION_CLOSED and the process goes on', async () => {
    const { stdout } = await promisify(execFile)(process.execPath, [fixture], {
      env: { ...process.env, DATABASE_URL: db.url },
      timeout: 30_000,
    })
    expect(stdout.trim()).toBe('rejected CONNECTION_CLOSED')
  })
})
