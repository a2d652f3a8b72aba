// Notification's migration 0002 on a database that held notifications made before it: order.placed's
// `order_confirmed` ("Order confirmed", "... is confirmed: ...") becomes `order_placed` ("Order placed", "... was
// placed: ..."), the other notifications are left as they were, and the old type is refused from then on.
import { cp, mkdtemp, readdir, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createDatabase, migrate, type Sql } from '@meridian/db'
import { freshDatabase, type TestDatabase } from '@meridian/testkit'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { migrationsDir } from '../src/migrations.ts'

let database: TestDatabase
let sql: Sql
let before: string

beforeAll(async () => {
  database = await freshDatabase('notification-migrations')
  sql = createDatabase(database.url, { applicationName: 'notification-migrations-test' })
  // the migrations as they were before 0002
  before = await mkdtemp(join(tmpdir(), 'notification-migrations-'))
  for (const file of await readdir(migrationsDir)) {
    if (/^0001_.*\.sql$/.test(file)) await cp(join(migrationsDir, file), join(before, file))
  }
})

afterAll(async () => {
  await sql?.end({ timeout: 5 })
  await database?.drop()
  if (before) await rm(before, { recursive: true, force: true })
})

const user = '33333333-3333-4333-8333-333333333333'
const order = '11111111-1111-4111-8111-111111111111'

describe('migration 0002 on the notifications made before it', () => {
  it('when an order_confirmed and a payment_failed were stored, then the first is order_placed with its new title and message, the second unchanged, and order_confirmed is refused', async () => {
    await migrate(sql, { dir: before })
    await sql`
      insert into notifications (user_id, order_id, type, title, message, source_event_id)
      values (${user}, ${order}, 'order_confirmed', 'Order confirmed',
          ${`Your order ${order} is confirmed: 3 items, total 59.97.`}, gen_random_uuid()),
        (${user}, ${order}, 'payment_failed', 'Payment failed',
          ${`The payment for your order ${order} failed: card declined.`}, gen_random_uuid())`

    await migrate(sql, { dir: migrationsDir })

    expect(await sql`select type, title, message from notifications order by type`).toEqual([
      {
        type: 'order_placed',
        title: 'Order placed',
        message: `Your order ${order} was placed: 3 items, total 59.97.`,
      },
      {
        type: 'payment_failed',
        title: 'Payment failed',
        message: `The payment for your order ${order} failed: card declined.`,
      },
    ])
    await expect(
      sql`
        insert into notifications (user_id, order_id, type, title, message, source_event_id)
        values (${user}, ${order}, 'order_confirmed', 'Order confirmed', 'old', gen_random_uuid())`,
    ).rejects.toMatchObject({ code: '23514' })
  })
})
