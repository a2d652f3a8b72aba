// The catalogue over HTTP: /api/v1/products (and its /api alias) and the internal lookup, on a real database.
import { randomUUID } from 'node:crypto'
import type { AddressInfo } from 'node:net'
import {
  asAdmin,
  asService,
  asUser,
  expectErrorEnvelope,
  rawJsonPost,
  testServiceCredential,
  tokenEnv,
} from '@meridian/testkit'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildInventoryTestApp, type InventoryTestApp } from './support/app.ts'
import { createTestProduct, uniqueSku } from './support/products.ts'

let inventory: InventoryTestApp

beforeAll(async () => {
  inventory = await buildInventoryTestApp({ ...tokenEnv })
})

afterAll(async () => {
  await inventory?.close()
})

const post = (url: string, payload: unknown, headers: Record<string, string> = asAdmin()) =>
  inventory.app.inject({ method: 'POST', url, payload: payload as object, headers })
const patch = (url: string, payload: unknown, headers: Record<string, string> = asAdmin()) =>
  inventory.app.inject({ method: 'PATCH', url, payload: payload as object, headers })
const get = (url: string, headers: Record<string, string> = {}) =>
  inventory.app.inject({ method: 'GET', url, headers })

const newProduct = (overrides: Record<string, unknown> = {}) => ({
  sku: uniqueSku(),
  name: 'Blue mug',
  description: 'A mug, blue',
  price: 19.99,
  stock: 5,
  ...overrides,
})

describe('POST /api/v1/products', () => {
  it('when an admin creates a product, then 201 with Location, ETag and the product (price exact, stock available)', async () => {
    const body = newProduct({ name: '  Blue mug  ', price: 0.07 })
    const answer = await post('/api/v1/products', body)
    expect(answer.statusCode).toBe(201)
    const product = answer.json()
    expect(product).toEqual({
      id: expect.any(String),
      sku: body.sku,
      name: 'Blue mug',
      description: 'A mug, blue',
      price: 0.07,
      available: 5,
      reserved: 0,
      active: true,
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
    })
    expect(answer.headers.location).toBe(`/api/v1/products/${product.id}`)
    expect(answer.headers.etag).toBe(`"${product.id}.1"`)
    const [stored] = await inventory.sql<{ priceCents: string }[]>`
      select price_cents from products where id = ${product.id}`
    expect(Number(stored?.priceCents)).toBe(7)
    const movements = await inventory.sql`
      select delta_available, delta_reserved, reason from stock_movements where product_id = ${product.id}`
    expect([...movements]).toEqual([{ deltaAvailable: 5, deltaReserved: 0, reason: 'initial stock' }])
  })

  it('when no credentials are sent, then 401; when a non-admin creates, then 403; nothing is written', async () => {
    const body = newProduct()
    expectErrorEnvelope(await post('/api/v1/products', body, {}), 401, 'UNAUTHORIZED')
    expectErrorEnvelope(await post('/api/v1/products', body, asUser()), 403, 'FORBIDDEN')
    const rows = await inventory.sql`select 1 from products where sku = ${body.sku}`
    expect(rows.length).toBe(0)
  })

  it('when the sku is taken, then 409 CONFLICT naming sku', async () => {
    const body = newProduct()
    expect((await post('/api/v1/products', body)).statusCode).toBe(201)
    const error = expectErrorEnvelope(
      await post('/api/v1/products', { ...body, name: 'Another' }),
      409,
      'CONFLICT',
    )
    expect(error.details).toEqual([expect.objectContaining({ field: 'sku' })])
  })

  it('when the price has three decimals, is negative or is text, then 422 naming price', async () => {
    for (const price of [19.999, 0.001, -1, '19.99']) {
      const error = expectErrorEnvelope(
        await post('/api/v1/products', newProduct({ price })),
        422,
        'VALIDATION_ERROR',
        { context: String(price) },
      )
      expect(error.details?.map((detail) => detail.field)).toEqual(['price'])
    }
  })

  it('when the body has an unknown field, a bad sku or negative stock, then 422 naming it', async () => {
    const cases: [Record<string, unknown>, string][] = [
      [newProduct({ color: 'blue' }), 'color'],
      [newProduct({ sku: 'has space' }), 'sku'],
      [newProduct({ stock: -1 }), 'stock'],
      [newProduct({ stock: 1.5 }), 'stock'],
      [newProduct({ name: '   ' }), 'name'],
      [newProduct({ name: 'nul\u0000' }), 'name'],
    ]
    for (const [body, field] of cases) {
      const error = expectErrorEnvelope(await post('/api/v1/products', body), 422, 'VALIDATION_ERROR', {
        context: field,
      })
      expect(JSON.stringify(error.details), field).toContain(field)
    }
  })
})

