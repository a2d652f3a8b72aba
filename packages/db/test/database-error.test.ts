// mapDatabaseError: every mapping of the spec (Errors, rule 4) triggered by a real failing statement.
import { randomUUID } from 'node:crypto'
import { AppError, ErrorCode } from '@meridian/contracts'
import { freshDatabase, type TestDatabase } from '@meridian/testkit'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  createDatabase,
  isDatabaseError,
  isDatabaseUnavailable,
  isUniqueViolation,
  mapDatabaseError,
  type Sql,
} from '../src/index.ts'

let db: TestDatabase
let sql: Sql
let customerId: string

/** The error `statement` fails with, mapped; the statement must fail. */
async function mappedFailureOf(statement: PromiseLike<unknown>): Promise<{ raw: unknown; mapped: AppError }> {
  try {
    await statement
  } catch (raw) {
    return { raw, mapped: mapDatabaseError(raw) }
  }
  throw new Error('expected the statement to fail')
}

const aCustomer = (overrides: Partial<{ email: string; tenantId: number; externalRef: string }> = {}) => ({
  email: `${randomUUID()}@example.com`,
  tenantId: 1,
  externalRef: randomUUID(),
  ...overrides,
})

async function insertCustomer(customer: ReturnType<typeof aCustomer>): Promise<string> {
  const [row] = await sql<{ id: string }[]>`
    insert into customers (email, tenant_id, external_ref)
    values (${customer.email}, ${customer.tenantId}, ${customer.externalRef})
    returning id`
  return row!.id
}

beforeAll(async () => {
  db = await freshDatabase('db_errors')
  sql = createDatabase(db.url)
  await sql`
    create table customers (
      id uuid primary key default gen_random_uuid(),
      email text not null unique,
      login text,
      tenant_id integer not null,
      external_ref text not null,
      unique (tenant_id, external_ref)
    )`
  await sql`create unique index customers_login_lower on customers (lower(login))`
  await sql`
    create table orders (
      id serial primary key,
      customer_id uuid not null references customers (id),
      note varchar(5),
      total numeric(10, 2) check (total >= 0),
      quantity integer,
      due_on date
    )`
  customerId = await insertCustomer(aCustomer())
  await sql`insert into orders (customer_id) values (${customerId})`
})

afterAll(async () => {
  await sql?.end({ timeout: 5 })
  await db?.drop()
})

describe('mapDatabaseError, unique violations', () => {
  it('when an email is taken, then it is 409 CONFLICT naming the field and never the value', async () => {
    const taken = aCustomer()
    await insertCustomer(taken)

    const { raw, mapped } = await mappedFailureOf(insertCustomer(aCustomer({ email: taken.email })))

    expect(isDatabaseError(raw)).toBe(true)
    expect(mapped).toBeInstanceOf(AppError)
    expect(mapped).toMatchObject({
      statusCode: 409,
      code: ErrorCode.CONFLICT,
      message: 'Resource already exists',
      details: [{ field: 'email', message: 'already exists' }],
    })
    expect(JSON.stringify({ message: mapped.message, details: mapped.details })).not.toContain(taken.email)
  })

  it('when a composite unique key is taken, then there is one detail per column, camelCased', async () => {
    const taken = aCustomer({ tenantId: 7 })
    await insertCustomer(taken)

    const { mapped } = await mappedFailureOf(
      insertCustomer(aCustomer({ tenantId: 7, externalRef: taken.externalRef })),
    )

    expect(mapped).toMatchObject({ statusCode: 409, code: ErrorCode.CONFLICT })
    expect(mapped.details).toEqual([
      { field: 'tenantId', message: 'already exists' },
      { field: 'externalRef', message: 'already exists' },
    ])
  })

  it('when a unique expression index is violated, then the field is the column inside the expression', async () => {
    const first = await insertCustomer(aCustomer())
    const second = await insertCustomer(aCustomer())
    await sql`update customers set login = 'Ada' where id = ${first}`

    const { mapped } = await mappedFailureOf(sql`update customers set login = 'ada' where id = ${second}`)

    expect(mapped).toMatchObject({
      statusCode: 409,
      details: [{ field: 'login', message: 'already exists' }],
    })
  })
  it('when a unique index is named, then isUniqueViolation tells its violation from any other failure', async () => {
    const first = await insertCustomer(aCustomer())
    const second = await insertCustomer(aCustomer())
    await sql`update customers set login = 'grace' where id = ${first}`

    const { raw } = await mappedFailureOf(sql`update customers set login = 'Grace' where id = ${second}`)
    expect(isUniqueViolation(raw, 'customers_login_lower')).toBe(true)
    expect(isUniqueViolation(raw, 'customers_email_key')).toBe(false)
    const taken = aCustomer()
    await insertCustomer(taken)
    const { raw: email } = await mappedFailureOf(insertCustomer(aCustomer({ email: taken.email })))
    expect(isUniqueViolation(email, 'customers_email_key')).toBe(true)
    const { raw: dangling } = await mappedFailureOf(
      sql`insert into orders (customer_id) values (${randomUUID()})`,
    )
    expect(isUniqueViolation(dangling, 'customers_email_key')).toBe(false)
    expect(isUniqueViolation(new Error('duplicate key'), 'customers_email_key')).toBe(false)
  })
})

