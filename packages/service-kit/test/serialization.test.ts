// Responses written by JSON.stringify when they already have their schema's shape: the same bytes as
// fast-json-stringify for every value, whichever of the two writes it.
import { createRequire } from 'node:module'
import { Paginated, PartialUser } from '@meridian/contracts'
import { type Static, type TSchema, Type } from 'typebox'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createServiceApp, type ServiceApp } from '../src/index.ts'
import { shapeCheckedSerializer, shapeCheckOf } from '../src/serialization.ts'

type Serialize = (value: unknown) => string
const fromFastify = createRequire(import.meta.resolve('fastify'))
const fastJsonStringify = fromFastify('fast-json-stringify') as (schema: unknown) => Serialize

/** The kit's serializer and fast-json-stringify alone, for one schema. */
function serializers(schema: TSchema): { kit: Serialize; reference: Serialize } {
  const compile = (
    shapeCheckedSerializer() as unknown as (...args: unknown[]) => (route: object) => Serialize
  )({}, {})
  return {
    kit: compile({ schema: structuredClone(schema), method: 'GET', url: '/', httpStatus: '200' }),
    reference: fastJsonStringify(structuredClone(schema)),
  }
}

/** What a serializer makes of a value: its text, or the error it threw. */
function outcome(serialize: Serialize, value: unknown): { text: string } | { error: string } {
  try {
    return { text: serialize(value) }
  } catch (error) {
    return { error: (error as Error).message }
  }
}

const user = (index: number) => ({
  id: `7d1b7a4e-0000-4000-8000-${String(index).padStart(12, '0')}`,
  name: `User ${index}`,
  email: `user${index}@example.com`,
  role: 'user',
  status: 'active',
  age: index % 2 === 0 ? null : 30 + index,
  createdAt: '2026-11-26T08:00:00.000Z',
  updatedAt: '2026-11-26T08:00:00.000Z',
})

const page = (items: unknown[]) => ({
  data: items,
  meta: { page: 1, limit: 20, total: 45, totalPages: 3 },
  links: {
    self: '/u?page=1&limit=20',
    first: '/u?page=1&limit=20',
    prev: null,
    next: '/u?page=2',
    last: '/u?page=3',
  },
})

class UserRecord {
  constructor(
    readonly id: string,
    readonly name: string,
  ) {}
}

/** Values around the users page's shape: the shape itself, and each way a value can leave it. */
function usersPageCases(): [string, unknown][] {
  const withHidden = user(1) as Record<string, unknown>
  Object.defineProperty(withHidden, 'name', { value: 'hidden', enumerable: false })
  const inheriting = Object.create({ email: 'inherited@example.com' }) as Record<string, unknown>
  Object.assign(inheriting, { id: 'x', name: 'y' })
  const holey = [user(1), user(2)]
  delete holey[0]
  return [
    ['a page of users', page([user(1), user(2), user(3)])],
    ['an empty page', page([])],
    ['sparse users (a few fields each)', page([{ id: 'a' }, { id: 'b', email: 'b@example.com' }, {}])],
    ['a field set to undefined', page([{ ...user(1), age: undefined }])],
    ['an undeclared field', page([{ ...user(1), passwordHash: '$argon2id$secret' }])],
    ['fields out of the schema order', page([{ name: 'n', id: 'i' }])],
    ['a Date where a date-time string is declared', page([{ ...user(1), createdAt: new Date(0) }])],
    ['a number where a string is declared', page([{ ...user(1), name: 42 }])],
    ['a string where an integer is declared', page([{ ...user(1), age: '42' }])],
    ['a fractional age', page([{ ...user(1), age: 41.5 }])],
    ['null where a string is declared', page([{ ...user(1), email: null }])],
    ['a missing required object', { data: [user(1)], links: page([]).links }],
    ['a required property set to undefined', { ...page([]), meta: undefined }],
    ['null for an object', { ...page([]), meta: null }],
    ['an array for an object', { ...page([]), meta: [1, 2] }],
    [
      'a non-finite number',
      { ...page([]), meta: { page: 1, limit: 20, total: Number.POSITIVE_INFINITY, totalPages: 3 } },
    ],
    ['NaN', { ...page([]), meta: { page: Number.NaN, limit: 20, total: 4, totalPages: 3 } }],
    ['a declared property hidden from enumeration', page([withHidden])],
    ['a declared property inherited', page([inheriting])],
    ['a class instance', page([new UserRecord('id-1', 'from a class')])],
    ['an object without prototype', page([Object.assign(Object.create(null), user(1))])],
    ['a hole in the array', page(holey)],
    ['null in the array', page([null])],
    ['a toJSON of its own', page([{ ...user(1), toJSON: () => ({ id: 'replaced' }) }])],
    [
      'quotes, backslashes and control characters',
      page([{ ...user(1), name: 'a "quoted" \\ name\n\t\u0001' }]),
    ],
    ['a lone surrogate', page([{ ...user(1), name: 'broken \ud800 pair' }])],
    ['an emoji (a surrogate pair)', page([{ ...user(1), name: 'smile 😀' }])],
    ['a long string with an escape', page([{ ...user(1), name: `${'x'.repeat(60)}"${'y'.repeat(60)}` }])],
    ['a very long plain string', page([{ ...user(1), name: 'z'.repeat(6000) }])],
    ['not an object at all', 'a string'],
    ['null', null],
  ]
}

