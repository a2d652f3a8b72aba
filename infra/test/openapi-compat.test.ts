// The HTTP contract's compatibility check on the released document itself: unchanged it finds nothing, each kind of
// deliberate break is found and named, and what docs/how-to/releasing.md calls not breaking is let through.
// (tests/e2e/test/openapi-compat.test.ts compares the running system's document with the newest release.)
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import {
  type BreakingChange,
  breakingChanges,
  describeChanges,
  latestReleasedOpenApi,
  type OpenApiDocument,
  releasedVersions,
} from '../src/release/openapi-compat.ts'

const repoRoot = fileURLToPath(new URL('../..', import.meta.url))
const latest = latestReleasedOpenApi(repoRoot)
if (!latest) throw new Error('no release under releases/: the check compares with the newest one')
const released = latest.document

// the document's parts the edits below reach into, loosely typed: a test edits JSON
// biome-ignore lint/suspicious/noExplicitAny: a test edits the parsed JSON document freely
type Json = any

const copy = (): Json => structuredClone(released)
const placeOrder = (document: Json) => document.paths['/api/v1/orders'].post
const placed = (document: Json) => placeOrder(document).responses['201'].content['application/json'].schema
const orderBody = (document: Json) => placeOrder(document).requestBody.content['application/json'].schema

const found = (changes: BreakingChange[]) =>
  changes.map(({ operation, where, change }) => ({ operation, where: where.trim(), change }))

describe('OpenAPI compatibility with the newest release', () => {
  it('when the releases are listed, then the newest comes first in SemVer order', () => {
    expect(releasedVersions(repoRoot)[0]).toBe(latest.version)
    expect(Object.keys(released.paths ?? {}).length).toBeGreaterThan(50)
  })

  it('when the document is the released one, then nothing breaks', () => {
    expect(describeChanges(breakingChanges(released, copy()))).toBe('')
  })

  it('when an operation is removed, then it is named', () => {
    const document = copy()
    delete document.paths['/api/v1/orders'].post
    expect(found(breakingChanges(released, document))).toEqual([
      { operation: 'POST /api/v1/orders', where: 'operation', change: 'removed' },
    ])
  })

  it('when a request gains a required field, a bound narrows or an enum loses a value, then each is named', () => {
    const document = copy()
    const body = orderBody(document)
    body.properties.giftWrap = { type: 'boolean' }
    body.required.push('giftWrap')
    body.properties.items.items.properties.quantity.maximum = 10
    const parameter = placeOrder(document).parameters.find((each: Json) => each.name === 'idempotency-key')
    parameter.schema.maxLength = 64
    parameter.required = true
    const changes = found(breakingChanges(released, document))
    expect(changes).toEqual(
      expect.arrayContaining([
        { operation: 'POST /api/v1/orders', where: 'request body .giftWrap', change: 'a new required field' },
        {
          operation: 'POST /api/v1/orders',
          where: 'request body .items[].quantity',
          change: 'maximum narrowed from 1000 to 10',
        },
        {
          operation: 'POST /api/v1/orders',
          where: 'parameter header idempotency-key',
          change: 'made required',
        },
        {
          operation: 'POST /api/v1/orders',
          where: 'parameter header idempotency-key',
          change: 'maxLength narrowed from 255 to 64',
        },
      ]),
    )
    expect(changes).toHaveLength(4)
  })

  it('when a response field is removed or made optional, a status is no longer answered or the scopes change, then each is named', () => {
    const document = copy()
    delete placed(document).properties.total
    placed(document).required = placed(document).required.filter((name: string) => name !== 'status')
    placeOrder(document).security = [{ bearerAuth: ['orders:admin'] }]
    delete placeOrder(document).responses['422']
    const changes = found(breakingChanges(released, document))
    expect(changes).toEqual(
      expect.arrayContaining([
        { operation: 'POST /api/v1/orders', where: 'response 201 .total', change: 'removed' },
        { operation: 'POST /api/v1/orders', where: 'response 201 .status', change: 'made optional' },
        { operation: 'POST /api/v1/orders', where: 'response 422', change: 'no longer answered' },
      ]),
    )
    expect(changes.some(({ where }) => where === 'security')).toBe(true)
  })

  it('when only what a client tolerates is added (a v2 path, optional fields, a response enum value, a wider bound), then nothing breaks', () => {
    const document = copy()
    document.paths['/api/v2/orders'] = { post: structuredClone(placeOrder(document)) }
    orderBody(document).properties.note = { type: 'string', maxLength: 500 }
    placed(document).properties.estimatedDelivery = { type: 'string', format: 'date-time' }
    placed(document).properties.status.enum.push('on_hold')
    orderBody(document).properties.items.items.properties.quantity.maximum = 5000
    expect(describeChanges(breakingChanges(released, document))).toBe('')
  })

  it('when a later version of a path changes or goes, then v1 is what is compared', () => {
    const before: OpenApiDocument = structuredClone(released)
    const paths = before.paths ?? {}
    paths['/api/v2/orders'] = { post: structuredClone(paths['/api/v1/orders']?.post) }
    expect(describeChanges(breakingChanges(before, copy()))).toBe('')
  })

  it('when a path the caller ignores is gone, then it is not reported; the others still are', () => {
    const document = copy()
    const ignored = Object.keys(document.paths).filter((path) => path.startsWith('/api/v1/products'))
    expect(ignored.length).toBeGreaterThan(0)
    for (const path of ignored) delete document.paths[path]
    delete document.paths['/api/v1/orders'].post
    const changes = breakingChanges(released, document, {
      ignorePaths: (path) => path.startsWith('/api/v1/products'),
    })
    expect(changes.map(({ operation }) => operation)).toEqual(['POST /api/v1/orders'])
  })
})
