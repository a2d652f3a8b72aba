// defineList(): page and limit, allow-listed sort and sparse fields, equality filters, q, the envelope, on a real table.
import { AppError } from '@meridian/contracts'
import { freshDatabase, type TestDatabase } from '@meridian/testkit'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createDatabase, defineList, listEnvelope, type Sql, transaction } from '../src/index.ts'

interface ItemRow {
  id: number
  name: string
  category: string
  price: number
  inStock: boolean
  createdAt: Date
}

const columns = {
  id: 'id',
  name: 'name',
  category: 'category',
  price: 'price_cents',
  inStock: 'in_stock',
  createdAt: 'created_at',
} as const

const items = defineList({
  table: 'items',
  columns,
  selectable: ['id', 'name', 'category', 'price', 'inStock', 'createdAt'],
  sortable: ['name', 'category', 'price', 'createdAt'],
  filterable: ['category', 'inStock', 'price'],
  search: { vector: 'search' },
  defaultSort: 'createdAt:desc',
  alwaysSelected: ['id'],
})

const total = 50
const seeded = Array.from({ length: total }, (_, i) => ({
  id: i + 1,
  name:
    i === 7
      ? 'Item 07 100% cotton'
      : `Item ${String(i).padStart(2, '0')} ${i % 5 === 0 ? 'Zephyr' : 'Common'}`,
  category: ['a', 'b', 'c'][i % 3] as string,
  price: (i % 4) * 100,
  inStock: i % 2 === 0,
  createdAt: new Date(Date.UTC(2025, 0, 1, 0, i)),
}))

let db: TestDatabase
let sql: Sql

beforeAll(async () => {
  db = await freshDatabase('db_list_query')
  sql = createDatabase(db.url, { max: 4 })
  await sql`
    create table items (
      id integer primary key,
      name text not null,
      category text not null,
      price_cents integer not null,
      in_stock boolean not null,
      created_at timestamptz not null,
      secret text not null default 'hidden',
      search tsvector generated always as (to_tsvector('simple', name || ' ' || category)) stored
    )`
  for (const item of seeded) {
    await sql`
      insert into items (id, name, category, price_cents, in_stock, created_at)
      values (${item.id}, ${item.name}, ${item.category}, ${item.price}, ${item.inStock}, ${item.createdAt})`
  }
})

afterAll(async () => {
  await sql?.end({ timeout: 5 })
  await db?.drop()
})

/** The AppError a call throws (fails the test when it throws nothing or something else). */
function refusal(call: () => unknown): AppError {
  try {
    call()
  } catch (error) {
    if (error instanceof AppError) return error
    throw error
  }
  throw new Error('expected a refusal')
}

const countItems = async () => (await sql<{ n: number }[]>`select count(*)::int as n from items`)[0]?.n

describe('defineList: page and limit', () => {
  it('when neither is given, then page 1 of 20, newest first, every selectable field', async () => {
    const request = items.parse({})
    expect(request).toMatchObject({ page: 1, limit: 20, offset: 0, q: undefined, filters: {} })
    const { rows, total: counted } = await items.run<ItemRow>(sql, request)
    expect(counted).toBe(total)
    expect(rows).toHaveLength(20)
    expect(rows.map((row) => row.id)).toEqual(Array.from({ length: 20 }, (_, i) => total - i))
    expect(rows[0]).toEqual({ ...seeded[total - 1] })
  })

  it('when limit is 100, then up to 100 rows; above 100, below 1, or page out of range, then 422 naming it', async () => {
    const { rows } = await items.run(sql, items.parse({ limit: 100 }))
    expect(rows).toHaveLength(total)
    for (const [query, field] of [
      [{ limit: 101 }, 'limit'],
      [{ limit: 0 }, 'limit'],
      [{ limit: 2.5 }, 'limit'],
      [{ page: 0 }, 'page'],
      [{ page: 10_000_001 }, 'page'],
      [{ page: Number.POSITIVE_INFINITY }, 'page'],
    ] as const) {
      const error = refusal(() => items.parse(query))
      expect(error.statusCode).toBe(422)
      expect(error.details?.[0]?.field).toBe(field)
    }
  })

  it('when a page past the last is read, then no rows but the total', async () => {
    const result = await items.run(sql, items.parse({ page: 4, limit: 20 }))
    expect(result).toEqual({ rows: [], total })
  })
})