describe('shape-checked serialization', () => {
  const { kit, reference } = serializers(Paginated(PartialUser))

  it.each(usersPageCases())(
    'when the value is %s, then the text (or the error) is fast-json-stringify’s',
    (_name, value) => {
      expect(outcome(kit, value)).toEqual(outcome(reference, value))
    },
  )

  it('when a value has the shape, then the check takes it, and when it leaves the shape, then the check does not', () => {
    const check = shapeCheckOf(Paginated(PartialUser))
    expect(check?.(page([user(1), { id: 'a' }]))).toBe(true)
    expect(check?.(page([{ ...user(1), passwordHash: 'x' }]))).toBe(false)
    expect(check?.(page([{ ...user(1), createdAt: new Date(0) }]))).toBe(false)
    expect(check?.(page([{ name: 'n', id: 'i' }]))).toBe(false)
  })

  it('when many values are made by changing a page at random, then every text (or error) is fast-json-stringify’s', () => {
    // a fixed seed: the same values on every run
    let seed = 20261126
    const random = () => {
      seed = (seed * 1103515245 + 12345) % 2147483648
      return seed / 2147483648
    }
    const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)] as T
    const odd: unknown[] = [
      undefined,
      null,
      0,
      -0,
      1.5,
      -7,
      2 ** 53,
      '',
      'text',
      '"',
      true,
      false,
      [],
      {},
      new Date(1),
    ]
    const fields = ['id', 'name', 'email', 'role', 'status', 'age', 'createdAt', 'updatedAt', 'extra']
    let viaShape = 0
    for (let round = 0; round < 2000; round++) {
      const items = Array.from({ length: Math.floor(random() * 4) }, (_, index) => {
        const item: Record<string, unknown> = user(index)
        for (let change = Math.floor(random() * 3); change > 0; change--) {
          if (random() < 0.3) delete item[pick(fields)]
          else item[pick(fields)] = pick(odd)
        }
        return item
      })
      const value: Record<string, unknown> = page(items)
      if (random() < 0.2) value[pick(['data', 'meta', 'links', 'more'])] = pick(odd)
      if (shapeCheckOf(Paginated(PartialUser))?.(value)) viaShape++
      expect(outcome(kit, value)).toEqual(outcome(reference, value))
    }
    // both paths were taken many times
    expect(viaShape).toBeGreaterThan(100)
    expect(viaShape).toBeLessThan(1900)
  })

  it.each([
    ['a union (anyOf)', Type.Union([Type.String(), Type.Object({ a: Type.String() })])],
    ['a const', Type.Literal('fixed')],
    ['a default', Type.Object({ a: Type.String({ default: 'x' }) })],
    ['additional properties', Type.Object({ a: Type.String() }, { additionalProperties: true })],
    ['a $ref', Type.Object({ a: Type.Unsafe({ $ref: 'Other#' }) })],
    ['the unsafe format', Type.Object({ a: Type.String({ format: 'unsafe' }) })],
    ['nullable', Type.Object({ a: Type.Unsafe({ type: 'string', nullable: true }) })],
    ['an object without properties', Type.Object({})],
    ['a record', Type.Record(Type.String(), Type.String())],
    ['a tuple', Type.Tuple([Type.String(), Type.Number()])],
  ])('when the schema has %s, then fast-json-stringify writes every value', (_name, schema) => {
    expect(shapeCheckOf(schema)).toBeUndefined()
  })
})

describe('shape-checked serialization in the chassis', () => {
  let app: ServiceApp
  let answer: unknown

  beforeAll(async () => {
    app = await createServiceApp({
      name: 'serialization-test',
      version: '1.0.0',
      environment: 'test',
      logLevel: 'silent',
      rateLimit: false,
    })
    const UsersPage = Paginated(PartialUser)
    // the tests answer values outside the schema on purpose: the type says what the route declares
    app.get(
      '/users',
      { schema: { response: { 200: UsersPage } } },
      async () => answer as Static<typeof UsersPage>,
    )
    await app.ready()
  })
  afterAll(() => app.close())

  it('when a handler answers a page of exactly the schema, then the body is that page', async () => {
    answer = page([user(1), user(2)])
    const response = await app.inject({ method: 'GET', url: '/users' })
    expect(response.statusCode).toBe(200)
    expect(response.body).toBe(JSON.stringify(answer))
  })

  it('when a handler answers fields the schema does not declare, then they are left out of the body', async () => {
    answer = page([{ ...user(1), passwordHash: '$argon2id$secret' }])
    const response = await app.inject({ method: 'GET', url: '/users' })
    expect(response.statusCode).toBe(200)
    expect(response.body).not.toContain('passwordHash')
    expect(response.json()).toEqual(page([user(1)]))
  })

  it('when a handler answers Dates for date-time fields, then they are written as ISO strings', async () => {
    answer = page([{ ...user(1), createdAt: new Date('2026-11-26T08:00:00.000Z') }])
    const response = await app.inject({ method: 'GET', url: '/users' })
    expect(response.json()).toEqual(page([user(1)]))
  })

  it('when a handler leaves out a required part, then the answer is the 500 envelope', async () => {
    answer = { data: [] }
    const response = await app.inject({ method: 'GET', url: '/users' })
    expect(response.statusCode).toBe(500)
    expect(response.json()).toMatchObject({ error: { code: 'INTERNAL_ERROR' } })
  })
})
