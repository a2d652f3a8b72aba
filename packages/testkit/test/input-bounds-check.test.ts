// The class check of issue 42 (src/input-bounds-check.ts), proved on hand-written schemas and a made-up document
// before any service's is read with it: each kind of unbounded place is named, a bounded one is not, a $ref is
// followed, a cycle ends, and the allowances are held to what they name.
import { describe, expect, it } from 'vitest'
import { cheapUniqueItems, expectInputsBounded, inputSchemasOf, unboundedIn } from '../src/index.ts'

const uuid = { type: 'string', format: 'uuid', maxLength: 36 }

describe('unboundedIn', () => {
  it('when a schema has each kind of unbounded place, then each is named by its path', () => {
    const schema = {
      type: 'object',
      properties: {
        name: { type: 'string', minLength: 1 },
        at: { type: 'string', format: 'date-time' },
        tags: { type: 'array', items: { type: 'string', maxLength: 20 } },
        ids: { type: 'array', items: uuid, uniqueItems: true },
        many: { type: 'array', items: uuid, uniqueItems: true, maxItems: cheapUniqueItems + 1 },
        labels: { type: 'object', patternProperties: { '^.*$': { type: 'string', maxLength: 10 } } },
        extra: { type: 'object', additionalProperties: { type: 'integer' } },
        note: { type: ['string', 'null'] },
      },
    }
    expect(unboundedIn(schema, 'body')).toEqual([
      'body.name: a string without maxLength',
      'body.at: a string without maxLength',
      'body.tags: an array without maxItems',
      'body.ids: an array without maxItems (its uniqueItems is checked pair by pair)',
      `body.many: a uniqueItems array whose maxItems ${cheapUniqueItems + 1} is past ${cheapUniqueItems} (checked pair by pair)`,
      'body.labels: an object of any keys without maxProperties',
      'body.extra: an object of any keys without maxProperties',
      'body.note: a string without maxLength',
    ])
  })

  it('when an unbounded place sits in items, a tuple, the values of any keys or a union, then its path says where', () => {
    const open = { type: 'string' }
    const schema = {
      type: 'object',
      properties: {
        lines: { type: 'array', maxItems: 10, items: { type: 'object', properties: { sku: open } } },
        pair: { type: 'array', maxItems: 2, prefixItems: [uuid, open] },
        legacy: { type: 'array', maxItems: 2, items: [open], additionalItems: open },
        byKey: { type: 'object', maxProperties: 5, patternProperties: { '^[a-z]+$': open } },
        rest: { type: 'object', maxProperties: 5, additionalProperties: open },
        either: { anyOf: [{ type: 'integer' }, open] },
        both: { allOf: [{ type: 'object', properties: { a: open } }] },
      },
    }
    expect(unboundedIn(schema, 'body')).toEqual([
      'body.lines[].sku: a string without maxLength',
      'body.pair[1]: a string without maxLength',
      'body.legacy[0]: a string without maxLength',
      'body.legacy[]: a string without maxLength',
      'body.byKey{}: a string without maxLength',
      'body.rest{}: a string without maxLength',
      'body.either: a string without maxLength',
      'body.both.a: a string without maxLength',
    ])
  })

  it('when every place is bounded, or fixed by an enum or a const, then nothing is named', () => {
    const schema = {
      type: 'object',
      additionalProperties: false,
      properties: {
        id: uuid,
        status: { type: 'string', enum: ['placed', 'paid'] },
        kind: { type: 'string', const: 'insert' },
        either: {
          anyOf: [
            { type: 'string', const: 'a' },
            { type: 'string', const: 'b' },
          ],
        },
        ids: { type: 'array', items: uuid, uniqueItems: true, maxItems: cheapUniqueItems },
        lines: {
          type: 'array',
          maxItems: 100,
          items: { type: 'object', properties: { quantity: { type: 'integer' } } },
        },
        labels: {
          type: 'object',
          maxProperties: 20,
          patternProperties: { '^.*$': { type: 'string', maxLength: 50 } },
        },
        flag: { type: 'boolean' },
        // nothing in it is validated: whatever it holds costs the validator nothing
        anything: {},
      },
    }
    expect(unboundedIn(schema, 'body')).toEqual([])
  })

  it('when a schema names a component by $ref, then the component is read; an unknown one is named', () => {
    const components = {
      Line: { type: 'object', properties: { sku: { type: 'string' }, id: uuid } },
    }
    const schema = {
      type: 'object',
      properties: {
        first: { $ref: '#/components/schemas/Line' },
        lines: { type: 'array', maxItems: 5, items: { $ref: '#/components/schemas/Line' } },
        lost: { $ref: '#/components/schemas/Missing' },
        elsewhere: { $ref: 'Line#' },
      },
    }
    expect(unboundedIn(schema, 'body', components)).toEqual([
      'body.first.sku: a string without maxLength',
      'body.lines[].sku: a string without maxLength',
      'body.lost: a $ref that names no schema of the document (#/components/schemas/Missing)',
      'body.elsewhere: a $ref that names no schema of the document (Line#)',
    ])
  })

  it('when one schema object is used in two places, then it is named in each', () => {
    const text = { type: 'string' }
    expect(unboundedIn({ type: 'object', properties: { a: text, b: text } }, 'query')).toEqual([
      'query.a: a string without maxLength',
      'query.b: a string without maxLength',
    ])
  })

  it('when schemas are cyclic, through a $ref or as objects, then the walk ends, each place named once', () => {
    const components = {
      Comment: {
        type: 'object',
        properties: {
          text: { type: 'string' },
          replies: { type: 'array', maxItems: 10, items: { $ref: '#/components/schemas/Comment' } },
        },
      },
    }
    expect(unboundedIn({ $ref: '#/components/schemas/Comment' }, 'body', components)).toEqual([
      'body.text: a string without maxLength',
    ])
    const node: Record<string, unknown> = { type: 'object', properties: { name: { type: 'string' } } }
    ;(node.properties as Record<string, unknown>).child = node
    expect(unboundedIn(node, 'body')).toEqual(['body.name: a string without maxLength'])
  })

  it('when the schema is not one (absent, a boolean), then nothing is named', () => {
    expect(unboundedIn(undefined, 'body')).toEqual([])
    expect(unboundedIn(true, 'body')).toEqual([])
  })
})