describe('defineList: sort', () => {
  it('when sorting by several keys with ties, then pages follow that order with id ascending last, never overlapping', async () => {
    const expected = [...seeded]
      .sort((x, y) => x.category.localeCompare(y.category) || y.price - x.price || x.id - y.id)
      .map((item) => item.id)
    const seen: number[] = []
    for (let page = 1; page <= 8; page++) {
      const request = items.parse({ sort: 'category:asc,price:desc', page, limit: 7 })
      const { rows, total: counted } = await items.run(sql, request)
      expect(counted).toBe(total)
      seen.push(...rows.map((row) => row.id as number))
    }
    expect(seen).toEqual(expected)
    expect(new Set(seen).size).toBe(total)
  })

  it('when the same field is named twice, then the first direction wins', () => {
    expect(items.parse({ sort: 'price:asc,price:desc' }).sort).toEqual([
      { field: 'price', descending: false },
    ])
  })

  it('when sort names an unknown field or no direction, then 422 naming each, and the allowed fields', () => {
    const error = refusal(() => items.parse({ sort: 'secret:asc,name,price:up,category:desc' }))
    expect(error.statusCode).toBe(422)
    expect(error.details).toEqual([
      {
        field: 'sort',
        message: "cannot sort by 'secret'; allowed: name, category, price, createdAt",
        received: 'secret:asc',
      },
      { field: 'sort', message: 'sort by name:asc or name:desc', received: 'name' },
      { field: 'sort', message: 'sort by price:asc or price:desc', received: 'price:up' },
    ])
    // a field that is selectable but not sortable
    expect(refusal(() => items.parse({ sort: 'inStock:asc' })).details?.[0]?.field).toBe('sort')
  })
})

describe('defineList: sparse fields', () => {
  it('when fields are named, then rows carry only those and id, keyed by field (a renamed column too)', async () => {
    const request = items.parse({ fields: 'price,name', sort: 'price:desc', limit: 2 })
    expect(request.fields).toEqual(['id', 'price', 'name'])
    const { rows } = await items.run<ItemRow>(sql, request)
    expect(rows).toEqual([
      { id: 4, price: 300, name: 'Item 03 Common' },
      { id: 8, price: 300, name: 'Item 07 100% cotton' },
    ])
    expect(items.statements(request).page).toBe(
      'select "id", "price_cents" as "price", "name" from "items" order by "price_cents" desc, "id" asc limit $1 offset $2',
    )
  })

  it('when fields name something not selectable, then 422 naming each', () => {
    const error = refusal(() => items.parse({ fields: 'id,secret,search,price_cents' }))
    expect(error.details?.map((detail) => detail.received)).toEqual(['secret', 'search', 'price_cents'])
    expect(error.details?.every((detail) => detail.field === 'fields')).toBe(true)
  })
})

