// The audit trail's table and its reading, on a real PostgreSQL: entries appended (in the change's transaction or
// not at all), read newest first a page at a time (the cursor keeps PostgreSQL's microseconds), filtered by action or
// actor; and the table refuses any update, delete or truncate, whoever asks.
import { transaction } from '@meridian/db'
import { freshDatabase, type TestDatabase } from '@meridian/testkit'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { appendAudit, migrateAuditLog, nextAuditQuery, readAudit } from '../src/index.ts'

let database: TestDatabase

beforeAll(async () => {
  database = await freshDatabase('audit')
  await migrateAuditLog(database.sql)
  // twice: the track is idempotent, as several instances starting together run it
  await migrateAuditLog(database.sql)
})

afterAll(async () => {
  await database?.drop()
})

const source = {
  actor: 'user:0b7e1c2a-0000-4000-8000-000000000001',
  address: '198.18.0.7',
  requestId: 'req-1',
}

describe('the audit trail', () => {
  it('when entries are appended, then they are read newest first, a page at a time, without a gap or a repeat', async () => {
    for (let index = 0; index < 7; index++) {
      await appendAudit(database.sql, source, {
        action: 'stock.adjusted',
        target: `product:${index}`,
        detail: { delta: index },
      })
    }
    const seen: string[] = []
    let query = { limit: 3 } as { limit: number; before?: string; action?: string }
    for (;;) {
      const page = await readAudit(database.sql, 'inventory', { ...query, action: 'stock.adjusted' })
      seen.push(...page.map((entry) => entry.target))
      const next = nextAuditQuery(page, { ...query, action: 'stock.adjusted' })
      if (next === null) break
      const params = new URLSearchParams(next)
      expect(params.get('before')).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/)
      query = { limit: 3, before: params.get('before') ?? '' }
    }
    expect(seen).toEqual([
      'product:6',
      'product:5',
      'product:4',
      'product:3',
      'product:2',
      'product:1',
      'product:0',
    ])
    const [newest] = await readAudit(database.sql, 'inventory', { limit: 1 })
    expect(newest).toMatchObject({
      service: 'inventory',
      actor: source.actor,
      action: 'stock.adjusted',
      target: 'product:6',
      detail: { delta: 6 },
      address: '198.18.0.7',
      requestId: 'req-1',
    })
  })

  it("when read by actor, then only that actor's entries come", async () => {
    await appendAudit(
      database.sql,
      { actor: 'carrier:meridian-post' },
      { action: 'return.received', target: 'return:1' },
    )
    const carriers = await readAudit(database.sql, 'order', { limit: 50, actor: 'carrier:meridian-post' })
    expect(carriers.map((entry) => entry.action)).toEqual(['return.received'])
    expect(carriers[0]?.address).toBeUndefined()
  })

  it('when the change it records fails, then no entry is kept either', async () => {
    await expect(
      transaction(database.sql, async (tx) => {
        await appendAudit(tx, source, { action: 'user.removed', target: 'user:gone' })
        throw new Error('the change failed')
      }),
    ).rejects.toThrow('the change failed')
    expect(await readAudit(database.sql, 'auth', { limit: 50, action: 'user.removed' })).toEqual([])
  })

  it('when anyone updates, deletes or truncates an entry, then the table refuses it and the entry stays', async () => {
    const before = await readAudit(database.sql, 'inventory', { limit: 100 })
    for (const statement of [
      database.sql`update audit_log set actor = 'user:someone-else'`,
      database.sql`delete from audit_log`,
      database.sql`truncate audit_log`,
    ]) {
      await expect(statement).rejects.toThrow(/audit_log is append-only/)
    }
    expect(await readAudit(database.sql, 'inventory', { limit: 100 })).toEqual(before)
  })

  it('when an entry is out of shape (an action of capitals, an array as detail), then the table refuses it', async () => {
    await expect(
      appendAudit(database.sql, source, { action: 'User.Removed', target: 'user:1' }),
    ).rejects.toThrow()
    await expect(
      appendAudit(database.sql, source, { action: 'user.removed', target: 'user:1', detail: [] as never }),
    ).rejects.toThrow()
  })
})