describe('GET /api/v1/products/:id', () => {
  it('when read by anyone, then 200 with ETag; with If-None-Match of it, then 304 without a body', async () => {
    const created = await createTestProduct(inventory, { price: 12.5 })
    const answer = await get(`/api/v1/products/${created.id}`)
    expect(answer.statusCode).toBe(200)
    expect(answer.json()).toMatchObject({ id: created.id, price: 12.5, available: 10, reserved: 0 })
    const etag = answer.headers.etag as string
    expect(etag).toBe(`"${created.id}.1"`)

    const again = await get(`/api/v1/products/${created.id}`, { 'if-none-match': etag })
    expect(again.statusCode).toBe(304)
    expect(again.body).toBe('')
    const stale = await get(`/api/v1/products/${created.id}`, { 'if-none-match': `"${created.id}.0"` })
    expect(stale.statusCode).toBe(200)
  })

  it('when the product does not exist, then 404; when the id is not a uuid, then 422', async () => {
    expectErrorEnvelope(await get(`/api/v1/products/${randomUUID()}`), 404, 'NOT_FOUND')
    expectErrorEnvelope(await get('/api/v1/products/not-a-uuid'), 422, 'VALIDATION_ERROR')
  })

  it('when read through the /api alias, then the same product', async () => {
    const created = await createTestProduct(inventory)
    const answer = await get(`/api/products/${created.id}`)
    expect(answer.statusCode).toBe(200)
    expect(answer.json()).toMatchObject({ id: created.id })
  })
})

describe('PATCH /api/v1/products/:id', () => {
  it('when changed with the current If-Match, then 200 with a new ETag; with the old one, then 412', async () => {
    const created = await createTestProduct(inventory)
    const first = `"${created.id}.1"`
    const answer = await patch(
      `/api/v1/products/${created.id}`,
      { name: 'Renamed', price: 4.35, active: false, description: null },
      { ...asAdmin(), 'if-match': first },
    )
    expect(answer.statusCode).toBe(200)
    expect(answer.headers.etag).toBe(`"${created.id}.2"`)
    const changed = answer.json()
    expect(changed).toMatchObject({ name: 'Renamed', price: 4.35, active: false })
    expect(changed).not.toHaveProperty('description')

    expectErrorEnvelope(
      await patch(`/api/v1/products/${created.id}`, { name: 'Stale' }, { ...asAdmin(), 'if-match': first }),
      412,
      'PRECONDITION_FAILED',
    )
    // without If-Match: unconditional
    const unconditional = await patch(`/api/v1/products/${created.id}`, { name: 'Anyway' })
    expect(unconditional.statusCode).toBe(200)
    expect(unconditional.headers.etag).toBe(`"${created.id}.3"`)
  })

  it('when not an admin, then 401 or 403; when unknown, then 404; when bad, then 422', async () => {
    const created = await createTestProduct(inventory)
    const url = `/api/v1/products/${created.id}`
    expectErrorEnvelope(await patch(url, { name: 'x' }, {}), 401, 'UNAUTHORIZED')
    expectErrorEnvelope(await patch(url, { name: 'x' }, asUser()), 403, 'FORBIDDEN')
    expectErrorEnvelope(await patch(`/api/v1/products/${randomUUID()}`, { name: 'x' }), 404, 'NOT_FOUND')
    expectErrorEnvelope(
      await patch(`/api/v1/products/${randomUUID()}`, { name: 'x' }, { ...asAdmin(), 'if-match': '"x.1"' }),
      404,
      'NOT_FOUND',
    )
    const price = expectErrorEnvelope(await patch(url, { price: 1.234 }), 422, 'VALIDATION_ERROR')
    expect(price.details?.map((detail) => detail.field)).toEqual(['price'])
    expectErrorEnvelope(await patch(url, {}), 422, 'VALIDATION_ERROR')
    expectErrorEnvelope(await patch(url, { available: 100 }), 422, 'VALIDATION_ERROR')
    expectErrorEnvelope(await patch(url, { sku: 'NEW-SKU' }), 422, 'VALIDATION_ERROR')
  })
})