describe('defineList: filters and q', () => {
  it('when equality filters are set (text, boolean, number), then only matching rows count', async () => {
    const request = items.parse({ category: 'b', inStock: true, limit: 100 })
    const { rows, total: counted } = await items.run<ItemRow>(sql, request)
    const expected = seeded.filter((item) => item.category === 'b' && item.inStock)
    expect(counted).toBe(expected.length)
    expect(rows.map((row) => row.id).sort((x, y) => x - y)).toEqual(expected.map((item) => item.id))
    const priced = await items.run(sql, items.parse({ price: 0 }))
    expect(priced.total).toBe(seeded.filter((item) => item.price === 0).length)
    expect(items.parameters(request)).toEqual({ page: ['b', true, 100, 0], count: ['b', true] })
  })

  it('when a filter or q is empty, then it is not applied', async () => {
    const request = items.parse({ category: '', q: '' })
    expect(request.filters).toEqual({})
    expect((await items.run(sql, request)).total).toBe(total)
  })

  it('when a filter holds several values, then 422', () => {
    const query = { category: ['a', 'b'] } as unknown as { category: string }
    expect(refusal(() => items.parse(query)).details?.[0]?.field).toBe('category')
  })

  it('when q is set, then the stored vector is searched (websearch syntax) together with the filters', async () => {
    const { rows, total: counted } = await items.run<ItemRow>(sql, items.parse({ q: 'zephyr', limit: 100 }))
    expect(counted).toBe(10)
    expect(rows.every((row) => row.name?.includes('Zephyr'))).toBe(true)
    const narrowed = await items.run(sql, items.parse({ q: 'zephyr -c', category: 'a' }))
    expect(narrowed.total).toBe(seeded.filter((i) => i.name.includes('Zephyr') && i.category === 'a').length)
    expect((await items.run(sql, items.parse({ q: 'nobodyhere' }))).total).toBe(0)
  })

  it('when the search is over fields, then to_tsvector of them; over substrings, then ILIKE with wildcards as text', async () => {
    const base = {
      table: 'items',
      columns,
      sortable: ['name'],
      defaultSort: 'name:asc',
      alwaysSelected: ['id'],
    } as const
    const byFields = defineList({
      ...base,
      selectable: ['id', 'name'],
      search: { fields: ['name', 'category'] },
    })
    expect((await byFields.run(sql, byFields.parse({ q: 'zephyr' }))).total).toBe(10)
    expect(byFields.statements(byFields.parse({ q: 'x' })).count).toBe(
      `select count(*)::int as total from "items" where to_tsvector('simple', coalesce("name", '') || ' ' || coalesce("category", '')) @@ websearch_to_tsquery('simple', $1)`,
    )
    const bySubstring = defineList({ ...base, selectable: ['id', 'name'], search: { substring: ['name'] } })
    expect((await bySubstring.run(sql, bySubstring.parse({ q: 'EPHY' }))).total).toBe(10)
    const percent = await bySubstring.run(sql, bySubstring.parse({ q: '0%' }))
    expect(percent.rows).toEqual([{ id: 8, name: 'Item 07 100% cotton' }])
    expect((await bySubstring.run(sql, bySubstring.parse({ q: '_' }))).total).toBe(0)
  })

  it('when a list without search is given q, then 422', () => {
    const plain = defineList({
      table: 'items',
      columns,
      selectable: ['id', 'name'],
      sortable: ['name'],
      defaultSort: 'name:asc',
      alwaysSelected: ['id'],
    })
    expect(refusal(() => plain.parse({ q: 'zephyr' })).details?.[0]?.field).toBe('q')
  })

  it('when run in a transaction, then it reads through it', async () => {
    const counted = await transaction(sql, async (tx) => {
      await tx`insert into items (id, name, category, price_cents, in_stock, created_at) values (999, 'Temp', 'z', 1, true, now())`
      const inside = await items.run(tx, items.parse({ category: 'z' }))
      await tx`delete from items where id = 999`
      return inside.total
    })
    expect(counted).toBe(1)
  })
})

describe('listEnvelope', () => {
  it('when a middle page is wrapped, then meta and links to first, prev, next and last keep the other parameters', () => {
    const query = { page: 2, limit: 20, sort: 'price:desc', category: 'a', inStock: true, q: 'x y' }
    const envelope = listEnvelope('/api/v1/items', query, items.parse(query), [{ id: 1 }], 50)
    const link = (page: number) =>
      `/api/v1/items?sort=price%3Adesc&category=a&inStock=true&q=x+y&page=${page}&limit=20`
    expect(envelope).toEqual({
      data: [{ id: 1 }],
      meta: { page: 2, limit: 20, total: 50, totalPages: 3 },
      links: { self: link(2), first: link(1), prev: link(1), next: link(3), last: link(3) },
    })
  })

  it('when nothing matched, then no prev or next and first and last name page 1', () => {
    const envelope = listEnvelope('/items', { page: 1, limit: 5 }, { page: 1, limit: 5 }, [], 0)
    expect(envelope.meta).toEqual({ page: 1, limit: 5, total: 0, totalPages: 0 })
    expect(envelope.links).toEqual({
      self: '/items?page=1&limit=5',
      first: '/items?page=1&limit=5',
      prev: null,
      next: null,
      last: '/items?page=1&limit=5',
    })
  })
})