describe('mapDatabaseError, foreign keys and required values', () => {
  it('when a row refers to a record that does not exist, then it is 422 VALIDATION_ERROR on that field', async () => {
    const { raw, mapped } = await mappedFailureOf(
      sql`insert into orders (customer_id) values (${randomUUID()})`,
    )

    expect((raw as { code?: string }).code).toBe('23503')
    expect(mapped).toMatchObject({
      statusCode: 422,
      code: ErrorCode.VALIDATION_ERROR,
      message: 'Validation failed',
      details: [{ field: 'customerId', message: 'refers to a record that does not exist' }],
    })
  })

  it('when a record other rows refer to is deleted, then it is 422 VALIDATION_ERROR saying it is still referenced', async () => {
    const { mapped } = await mappedFailureOf(sql`delete from customers where id = ${customerId}`)

    expect(mapped).toMatchObject({
      statusCode: 422,
      code: ErrorCode.VALIDATION_ERROR,
      details: [{ field: 'id', message: 'is still referenced by other records' }],
    })
  })

  it('when a required column is null, then it is 422 VALIDATION_ERROR with the camelCased column as field', async () => {
    const { mapped } = await mappedFailureOf(sql`insert into orders (customer_id) values (null)`)

    expect(mapped).toMatchObject({
      statusCode: 422,
      code: ErrorCode.VALIDATION_ERROR,
      details: [{ field: 'customerId', message: 'is required' }],
    })
  })
})

describe('mapDatabaseError, invalid values', () => {
  it('when a uuid column gets text that is not a uuid, then it is 422 VALIDATION_ERROR without the value', async () => {
    const { raw, mapped } = await mappedFailureOf(sql`select * from customers where id = ${'not-a-uuid'}`)

    expect((raw as { code?: string }).code).toBe('22P02')
    expect(mapped).toMatchObject({
      statusCode: 422,
      code: ErrorCode.VALIDATION_ERROR,
      details: [{ field: 'value', message: 'has an invalid format' }],
    })
    expect(JSON.stringify({ message: mapped.message, details: mapped.details })).not.toContain('not-a-uuid')
  })

  it('when a value is longer than its column allows, then it is 422 VALIDATION_ERROR', async () => {
    const { raw, mapped } = await mappedFailureOf(
      sql`insert into orders (customer_id, note) values (${customerId}, ${'far too long'})`,
    )

    expect((raw as { code?: string }).code).toBe('22001')
    expect(mapped).toMatchObject({ statusCode: 422, details: [{ field: 'value', message: 'is too long' }] })
  })

  it('when a check constraint fails, then it is 422 VALIDATION_ERROR on the column the constraint guards', async () => {
    const { raw, mapped } = await mappedFailureOf(
      sql`insert into orders (customer_id, total) values (${customerId}, ${-1})`,
    )

    expect((raw as { code?: string }).code).toBe('23514')
    expect(mapped).toMatchObject({
      statusCode: 422,
      code: ErrorCode.VALIDATION_ERROR,
      details: [{ field: 'total', message: 'is not an allowed value' }],
    })
  })

  it('when a number is out of its column range, then it is 422 VALIDATION_ERROR', async () => {
    const { raw, mapped } = await mappedFailureOf(
      sql`insert into orders (customer_id, quantity) values (${customerId}, ${'99999999999'})`,
    )

    expect((raw as { code?: string }).code).toBe('22003')
    expect(mapped).toMatchObject({
      statusCode: 422,
      details: [{ field: 'value', message: 'is out of range' }],
    })
  })

  it('when a date is not a date at all, then it is 422 VALIDATION_ERROR', async () => {
    const { raw, mapped } = await mappedFailureOf(
      sql`insert into orders (customer_id, due_on) values (${customerId}, 'next tuesday-ish')`,
    )

    expect((raw as { code?: string }).code).toBe('22007')
    expect(mapped).toMatchObject({ statusCode: 422, code: ErrorCode.VALIDATION_ERROR })
  })

  it('when a date has an impossible month, then it is 422 VALIDATION_ERROR', async () => {
    const { raw, mapped } = await mappedFailureOf(
      sql`insert into orders (customer_id, due_on) values (${customerId}, '2024-13-45')`,
    )

    expect((raw as { code?: string }).code).toBe('22008')
    expect(mapped).toMatchObject({ statusCode: 422, code: ErrorCode.VALIDATION_ERROR })
  })
})

