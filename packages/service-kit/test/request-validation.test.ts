// Validation of each request part as its schema documents it: query, path and headers are read from text, a JSON
// body keeps its types, no number coerced to Infinity gets through, and each problem names the field it is about.
import { expectErrorEnvelope } from '@meridian/testkit'
import { Type } from 'typebox'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createServiceApp, type ServiceApp, validationDetails } from '../src/index.ts'

describe('chassis: request validation', () => {
  let app: ServiceApp
  const seen: unknown[] = []

  beforeAll(async () => {
    app = await createServiceApp({
      name: 'validation-test',
      version: '1.0.0',
      environment: 'test',
      logLevel: 'silent',
      rateLimit: false,
    })
    app.post(
      '/items',
      {
        schema: {
          querystring: Type.Object(
            {
              page: Type.Integer({ minimum: 1, maximum: 1000, default: 1 }),
              tag: Type.Optional(Type.Array(Type.String())),
            },
            { additionalProperties: false },
          ),
          body: Type.Object(
            {
              name: Type.String(),
              tags: Type.Array(Type.String(), { default: [] }),
              count: Type.Optional(Type.Integer()),
            },
            { additionalProperties: false },
          ),
        },
      },
      async (request, reply) => {
        seen.push({ query: request.query, body: request.body })
        return reply.code(201).send({})
      },
    )
    await app.ready()
  })
  afterAll(async () => {
    await app.close()
  })

  const post = (url: string, body: unknown) =>
    app.inject({
      method: 'POST',
      url,
      headers: { 'content-type': 'application/json' },
      payload: JSON.stringify(body),
    })

  it('when query values arrive as text, then they are read as their types and defaults fill what is absent', async () => {
    seen.length = 0
    expect((await post('/items?page=2&tag=a', { name: 'x' })).statusCode).toBe(201)
    expect(seen).toEqual([{ query: { page: 2, tag: ['a'] }, body: { name: 'x', tags: [] } }])
  })

  it('when a JSON body field has another type than documented (a number for a string, a string for an array), then 422 names each', async () => {
    const response = await post('/items', { name: 123, tags: 'a', count: '7' })
    expect(expectErrorEnvelope(response, 422, 'VALIDATION_ERROR').details).toEqual([
      { field: 'name', message: 'must be string', received: '123' },
      { field: 'tags', message: 'must be array', received: 'a' },
      { field: 'count', message: 'must be integer', received: '7' },
    ])
  })

  it('when a query integer is written so that it reads as Infinity (1e400), then 422 names the parameter and the handler never sees it', async () => {
    seen.length = 0
    for (const page of ['1e400', '-1e400']) {
      const response = await post(`/items?page=${page}`, { name: 'x' })
      expect(expectErrorEnvelope(response, 422, 'VALIDATION_ERROR').details).toEqual([
        {
          field: 'page',
          message: 'must be a finite number',
          received: page.startsWith('-') ? '-Infinity' : 'Infinity',
        },
      ])
    }
    expect(seen).toEqual([])
  })

  it('when a query parameter has no name, then the detail names the query (not the body) and says what is wrong', async () => {
    const response = await post('/items?=1', { name: 'x' })
    expect(expectErrorEnvelope(response, 422, 'VALIDATION_ERROR').details).toEqual([
      { field: 'query', message: 'a parameter with an empty name is not allowed', received: '1' },
    ])
  })

  it('when an unknown query parameter has a slash in its name, then the detail names it as sent, with its value', async () => {
    const response = await post('/items?a%2Fb=1', { name: 'x' })
    expect(expectErrorEnvelope(response, 422, 'VALIDATION_ERROR').details).toEqual([
      { field: 'a/b', message: 'is not allowed', received: '1' },
    ])
  })

  it('when the body as a whole fails (not an object), then the detail names the body and never echoes it', () => {
    const details = validationDetails(
      [
        {
          keyword: 'type',
          instancePath: '',
          schemaPath: '#/type',
          params: { type: 'object' },
          message: 'must be object',
        },
      ],
      ['password', 'hunter2'],
      'body',
    )
    expect(details).toEqual([{ field: 'body', message: 'must be object' }])
  })

  it('when a nested body field or a header fails, then the field is its path, or the header by name', () => {
    expect(
      validationDetails(
        [
          {
            keyword: 'minimum',
            instancePath: '/items/0/quantity',
            schemaPath: '',
            params: {},
            message: 'must be >= 1',
          },
        ],
        { items: [{ quantity: 0 }] },
        'body',
      ),
    ).toEqual([{ field: 'items.0.quantity', message: 'must be >= 1', received: '0' }])
    expect(
      validationDetails(
        [
          {
            keyword: 'pattern',
            instancePath: '/if-match',
            schemaPath: '',
            params: {},
            message: 'must match',
          },
        ],
        { 'if-match': 'nope' },
        'headers',
      ),
    ).toEqual([{ field: 'if-match', message: 'must match', received: 'nope' }])
  })
})
