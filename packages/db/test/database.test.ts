// createDatabase against a real server: camelCase result columns, application name, the end of a silent transaction,
// pool size, a lock timeout, silent notices; pingDatabase.
import { freshDatabase, type TestDatabase, uniqueName } from '@meridian/testkit'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { createDatabase, pingDatabase, type Sql, transaction } from '../src/index.ts'

// Nothing listens on port 1 of the loopback interface, so connecting is refused at once.
const unreachableUrl = 'postgres://postgres:postgres@127.0.0.1:1/postgres'

let db: TestDatabase
let sql: Sql

beforeAll(async () => {
  db = await freshDatabase('db_client')
  sql = createDatabase(db.url)
  await sql`create table line_items (line_id integer primary key, unit_price_cents integer, extra_data jsonb)`
})

afterAll(async () => {
  await sql?.end({ timeout: 5 })
  await db?.drop()
})

describe('createDatabase', () => {
  it('when rows come back, then their snake_case column names are camelCase and jsonb contents are untouched', async () => {
    await sql`insert into line_items ${sql({ line_id: 1, unit_price_cents: 250, extra_data: sql.json({ gift_wrap: true }) })}`

    const rows = await sql`select line_id, unit_price_cents, extra_data from line_items`

    expect(rows).toEqual([{ lineId: 1, unitPriceCents: 250, extraData: { gift_wrap: true } }])
  })

  it('when an application name is given, then the server sees it on the connection', async () => {
    const named = createDatabase(db.url, { applicationName: uniqueName('orders') })
    try {
      const [row] = await named`select current_setting('application_name') as name`
      expect(row?.name).toBe(named.options.connection.application_name)
      expect(row?.name).toMatch(/^orders-/)
    } finally {
      await named.end({ timeout: 5 })
    }
  })

  it('when nothing says otherwise, then a connection may sit idle in a transaction for a minute before the server ends it', async () => {
    const [row] = await sql`select current_setting('idle_in_transaction_session_timeout') as timeout`
    expect(row?.timeout).toBe('1min')
  })

  it('when a transaction holding a lock goes silent, as one of a process on a host that died, then the server ends it and a waiter gets the lock', async () => {
    const silent = createDatabase(db.url, { max: 1, idleInTransactionTimeoutMs: 1000 })
    const key = Math.floor(Math.random() * 1_000_000)
    try {
      // its transaction holds the lock and then sends nothing more: no commit, no rollback, no close
      const connection = await silent.reserve()
      const [backend] = await connection<{ pid: number }[]>`select pg_backend_pid() as pid`
      await connection`begin`
      await connection`select pg_advisory_xact_lock(${key})`
      // the waiter is let in only when the server has ended the silent transaction (by condition: no clock read)
      const locked = await transaction(sql, async (tx) => {
        await tx`select pg_advisory_xact_lock(${key})`
        return 'locked'
      })
      expect(locked).toBe('locked')
      const alive = await sql`select 1 from pg_stat_activity where pid = ${backend?.pid ?? 0}`
      expect(alive).toHaveLength(0)
    } finally {
      await silent.end({ timeout: 1 })
    }
  })

  it('when a pool with a lock timeout writes a row a transaction holds, then the write fails with lock_not_available instead of waiting', async () => {
    const impatient = createDatabase(db.url, { max: 1, lockTimeoutMs: 200 })
    await sql`insert into line_items (line_id, unit_price_cents) values (70, 1)`
    try {
      const [setting] = await impatient`select current_setting('lock_timeout') as timeout`
      expect(setting?.timeout).toBe('200ms')
      // the holder waits for the write, as a transaction waits for a pool of its own: without the timeout, neither ends
      const outcome = await transaction(sql, async (tx) => {
        await tx`update line_items set unit_price_cents = 2 where line_id = 70`
        return impatient`update line_items set unit_price_cents = 3 where line_id = 70`.then(
          () => 'written',
          (error: { code?: string }) => error.code,
        )
      })
      expect(outcome).toBe('55P03')
      const [row] = await sql`select unit_price_cents from line_items where line_id = 70`
      expect(row?.unitPriceCents).toBe(2)
    } finally {
      await impatient.end({ timeout: 1 })
    }
  })

  it('when no application name is given, then the connection is named meridian', async () => {
    const [row] = await sql`select current_setting('application_name') as name`
    expect(row?.name).toBe('meridian')
  })

  it('when the pool is limited to two connections, then concurrent queries share at most two', async () => {
    const small = createDatabase(db.url, { max: 2 })
    try {
      const rows = await Promise.all(
        Array.from(
          { length: 6 },
          () => small<{ pid: number }[]>`select pg_backend_pid() as pid, pg_sleep(0.05)`,
        ),
      )
      const backends = new Set(rows.map(([row]) => row?.pid))
      expect(backends.size).toBeGreaterThanOrEqual(1)
      expect(backends.size).toBeLessThanOrEqual(2)
    } finally {
      await small.end({ timeout: 5 })
    }
  })

  it('when the server sends a notice, then nothing is printed', async () => {
    const log = vi.spyOn(console, 'log')
    try {
      await sql`do $$ begin raise notice 'a notice nobody should see'; end $$`
      expect(log).not.toHaveBeenCalled()
    } finally {
      log.mockRestore()
    }
  })
})

describe('pingDatabase', () => {
  it('when the database answers, then it resolves', async () => {
    await expect(pingDatabase(sql)).resolves.toBeUndefined()
  })

  it('when nothing listens at the address, then it rejects', async () => {
    const nowhere = createDatabase(unreachableUrl, { connectTimeoutSeconds: 1 })
    try {
      await expect(pingDatabase(nowhere, 3000)).rejects.toThrow()
    } finally {
      await nowhere.end({ timeout: 1 })
    }
  })

  it('when the answer takes longer than the timeout, then it rejects and the pool stays usable: the statements after it are never cancelled', async () => {
    const single = createDatabase(db.url, { max: 1 })
    try {
      await single`select 1`
      // a cancel of the late ping would stop whatever ran next on the connection: several rounds give it the chance
      for (let round = 0; round < 3; round += 1) {
        // The only connection is busy, so the ping waits behind this query.
        const busy = single`select pg_sleep(0.3)`.execute()
        await expect(pingDatabase(single, 100)).rejects.toThrow('the database did not answer within 100 ms')
        await busy
        await expect(pingDatabase(single)).resolves.toBeUndefined()
        expect(await single`select pg_sleep(0.05), ${round}::int as round`).toEqual([{ pgSleep: '', round }])
      }
    } finally {
      await single.end({ timeout: 5 })
    }
  })
})
