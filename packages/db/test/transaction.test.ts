// transaction(): a business write and its outbox row commit together or not at all.
import { randomUUID } from 'node:crypto'
import { freshDatabase, type TestDatabase } from '@meridian/testkit'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { createDatabase, type Queryable, type Sql, transaction } from '../src/index.ts'

// A repository in the style services write: it takes the pool or a transaction.
const orders = {
  async insert(db: Queryable, order: { id: string; totalCents: number }): Promise<void> {
    await db`insert into orders (id, total_cents) values (${order.id}, ${order.totalCents})`
  },
  async count(db: Queryable): Promise<number> {
    const [row] = await db<{ count: number }[]>`select count(*)::int as count from orders`
    return row?.count ?? 0
  },
}
const outbox = {
  async append(db: Queryable, message: { id: string; type: string }): Promise<void> {
    await db`insert into outbox (id, type) values (${message.id}, ${message.type})`
  },
  async count(db: Queryable): Promise<number> {
    const [row] = await db<{ count: number }[]>`select count(*)::int as count from outbox`
    return row?.count ?? 0
  },
}

const anOrder = () => ({ id: randomUUID(), totalCents: 1250 })
const anOrderPlaced = () => ({ id: randomUUID(), type: 'order.placed' })

let db: TestDatabase
let sql: Sql

beforeAll(async () => {
  db = await freshDatabase('db_transaction')
  sql = createDatabase(db.url)
  await sql`create table orders (id uuid primary key, total_cents integer not null)`
  await sql`create table outbox (id uuid primary key, type text not null)`
})

beforeEach(async () => {
  await sql`truncate orders, outbox`
})

afterAll(async () => {
  await sql?.end({ timeout: 5 })
  await db?.drop()
})

describe('transaction', () => {
  it('when the work resolves, then the business write and its outbox row are both committed and its result returned', async () => {
    const order = anOrder()

    const result = await transaction(sql, async (tx) => {
      await orders.insert(tx, order)
      await outbox.append(tx, anOrderPlaced())
      return { orderId: order.id }
    })

    expect(result).toEqual({ orderId: order.id })
    expect(await orders.count(sql)).toBe(1)
    expect(await outbox.count(sql)).toBe(1)
  })

  it('when the work is still running, then its writes are not visible outside the transaction', async () => {
    let seenOutside = -1
    let seenInside = -1

    await transaction(sql, async (tx) => {
      await orders.insert(tx, anOrder())
      seenInside = await orders.count(tx)
      seenOutside = await orders.count(sql)
    })

    expect(seenInside).toBe(1)
    expect(seenOutside).toBe(0)
  })

  it('when the work throws, then every write in it is rolled back and the same error is passed on', async () => {
    const failure = new Error('payment declined')

    await expect(
      transaction(sql, async (tx) => {
        await orders.insert(tx, anOrder())
        await outbox.append(tx, anOrderPlaced())
        throw failure
      }),
    ).rejects.toBe(failure)

    expect(await orders.count(sql)).toBe(0)
    expect(await outbox.count(sql)).toBe(0)
  })

  it('when a statement in the work fails, then the earlier writes are rolled back and the database error is passed on', async () => {
    const message = anOrderPlaced()
    await outbox.append(sql, message)

    await expect(
      transaction(sql, async (tx) => {
        await orders.insert(tx, anOrder())
        await outbox.append(tx, message)
      }),
    ).rejects.toMatchObject({ name: 'PostgresError', code: '23505' })

    expect(await orders.count(sql)).toBe(0)
    expect(await outbox.count(sql)).toBe(1)
  })
})
