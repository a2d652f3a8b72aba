// Sizes first (src/input-bounds.ts), and refusals no larger than a page: the third hostile review sent
// `POST /api-keys` with 80,000 distinct scopes (auth spent 10 then 47 s on it: Ajv, collecting every problem, checked
// the array's uniqueness pair by pair although it was 80,000 items past its maxItems of 12) and a return of 150,000
// junk items (a 422 of 9.9 MB with 150,001 details). Time is shown by growth (4 times the input against its CPU), never
// by a budget in ms.
import { CreateApiKeyBody, MarkNotificationsReadBody } from '@meridian/contracts'
import { expectErrorEnvelope } from '@meridian/testkit'
import { Type } from 'typebox'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  boundsExceeded,
  createServiceApp,
  maxBoundProblems,
  maxValidationDetails,
  type ServiceApp,
} from '../src/index.ts'
import { partAwareValidator } from '../src/validation.ts'
import { growthBound, growthOf, rounded } from './fixtures/growth.ts'

type Validate = ((value: unknown) => unknown) & { errors?: unknown[] | null }

/** The chassis's validator of a JSON body, as Fastify builds it for a route. */
function bodyValidator(schema: unknown): Validate {
  const build = partAwareValidator() as unknown as (
    external: unknown,
    options?: unknown,
  ) => (route: { schema: unknown; httpPart: string; method: string; url: string }) => Validate
  return build({}, { customOptions: {} })({ schema, httpPart: 'body', method: 'POST', url: '/' })
}

/** `count` distinct strings that are not scopes (each one a problem of its own besides the array's size). */
const distinctJunk = (count: number) => Array.from({ length: count }, (_, index) => `scope-${index}`)

describe('sizes first', () => {
  it('when an array is past its maxItems, then that alone is the problem, named by its path', () => {
    const schema = Type.Object({
      order: Type.Object({ lines: Type.Array(Type.String({ maxLength: 3 }), { maxItems: 2 }) }),
    })
    expect(boundsExceeded(schema, { order: { lines: ['a', 'b', 'c'] } })).toEqual([
      { path: ['order', 'lines'], keyword: 'maxItems', limit: 2 },
    ])
    expect(boundsExceeded(schema, { order: { lines: ['a', 'long'] } })).toEqual([
      { path: ['order', 'lines', '1'], keyword: 'maxLength', limit: 3 },
    ])
    expect(boundsExceeded(schema, { order: { lines: ['a', 'b'] } })).toEqual([])
  })

  it('when a string is measured, then code points count, as JSON Schema counts them (an emoji is one)', () => {
    const schema = Type.String({ maxLength: 2 })
    expect(boundsExceeded(schema, '😀😀')).toEqual([])
    expect(boundsExceeded(schema, '😀😀😀')).toEqual([{ path: [], keyword: 'maxLength', limit: 2 }])
  })

  it('when a value is past a bound in one branch of a union only, then it is not refused for size (another may take it)', () => {
    const schema = Type.Union([Type.String({ maxLength: 2 }), Type.String({ maxLength: 10 })])
    expect(boundsExceeded(schema, 'abcdef')).toEqual([])
    expect(boundsExceeded(schema, 'x'.repeat(11))).toEqual([{ path: [], keyword: 'maxLength', limit: 2 }])
  })

  it('when an object has more properties than its maxProperties, or a record holds a value too long, then so it is told', () => {
    const schema = Type.Record(Type.String(), Type.String({ maxLength: 1 }), { maxProperties: 2 })
    expect(boundsExceeded(schema, { a: '1', b: '2', c: '3' })).toEqual([
      { path: [], keyword: 'maxProperties', limit: 2 },
    ])
    expect(boundsExceeded(schema, { a: '12' })).toEqual([{ path: ['a'], keyword: 'maxLength', limit: 1 }])
  })

  it(`when many values are past their bounds, then the first ${maxBoundProblems} are told`, () => {
    const schema = Type.Array(Type.String({ maxLength: 1 }), { maxItems: 1000 })
    expect(
      boundsExceeded(
        schema,
        Array.from({ length: 500 }, () => 'too long'),
      ),
    ).toHaveLength(maxBoundProblems)
  })

  it('when 80,000 distinct scopes make an API key, then the refusal names the size alone, and 4 times the scopes cost about 4 times the CPU (16 when the uniqueness is checked first)', () => {
    const validate = bodyValidator(CreateApiKeyBody)
    const body = (count: number) => ({ name: 'a key', scopes: distinctJunk(count) })
    expect(validate(body(80_000))).toBe(false)
    expect(validate.errors).toEqual([
      expect.objectContaining({ instancePath: '/scopes', keyword: 'maxItems' }),
    ])
    // linear: 4 and some; the review's pairwise uniqueness made it 16
    const growth = growthOf((input) => validate(input), [body(20_000)], [body(80_000)])
    expect(growth.ratio, JSON.stringify(rounded(growth))).toBeLessThan(growthBound)
  })

  it('when 40,000 repeated ids are marked read, then the refusal names the size alone', () => {
    const validate = bodyValidator(MarkNotificationsReadBody)
    const id = '00000000-0000-4000-8000-000000000000'
    expect(validate({ notificationIds: Array.from({ length: 40_000 }, () => id) })).toBe(false)
    expect(validate.errors).toEqual([
      expect.objectContaining({ instancePath: '/notificationIds', keyword: 'maxItems' }),
    ])
  })
})

describe('refusals no larger than a page', () => {
  let app: ServiceApp

  beforeAll(async () => {
    app = await createServiceApp({
      name: 'bounds-test',
      version: '1.0.0',
      environment: 'test',
      logLevel: 'silent',
      rateLimit: false,
    })
    app.post(
      '/returns',
      {
        schema: {
          body: Type.Object(
            {
              items: Type.Array(
                Type.Object({ sku: Type.String({ maxLength: 20 }), quantity: Type.Integer({ minimum: 1 }) }),
                { maxItems: 200 },
              ),
            },
            { additionalProperties: false },
          ),
        },
      },
      async (_request, reply) => reply.code(201).send({}),
    )
    await app.ready()
  })
  afterAll(async () => {
    await app.close()
  })

  const post = (body: unknown) =>
    app.inject({
      method: 'POST',
      url: '/returns',
      headers: { 'content-type': 'application/json' },
      payload: JSON.stringify(body),
    })

  it(`when a body has 200 wrong items, then the refusal lists the first ${maxValidationDetails} problems and counts the rest`, async () => {
    const response = await post({ items: Array.from({ length: 200 }, () => ({ sku: 1, quantity: 0 })) })
    const error = expectErrorEnvelope(response, 422, 'VALIDATION_ERROR')
    const details = error.details ?? []
    expect(details).toHaveLength(maxValidationDetails + 1)
    expect(details[0]).toMatchObject({ field: 'items.0.sku' })
    // two problems an item (sku's type, quantity's minimum): 400 in all
    expect(details.at(-1)).toEqual({
      field: 'body',
      message: `and ${400 - maxValidationDetails} more problems`,
    })
  })

  it('when a body has 150,000 junk items, then the refusal is one detail about the size, not one per item', async () => {
    const response = await post({ items: Array.from({ length: 150_000 }, () => ({})) })
    const error = expectErrorEnvelope(response, 422, 'VALIDATION_ERROR')
    expect(error.details).toHaveLength(1)
    expect(error.details?.[0]).toMatchObject({ field: 'items', message: 'must NOT have more than 200 items' })
    expect(response.body.length).toBeLessThan(1000)
  })
})