/** A document of two operations: parameters on the path and on the operation, a body, and an answer not read. */
const document = {
  paths: {
    '/things/{id}': {
      parameters: [{ in: 'path', name: 'id', schema: { type: 'string' } }],
      get: {
        parameters: [
          { in: 'query', name: 'q', schema: { type: 'string', maxLength: 200 } },
          { in: 'header', name: 'x-note', schema: { type: 'string' } },
        ],
        responses: { 200: { content: { 'application/json': { schema: { type: 'string' } } } } },
      },
      put: {
        requestBody: {
          content: { 'application/json': { schema: { $ref: '#/components/schemas/Thing' } } },
        },
      },
      summary: 'not an operation',
    },
  },
  components: {
    schemas: { Thing: { type: 'object', properties: { tags: { type: 'array', items: uuid } } } },
  },
}

/** What expectInputsBounded reads: an app whose /docs/json is `served`. */
const appServing = (served: unknown) => ({
  inject: async () => ({ statusCode: 200, headers: {}, json: () => served }),
})

describe('inputSchemasOf and expectInputsBounded', () => {
  it("when a document is read, then every operation's parameters and bodies are its inputs, answers not", () => {
    expect(inputSchemasOf(document).map(([where]) => where)).toEqual([
      'GET /things/{id}: path id',
      'GET /things/{id}: query q',
      'GET /things/{id}: header x-note',
      'PUT /things/{id}: path id',
      'PUT /things/{id}: body (application/json)',
    ])
  })

  it('when an operation has unbounded inputs, then the check fails naming each', async () => {
    const named = [
      'GET /things/{id}: path id: a string without maxLength',
      'GET /things/{id}: header x-note: a string without maxLength',
      'PUT /things/{id}: path id: a string without maxLength',
      'PUT /things/{id}: body (application/json).tags: an array without maxItems',
    ]
    const failure = await expectInputsBounded(appServing(document)).then(
      () => undefined,
      (error: Error) => error,
    )
    expect(failure?.message).toContain(`without a bound:\n${named.join('\n')}\n`)
  })

  it('when every unbounded place is allowed, then it passes and says how many inputs it read', async () => {
    const allowed = ['GET /things/{id}: path id', 'GET /things/{id}: header', 'PUT /things/{id}:']
    await expect(expectInputsBounded(appServing(document), allowed)).resolves.toBe(5)
  })

  it('when an allowance names no unbounded place, then the check fails naming it', async () => {
    const allowed = ['GET /things/{id}:', 'PUT /things/{id}:', 'DELETE /things/{id}:']
    await expect(expectInputsBounded(appServing(document), allowed)).rejects.toThrow(
      /DELETE \/things\/\{id\}:/,
    )
  })
})