describe('POST /api/v1/products/:id/stock-adjustments', () => {
  it('when stock is added or taken, then 200 with the product and a movement recorded for each', async () => {
    const created = await createTestProduct(inventory, { stock: 3 })
    const url = `/api/v1/products/${created.id}/stock-adjustments`
    const added = await post(url, { delta: 7, reason: 'delivery 42' })
    expect(added.statusCode).toBe(200)
    expect(added.json()).toMatchObject({ id: created.id, available: 10, reserved: 0 })
    expect(added.headers.etag).toBe(`"${created.id}.2"`)
    const taken = await post(url, { delta: -10, reason: 'broken' })
    expect(taken.statusCode).toBe(200)
    expect(taken.json()).toMatchObject({ available: 0 })
    const movements = await inventory.sql`
      select delta_available, reason from stock_movements where product_id = ${created.id} order by id`
    expect([...movements]).toEqual([
      { deltaAvailable: 3, reason: 'initial stock' },
      { deltaAvailable: 7, reason: 'adjustment: delivery 42' },
      { deltaAvailable: -10, reason: 'adjustment: broken' },
    ])
  })

  it('when it would take available below zero, then 409 and nothing changes (reserved stock is not touched)', async () => {
    const created = await createTestProduct(inventory, { stock: 4 })
    await inventory.sql`update products set reserved = 6 where id = ${created.id}`
    const url = `/api/v1/products/${created.id}/stock-adjustments`
    const error = expectErrorEnvelope(await post(url, { delta: -5, reason: 'count' }), 409, 'CONFLICT')
    expect(error.details).toEqual([expect.objectContaining({ field: 'delta' })])
    const [row] = await inventory.sql`select available, reserved from products where id = ${created.id}`
    expect(row).toEqual({ available: 4, reserved: 6 })
    const movements = await inventory.sql`select 1 from stock_movements where product_id = ${created.id}`
    expect(movements.length).toBe(1)
  })

  it('when the delta is 0 or not an integer, the reason is missing, the product unknown or the caller no admin, then refused', async () => {
    const created = await createTestProduct(inventory)
    const url = `/api/v1/products/${created.id}/stock-adjustments`
    const zero = expectErrorEnvelope(await post(url, { delta: 0, reason: 'x' }), 422, 'VALIDATION_ERROR')
    expect(zero.details?.map((detail) => detail.field)).toEqual(['delta'])
    expectErrorEnvelope(await post(url, { delta: 1.5, reason: 'x' }), 422, 'VALIDATION_ERROR')
    expectErrorEnvelope(await post(url, { delta: 1 }), 422, 'VALIDATION_ERROR')
    expectErrorEnvelope(await post(url, { delta: 1, reason: '' }), 422, 'VALIDATION_ERROR')
    expectErrorEnvelope(
      await post(`/api/v1/products/${randomUUID()}/stock-adjustments`, { delta: 1, reason: 'x' }),
      404,
      'NOT_FOUND',
    )
    expectErrorEnvelope(await post(url, { delta: 1, reason: 'x' }, {}), 401, 'UNAUTHORIZED')
    expectErrorEnvelope(await post(url, { delta: 1, reason: 'x' }, asUser()), 403, 'FORBIDDEN')
  })
})

describe('GET /api/v1/products', () => {
  // a catalogue of its own, told apart from the other tests' products by a word in the name
  const word = `zz${randomUUID().slice(0, 8)}`
  const skus = [uniqueSku('LIST'), uniqueSku('LIST'), uniqueSku('LIST')]

  beforeAll(async () => {
    await createTestProduct(inventory, { sku: skus[0], name: `Apple ${word}`, price: 3, stock: 30 })
    await createTestProduct(inventory, { sku: skus[1], name: `Cherry ${word}`, price: 1.5, stock: 10 })
    await createTestProduct(inventory, {
      sku: skus[2],
      name: `Banana ${word}`,
      price: 2.25,
      stock: 20,
      active: false,
    })
  })

  it('when listed by anyone with q and a sort, then the matching page in that order with the envelope', async () => {
    const answer = await get(`/api/v1/products?q=${word}&sort=price:asc&limit=2`)
    expect(answer.statusCode).toBe(200)
    const body = answer.json()
    expect(body.data.map((product: { price: number }) => product.price)).toEqual([1.5, 2.25])
    expect(body.meta).toEqual({ page: 1, limit: 2, total: 3, totalPages: 2 })
    expect(body.links.next).toBe(`/api/v1/products?q=${word}&sort=price%3Aasc&page=2&limit=2`)
    const second = await get(body.links.next)
    expect(second.json().data.map((product: { name: string }) => product.name)).toEqual([`Apple ${word}`])
  })

  it('when sorted by name or available, then in that order', async () => {
    const byName = (await get(`/api/v1/products?q=${word}&sort=name:desc`)).json()
    expect(byName.data.map((product: { name: string }) => product.name.split(' ')[0])).toEqual([
      'Cherry',
      'Banana',
      'Apple',
    ])
    const byAvailable = (await get(`/api/v1/products?q=${word}&sort=available:asc`)).json()
    expect(byAvailable.data.map((product: { available: number }) => product.available)).toEqual([10, 20, 30])
  })

  it('when filtered by active or sku, then only those; when fields are asked, then only those (and id)', async () => {
    const active = (await get(`/api/v1/products?q=${word}&active=false`)).json()
    expect(active.data.map((product: { sku: string }) => product.sku)).toEqual([skus[2]])
    expect(active.links.self).toContain('active=false')
    const bySku = (await get(`/api/v1/products?sku=${skus[1]}`)).json()
    expect(bySku.data).toHaveLength(1)
    expect(bySku.data[0]).toMatchObject({ sku: skus[1], price: 1.5, active: true })
    const sparse = (await get(`/api/v1/products?q=${word}&fields=name,price&sort=name:asc`)).json()
    expect(sparse.data[0]).toEqual({ id: expect.any(String), name: `Apple ${word}`, price: 3 })
  })

  it('when the sku is searched with q, then it is found', async () => {
    const found = (await get(`/api/v1/products?q=${skus[0]}`)).json()
    expect(found.data.map((product: { sku: string }) => product.sku)).toEqual([skus[0]])
  })

  it('when sort, fields or a filter are outside the allow-lists, then 422 naming them', async () => {
    for (const [query, field] of [
      ['sort=reserved:asc', 'sort'],
      ['sort=price', 'sort'],
      ['fields=version', 'fields'],
      ['color=blue', 'color'],
      ['active=maybe', 'active'],
      ['limit=101', 'limit'],
    ] as const) {
      const error = expectErrorEnvelope(await get(`/api/v1/products?${query}`), 422, 'VALIDATION_ERROR', {
        context: query,
      })
      expect(JSON.stringify(error.details), query).toContain(field)
    }
  })

  it('when listed through the /api alias, then the same list', async () => {
    const answer = await get(`/api/products?q=${word}`)
    expect(answer.statusCode).toBe(200)
    expect(answer.json().meta.total).toBe(3)
  })
})

