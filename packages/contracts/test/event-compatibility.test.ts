// The schema-compatibility check: main's catalogue against the released document, and deliberately breaking changes
// that it must report (and compatible ones it must let through).
import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { asyncApiDocument, dataSchemaName } from '../src/asyncapi.ts'
import { eventCompatibilityProblems } from '../src/event-compatibility.ts'

const released = () =>
  JSON.parse(readFileSync(new URL('../../../docs/asyncapi.released.json', import.meta.url), 'utf8'))

// biome-ignore lint/suspicious/noExplicitAny: the generated document is edited as plain JSON
type Json = Record<string, any>

/** The generated document with one event type's data schema and version changed by `change`. */
function changed(type: string, change: (data: Json, message: Json) => void): Json {
  const document = asyncApiDocument() as Json
  change(document.components.schemas[dataSchemaName(type)], document.components.messages[type])
  return document
}

const problemsOf = (current: Json) =>
  eventCompatibilityProblems(asyncApiDocument(), current).map(
    ({ type, path, problem }) => `${type} ${path}: ${problem}`,
  )

describe('the schema-compatibility check', () => {
  it("when main's contracts are compared with the released document, then no event type breaks its consumers", () => {
    // a failure here: a change to an event's schema that its consumers cannot read; publish `<type>.v2` instead
    const baseline = released()
    // the baseline holds the catalogue's events (a document without them would leave nothing to compare)
    expect(
      Object.keys(baseline.components.schemas).filter((name) => name.endsWith('.data')).length,
    ).toBeGreaterThan(20)
    const problems = eventCompatibilityProblems(baseline, asyncApiDocument())
    expect(problems.map(({ type, path, problem }) => `${type} ${path}: ${problem}`)).toEqual([])
  })

  it('when a required field is removed, then consumers of the released schema are reported unable to read new events', () => {
    const problems = problemsOf(
      changed('order.placed', (data, message) => {
        delete data.properties.customerId
        data.required = data.required.filter((name: string) => name !== 'customerId')
        message['x-schema-version'] = '1.1.0'
      }),
    )
    expect(problems).toEqual([
      'order.placed data.customerId: consumers of the released schema cannot read new events: required when read, not written',
    ])
  })

  it("when a field's type changes, then both sides are reported", () => {
    const problems = problemsOf(
      changed('order.placed', (data, message) => {
        data.properties.total = { type: 'string' }
        message['x-schema-version'] = '1.1.0'
      }),
    )
    expect(problems).toEqual([
      'order.placed data.total: consumers of the released schema cannot read new events: type string is written, number is read',
      'order.placed data.total: consumers of the new schema cannot read released events: type number is written, string is read',
    ])
  })

  it('when a required field becomes optional, or an optional one required, then the side that cannot read is reported', () => {
    const loosened = problemsOf(
      changed('payment.failed', (data, message) => {
        data.required = ['orderId']
        message['x-schema-version'] = '1.1.0'
      }),
    )
    expect(loosened).toEqual([
      'payment.failed data.reason: consumers of the released schema cannot read new events: required when read, optional when written',
    ])
    const tightened = problemsOf(
      changed('inventory.reserved', (data, message) => {
        data.required.push('customerId')
        message['x-schema-version'] = '1.2.0'
      }),
    )
    expect(tightened).toEqual([
      'inventory.reserved data.customerId: consumers of the new schema cannot read released events: required when read, optional when written',
    ])
  })

  it('when a new required field is added, then consumers of the new schema are reported unable to read released events', () => {
    const problems = problemsOf(
      changed('order.completed', (data, message) => {
        data.properties.completedAt = { type: 'string', format: 'date-time' }
        data.required.push('completedAt')
        message['x-schema-version'] = '1.1.0'
      }),
    )
    expect(problems).toEqual([
      'order.completed data.completedAt: consumers of the new schema cannot read released events: required when read, not written',
    ])
  })

  it('when bounds are narrowed, then released events that new consumers refuse are reported', () => {
    const problems = problemsOf(
      changed('order.placed', (data, message) => {
        data.properties.items.items.properties.productId.maxLength = 64
        data.properties.items.minItems = 2
        message['x-schema-version'] = '1.1.0'
      }),
    )
    expect(problems).toEqual([
      'order.placed data.items: consumers of the new schema cannot read released events: minItems 2 is read, 1 is written',
      'order.placed data.items[].productId: consumers of the new schema cannot read released events: maxLength 64 is read, 255 is written',
    ])
  })

  it('when an event type is removed, then it is reported', () => {
    const document = asyncApiDocument() as Json
    delete document.components.messages['post.created']
    delete document.components.schemas[dataSchemaName('post.created')]
    expect(eventCompatibilityProblems(asyncApiDocument(), document)).toEqual([
      {
        type: 'post.created',
        path: 'type',
        problem: 'the event type was removed; its consumers and stored events remain',
      },
    ])
  })

  it('when the schema changes without a version bump, or the major version moves, then the version is reported', () => {
    const unbumped = problemsOf(
      changed('order.placed', (data) => {
        data.properties.note = { type: 'string' }
      }),
    )
    expect(unbumped).toEqual([
      'order.placed schemaVersion: the data schema changed but schemaVersion is still 1.0.0: raise its minor or patch',
    ])
    const major = problemsOf(
      changed('order.placed', (_data, message) => {
        message['x-schema-version'] = '2.0.0'
      }),
    )
    expect(major).toEqual([
      'order.placed schemaVersion: schemaVersion 1.0.0 -> 2.0.0: a new major is a breaking change; publish order.placed.v2',
    ])
  })

  it('when a closed object (additionalProperties: false) is given a field, then its old consumers are reported', () => {
    const base = asyncApiDocument() as Json
    base.components.schemas[dataSchemaName('user.removed')].additionalProperties = false
    const current = structuredClone(base)
    current.components.schemas[dataSchemaName('user.removed')].properties.reason = { type: 'string' }
    current.components.messages['user.removed']['x-schema-version'] = '1.1.0'
    expect(eventCompatibilityProblems(base, current).map((problem) => problem.problem)).toEqual([
      'consumers of the released schema cannot read new events: written, but no other property is read (additionalProperties: false)',
    ])
  })

  it('when an optional field is added with a minor version, descriptions change and a .v2 type appears, then nothing is reported', () => {
    const document = changed('order.placed', (data, message) => {
      data.properties.note = { type: 'string', maxLength: 500 }
      data.properties.total.description = 'the sum of the items'
      message['x-schema-version'] = '1.1.0'
    }) as Json
    document.components.messages['order.placed.v2'] = {
      ...document.components.messages['order.placed'],
      'x-schema-version': '2.0.0',
    }
    document.components.schemas[dataSchemaName('order.placed.v2')] = { type: 'object', properties: {} }
    expect(eventCompatibilityProblems(asyncApiDocument(), document)).toEqual([])
  })

  it('when a union gains an alternative, then consumers of the released schema are reported', () => {
    const base = asyncApiDocument() as Json
    base.components.schemas[dataSchemaName('order.failed')].properties.failedStep = {
      anyOf: [
        { type: 'string', const: 'payment' },
        { type: 'string', const: 'inventory' },
      ],
    }
    const current = structuredClone(base)
    current.components.schemas[dataSchemaName('order.failed')].properties.failedStep.anyOf.push({
      type: 'string',
      const: 'shipment',
    })
    current.components.messages['order.failed']['x-schema-version'] = '1.1.0'
    expect(eventCompatibilityProblems(base, current).map((problem) => problem.problem)).toEqual([
      'consumers of the released schema cannot read new events: no alternative of the union accepts what is written',
    ])
  })
})
