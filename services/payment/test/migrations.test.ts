// Payment's migration to orders and one charge per order (0004), on a real database that held data of the rules
// before it: an order charged twice through POST /payments, an order step that was declined, a key taken before
// provider keys were kept. The first charge stays the order's charge, the orders known from their charge attempts
// are recorded with where their payment stands, and every key has the provider key it was sent with.
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
  database = await freshDatabase('payment-migrations')
  sql = createDatabase(database.url, { applicationName: 'payment-migrations-test' })
  // the migrations as they were before 0004
  before = await mkdtemp(join(tmpdir(), 'payment-migrations-'))
  for (const file of await readdir(migrationsDir)) {
    if (/^000[1-3]_.*\.sql$/.test(file)) await cp(join(migrationsDir, file), join(before, file))
  }
})

afterAll(async () => {
  await sql?.end({ timeout: 5 })
  await database?.drop()
  if (before) await rm(before, { recursive: true, force: true })
})

const twice = '11111111-1111-4111-8111-111111111111'
const declined = '22222222-2222-4222-8222-222222222222'
const customer = '33333333-3333-4333-8333-333333333333'

describe('migration 0004 on the data of the rules before it', () => {
  it('when an order held two charges, a declined order step and a stored key, then the first charge is the order charge, the orders are recorded, and keys keep their provider key', async () => {
    await migrate(sql, { dir: before })
    await sql`
      insert into payments (order_id, payer_id, amount_cents, status, provider_charge_id, created_at)
      values (${twice}, 'someone', 1999, 'succeeded', 'ch_first', now() - interval '2 minutes'),
        (${twice}, 'someone', 1999, 'succeeded', 'ch_second', now() - interval '1 minute'),
        (${declined}, null, 500, 'failed', null, now())`
    const content = (orderId: string, total: number) => ({ orderId, customerId: customer, total, items: [] })
    await sql`
      insert into charge_attempts (idempotency_key, order_id, amount_cents, currency, token, order_data, status)
      values (${`order-${twice}`}, ${twice}, 1999, 'usd', 'tok_a', ${sql.json(content(twice, 19.99))}, 'settled'),
        (${`order-${declined}`}, ${declined}, 500, 'usd', 'tok_b', ${sql.json(content(declined, 5))}, 'settled')`
    await sql`
      insert into idempotency_keys (scope, key, request_hash, status, response_status, response_body, expires_at)
      values ('someone', 'key-1', 'hash', 'done', 201, '{}'::jsonb, now() + interval '1 day')`

    await migrate(sql, { dir: migrationsDir })

    expect(
      await sql`select provider_charge_id, order_charge from payments where order_id = ${twice} order by created_at`,
    ).toEqual([
      { providerChargeId: 'ch_first', orderCharge: true },
      { providerChargeId: 'ch_second', orderCharge: false },
    ])
    await expect(
      sql`
        insert into payments (order_id, amount_cents, status, provider_charge_id, order_charge)
        values (${twice}, 1999, 'succeeded', 'ch_third', true)`,
    ).rejects.toMatchObject({ code: '23505' })
    expect(
      await sql`
        select order_id, customer_id, amount_cents::int, payment_state from orders order by order_id`,
    ).toEqual([
      { orderId: twice, customerId: customer, amountCents: 1999, paymentState: 'paid' },
      { orderId: declined, customerId: customer, amountCents: 500, paymentState: 'payment_failed' },
    ])
    const [key] = await sql<{ providerKey: string }[]>`select provider_key from idempotency_keys`
    expect(key?.providerKey).toMatch(/^pay-[0-9a-f]{64}$/)
    // a 5xx now leaves the row released (its provider key kept); a done row still needs its answer
    await sql`update idempotency_keys set status = 'released'`
    await expect(
      sql`update idempotency_keys set status = 'done', response_status = null, response_body = null`,
    ).rejects.toMatchObject({ code: '23514' })
  })
})