describe('POST /internal/products/lookup', () => {
  it('when asked for ids, then the known products in the order asked, each once, with price and availability', async () => {
    const a = await createTestProduct(inventory, { price: 0.1, stock: 2 })
    const b = await createTestProduct(inventory, { price: 0.2, stock: 0, active: false })
    const answer = await post(
      '/internal/products/lookup',
      { ids: [b.id, randomUUID(), a.id, b.id.toUpperCase()] },
      asService(),
    )
    expect(answer.statusCode).toBe(200)
    expect(answer.json()).toEqual({
      products: [
        { id: b.id, name: b.name, price: 0.2, available: 0, active: false },
        { id: a.id, name: a.name, price: 0.1, available: 2, active: true },
      ],
    })
  })

  it('when ids are missing, empty, too many or not uuids, then 422', async () => {
    for (const body of [
      {},
      { ids: [] },
      { ids: ['nope'] },
      { ids: Array.from({ length: 101 }, () => randomUUID()) },
    ]) {
      expectErrorEnvelope(
        await post('/internal/products/lookup', body, asService()),
        422,
        'VALIDATION_ERROR',
        {
          context: JSON.stringify(body).slice(0, 40),
        },
      )
    }
  })

  it('when a caller on the network sends no credential or a wrong one, then 401 and no product; with it, the products', async () => {
    const product = await createTestProduct(inventory, { price: 3.5, stock: 1 })
    await inventory.app.listen({ host: '127.0.0.1', port: 0 })
    const port = (inventory.app.server.address() as AddressInfo).port
    const lookup = (headers: [string, string][]) =>
      rawJsonPost(port, '/internal/products/lookup', { ids: [product.id] }, headers)
    for (const headers of [
      [],
      [['X-Service-Credential', 'insecure-development-service-credential-0001']],
      [['X-Service-Credential', testServiceCredential.slice(0, -1)]],
      [['Authorization', asAdmin().authorization]],
    ] as [string, string][][]) {
      const answer = await lookup(headers)
      const context = headers.map(([name]) => name).join(', ') || 'no header'
      expectErrorEnvelope(answer, 401, 'UNAUTHORIZED', { context })
      expect(answer.body ?? '', context).not.toContain(product.id)
    }
    const answer = await lookup([['X-Service-Credential', testServiceCredential]])
    expect(answer.statusCode).toBe(200)
    expect(answer.json()).toEqual({
      products: [{ id: product.id, name: product.name, price: 3.5, available: 1, active: true }],
    })
  })

  it('when the OpenAPI document is read, then the catalogue and the internal lookup are in it, the alias is not', async () => {
    const paths = Object.keys((await get('/docs/json')).json().paths)
    expect(paths).toEqual(
      expect.arrayContaining([
        '/api/v1/products',
        '/api/v1/products/{id}',
        '/api/v1/products/{id}/stock-adjustments',
        '/internal/products/lookup',
      ]),
    )
    expect(paths.filter((path) => path.startsWith('/api/products'))).toEqual([])
  })
})