describe('mapDatabaseError, data exceptions (class 22)', () => {
  it('when text holds a NUL character, then it is 422 VALIDATION_ERROR, not a database error', async () => {
    const { raw, mapped } = await mappedFailureOf(
      sql`insert into orders (customer_id, note) values (${customerId}, ${'a\u0000b'})`,
    )

    expect((raw as { code?: string }).code).toBe('22021')
    expect(mapped).toMatchObject({
      statusCode: 422,
      code: ErrorCode.VALIDATION_ERROR,
      details: [{ field: 'value', message: 'contains characters that cannot be stored' }],
    })
  })

  it('when any other data exception is met (division by zero of a given value), then it is 422 too', async () => {
    const { raw, mapped } = await mappedFailureOf(sql`select 1 / ${0}::int`)

    expect((raw as { code?: string }).code).toBe('22012')
    expect(mapped).toMatchObject({
      statusCode: 422,
      code: ErrorCode.VALIDATION_ERROR,
      details: [{ field: 'value', message: 'has an invalid value' }],
    })
  })
})

describe('mapDatabaseError, everything else', () => {
  it('when the database fails in a way the mapping does not know, then it is 500 DB_ERROR with a generic message and the original as cause', async () => {
    const { raw, mapped } = await mappedFailureOf(sql`select * from no_such_table_here`)

    expect((raw as { code?: string }).code).toBe('42P01')
    expect(isDatabaseError(raw)).toBe(true)
    expect(mapped).toMatchObject({
      statusCode: 500,
      code: ErrorCode.DB_ERROR,
      message: 'A database error occurred',
    })
    expect(mapped.details).toBeUndefined()
    expect(mapped.cause).toBe(raw)
    expect(mapped.message).not.toContain('no_such_table_here')
  })

  it('when the server cannot be reached, then it is not a server-reported error but 503 SERVICE_UNAVAILABLE with Retry-After', async () => {
    const nowhere = createDatabase('postgres://postgres:postgres@127.0.0.1:1/postgres', {
      connectTimeoutSeconds: 1,
    })
    try {
      const { raw, mapped } = await mappedFailureOf(nowhere`select 1`)

      expect(isDatabaseError(raw)).toBe(false)
      expect(isDatabaseUnavailable(raw)).toBe(true)
      expect(mapped).toMatchObject({
        statusCode: 503,
        code: ErrorCode.SERVICE_UNAVAILABLE,
        message: 'Service temporarily unavailable',
        retryAfter: 5,
      })
      expect(mapped.cause).toBe(raw)
    } finally {
      await nowhere.end({ timeout: 1 })
    }
  })

  it('when the error is already an AppError, then it is returned unchanged', () => {
    const notFound = AppError.notFound()

    expect(isDatabaseError(notFound)).toBe(false)
    expect(mapDatabaseError(notFound)).toBe(notFound)
  })

  it('when a duplicate-key error carries code 11000, as a number or a string, then it is 409 CONFLICT on its key', () => {
    // The shape document stores report (MongoServerError); there is no such server here, so the error is built.
    const numeric = Object.assign(new Error('E11000 duplicate key error'), {
      code: 11000,
      keyPattern: { email: 1 },
    })
    const text = Object.assign(new Error('E11000 duplicate key error'), { code: '11000' })

    expect(isDatabaseError(numeric)).toBe(true)
    expect(mapDatabaseError(numeric)).toMatchObject({
      statusCode: 409,
      code: ErrorCode.CONFLICT,
      details: [{ field: 'email', message: 'already exists' }],
    })
    expect(mapDatabaseError(text)).toMatchObject({
      statusCode: 409,
      code: ErrorCode.CONFLICT,
      details: [{ field: 'value', message: 'already exists' }],
    })
  })
})
