// Notification's migration 0002 on a database that held notifications made before it: order.placed's
// `order_confirmed` ("Order confirmed", "... is confirmed: ...") becomes `order_placed` ("Order placed", "... was
// placed: ..."), the other notifications are left as they were, and the old type is refused from then on. Then 0003:
// the return notifications' types are taken, the rows made before it kept, and a type of none still refused; and 0006
// and 0007 the same for the exchange notifications' types, their check validated in the end.
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

describe('migration 0003 (the return notifications)', () => {
  let returns: TestDatabase
  let returnsSql: Sql
  let upTo0002: string

  beforeAll(async () => {
    returns = await freshDatabase('notification-migrations-0003')
    returnsSql = createDatabase(returns.url, { applicationName: 'notification-migrations-test' })
    upTo0002 = await mkdtemp(join(tmpdir(), 'notification-migrations-'))
    for (const file of await readdir(migrationsDir)) {
      if (/^000[12]_.*\.sql$/.test(file)) await cp(join(migrationsDir, file), join(upTo0002, file))
    }
  })

  afterAll(async () => {
    await returnsSql?.end({ timeout: 5 })
    await returns?.drop()
    if (upTo0002) await rm(upTo0002, { recursive: true, force: true })
  })

  it('when notifications were stored before it, then they stay as they were; the four return types are taken and a type of none is refused', async () => {
    await migrate(returnsSql, { dir: upTo0002 })
    await returnsSql`
      insert into notifications (user_id, order_id, type, title, message, source_event_id)
      values (${user}, ${order}, 'shipment_delivered', 'Order delivered', ${`Your order ${order} was delivered.`},
        gen_random_uuid())`
    await expect(
      returnsSql`
        insert into notifications (user_id, order_id, type, title, message, source_event_id)
        values (${user}, ${order}, 'return_requested', 'Return requested', 'early', gen_random_uuid())`,
    ).rejects.toMatchObject({ code: '23514' })

    await migrate(returnsSql, { dir: migrationsDir })

    for (const type of ['return_requested', 'return_received', 'return_completed', 'return_rejected']) {
      await returnsSql`
        insert into notifications (user_id, order_id, type, title, message, source_event_id)
        values (${user}, ${order}, ${type}, 'A return', 'a step of a return', gen_random_uuid())`
    }
    expect(await returnsSql`select type from notifications order by type`).toEqual(
      [
        'return_completed',
        'return_received',
        'return_rejected',
        'return_requested',
        'shipment_delivered',
      ].map((type) => ({ type })),
    )
    await expect(
      returnsSql`
        insert into notifications (user_id, order_id, type, title, message, source_event_id)
        values (${user}, ${order}, 'return_lost', 'Lost', 'no such type', gen_random_uuid())`,
    ).rejects.toMatchObject({ code: '23514' })
  })
})

describe('migrations 0006 and 0007 (the exchange notifications)', () => {
  let exchanges: TestDatabase
  let exchangesSql: Sql
  let upTo0005: string

  beforeAll(async () => {
    exchanges = await freshDatabase('notification-migrations-0006')
    exchangesSql = createDatabase(exchanges.url, { applicationName: 'notification-migrations-test' })
    upTo0005 = await mkdtemp(join(tmpdir(), 'notification-migrations-'))
    for (const file of await readdir(migrationsDir)) {
      if (/^000[1-5]_.*\.sql$/.test(file)) await cp(join(migrationsDir, file), join(upTo0005, file))
    }
  })

  afterAll(async () => {
    await exchangesSql?.end({ timeout: 5 })
    await exchanges?.drop()
    if (upTo0005) await rm(upTo0005, { recursive: true, force: true })
  })

  const exchangeTypes = [
    'exchange_requested',
    'exchange_awaiting_goods',
    'exchange_completed',
    'exchange_failed',
  ]

  it('when notifications were stored before them, then they stay; the four exchange types are taken, the check is validated, and a type of none is refused', async () => {
    await migrate(exchangesSql, { dir: upTo0005 })
    await exchangesSql`
      insert into notifications (user_id, order_id, type, title, message, source_event_id)
      values (${user}, ${order}, 'return_rejected', 'Return rejected', 'worn.', gen_random_uuid())`
    await expect(
      exchangesSql`
        insert into notifications (user_id, order_id, type, title, message, source_event_id)
        values (${user}, ${order}, 'exchange_requested', 'Exchange requested', 'early', gen_random_uuid())`,
    ).rejects.toMatchObject({ code: '23514' })

    await migrate(exchangesSql, { dir: migrationsDir })

    for (const type of exchangeTypes) {
      await exchangesSql`
        insert into notifications (user_id, order_id, type, title, message, source_event_id)
        values (${user}, ${order}, ${type}, 'An exchange', 'a step of an exchange', gen_random_uuid())`
    }
    expect(await exchangesSql`select type from notifications order by type`).toEqual(
      [...exchangeTypes, 'return_rejected'].sort().map((type) => ({ type })),
    )
    expect(
      await exchangesSql`
        select convalidated from pg_constraint where conname = 'notifications_type_check'`,
    ).toEqual([{ convalidated: true }])
    await expect(
      exchangesSql`
        insert into notifications (user_id, order_id, type, title, message, source_event_id)
        values (${user}, ${order}, 'exchange_lost', 'Lost', 'no such type', gen_random_uuid())`,
    ).rejects.toMatchObject({ code: '23514' })
  })
})