describe('defineList: statements', () => {
  it('when requests share a shape, then they share the cached statement texts; the cache keeps at most cacheSize shapes', async () => {
    const small = defineList({
      table: 'items',
      columns,
      selectable: ['id', 'name', 'price'],
      sortable: ['name', 'price'],
      filterable: ['category'],
      defaultSort: 'name:asc',
      alwaysSelected: ['id'],
      cacheSize: 3,
    })
    const first = small.statements(small.parse({ category: 'a', page: 1 }))
    expect(small.statements(small.parse({ category: 'b', page: 3, limit: 5 }))).toBe(first)
    expect(small.cachedShapes).toBe(1)
    for (const query of [
      { sort: 'price:asc' },
      { sort: 'price:desc' },
      { fields: 'name' },
      { fields: 'price' },
      {},
    ]) {
      await small.run(sql, small.parse(query))
      expect(small.cachedShapes).toBeLessThanOrEqual(3)
    }
    expect(small.cachedShapes).toBe(3)
    expect((await small.run(sql, small.parse({ category: 'a' }))).total).toBe(17)
  })

  it('when sort, fields or filters carry SQL, then they are refused or bound as values, never written into a statement', async () => {
    for (const query of [
      { sort: 'name;drop table items:asc' },
      { sort: "name:asc'--" },
      { sort: 'name:asc;delete from items' },
      { sort: '"name":asc' },
      { fields: 'id,(select 1)' },
      { fields: 'name,"secret"' },
      { fields: 'id from items; drop table items --' },
    ]) {
      expect(refusal(() => items.parse(query)).statusCode).toBe(422)
    }
    const hostile = items.parse({ category: "a' or '1'='1", q: "'); drop table items; --" })
    const { page, count } = items.statements(hostile)
    expect(page).not.toContain('drop')
    expect(count).not.toContain("'1'")
    expect(await items.run(sql, hostile)).toEqual({ rows: [], total: 0 })
    expect(await countItems()).toBe(total)
  })

  it('when a definition names a field outside its lists, then it does not compile', () => {
    const base = { table: 'items', columns, selectable: ['id', 'name'], alwaysSelected: ['id'] } as const
    const definitions = () => [
      // @ts-expect-error 'nope' is not a field of columns
      defineList({ ...base, sortable: ['nope'], defaultSort: 'name:asc' }),
      // @ts-expect-error the default sort names a field that is not sortable
      defineList({ ...base, sortable: ['name'], defaultSort: 'price:asc' }),
      // @ts-expect-error a search over a field that is not in columns
      defineList({ ...base, sortable: ['name'], defaultSort: 'name:asc', search: { fields: ['secret'] } }),
    ]
    expect(definitions).toBeTypeOf('function')
  })

  it('when a definition names an unknown field or a column that is not a plain name, then it throws at once', () => {
    const base = {
      table: 'items',
      selectable: ['id'],
      sortable: ['id'],
      defaultSort: 'id:asc',
      alwaysSelected: ['id'],
    }
    expect(() => defineList({ ...base, columns: { id: 'id; drop table items' } } as never)).toThrow(
      /not a plain SQL name/,
    )
    expect(() => defineList({ ...base, table: 'items; --', columns: { id: 'id' } } as never)).toThrow(
      /not a plain/,
    )
    expect(() => defineList({ ...base, columns: { id: 'id' }, sortable: ['name'] } as never)).toThrow(
      /not in columns/,
    )
    expect(() => defineList({ ...base, columns: { id: 'id' }, defaultSort: 'id:up' } as never)).toThrow(
      /defaultSort/,
    )
    expect(() =>
      defineList({ ...base, columns: { id: 'id', page: 'page' }, filterable: ['page'] } as never),
    ).toThrow(/cannot be a filter/)
    expect(() =>
      defineList({ ...base, columns: { id: 'id' }, search: { vector: 'x', config: "simple')" } } as never),
    ).toThrow(/config/)
  })
})
