// Validation that no input can make slow: every string schema of contracts, checked by the chassis's own validator
// against adversarial strings up to the body limit, must take time that grows linearly with the input (shown by
// growth, 4 times the input against its time, never by a budget in ms: a loaded machine stretches every time alike),
// and every pattern among them is proved linear-time by recheck's automaton checker. Every string with a format is
// bounded by a maxLength. The review found `^[^\0]*[^\0\s][^\0]*$` taking 3 s on 40,000 characters; the first tests
// show that this check catches such a pattern, so a green run means "none is slow", not "nothing was tried".
import { readFileSync } from 'node:fs'
import * as contracts from '@meridian/contracts'
import { scaledMs } from '@meridian/testkit'
import { checkSync } from 'recheck'
import { describe, expect, it } from 'vitest'
import { partAwareValidator } from '../src/validation.ts'
import { growthBound, growthOf, rounded } from './fixtures/growth.ts'

/** The spec's JSON body limit (1 MB): the longest string a client can send in one field. */
const bodyLimit = 1_000_000
/** The two sizes compared: the body limit and a quarter of it, both long enough for a check's time to be read. */
const largeSize = bodyLimit
const smallSize = bodyLimit / 4
type Schema = Record<string, unknown>
type Validate = (value: unknown) => unknown

const isSchema = (value: unknown): value is Schema =>
  typeof value === 'object' && value !== null && !Array.isArray(value)

const isStringSchema = (schema: Schema): boolean =>
  schema.type === 'string' || (Array.isArray(schema.type) && schema.type.includes('string'))

/** Every string schema reachable from `root` (properties, items, unions, additional properties...). */
function stringSchemasOf(root: unknown, found: Schema[] = [], seen = new Set<unknown>()): Schema[] {
  if (!isSchema(root) || seen.has(root)) return found
  seen.add(root)
  if (isStringSchema(root)) found.push(root)
  for (const value of Object.values(root)) {
    if (Array.isArray(value)) for (const item of value) stringSchemasOf(item, found, seen)
    else stringSchemasOf(value, found, seen)
  }
  return found
}

/** Every distinct string schema exported by contracts (directly, or inside an exported schema). */
function contractStringSchemas(): Schema[] {
  const distinct = new Map<string, Schema>()
  for (const exported of Object.values(contracts)) {
    for (const schema of stringSchemasOf(exported)) {
      const {
        type: _type,
        description: _description,
        default: _default,
        examples: _examples,
        ...rules
      } = schema
      distinct.set(JSON.stringify(rules), { ...rules, type: 'string' })
    }
  }
  return [...distinct.values()]
}

/**
 * One schema of each kind: its pattern, its format and the names of its other keywords. What a check costs, and how
 * that grows, depends on these, not on a bound's number (maxLength 100 or 200 run the same code).
 */
function oneOfEachKind(schemas: readonly Schema[]): Schema[] {
  const kinds = new Map<string, Schema>()
  for (const schema of schemas)
    kinds.set(JSON.stringify([schema.pattern, schema.format, Object.keys(schema).sort()]), schema)
  return [...kinds.values()]
}

/**
 * The chassis's validator of a JSON body (no coercion), for one schema, without its maxLength: sizes first
 * (src/input-bounds.ts) refuses a longer string before its pattern or format is tried, so the pattern and the format
 * are measured here as if that bound were not there — the second line of defence, proved on its own.
 */
function chassisValidator({ maxLength: _bound, ...schema }: Schema): Validate {
  const build = partAwareValidator() as unknown as (
    external: unknown,
    options: unknown,
  ) => (route: { schema: Schema; httpPart: string; method: string; url: string }) => Validate
  return build({}, {})({ schema, httpPart: 'body', method: 'POST', url: '/linear' })
}

/**
 * Strings of `size` characters shaped to make a backtracking engine work hardest on the patterns and formats in use:
 * long runs of what a class accepts (text, digits, white space, separators, list items, e-mail and date parts)
 * followed by what it refuses (NUL, punctuation, a line break) or by nothing.
 */
function adversarialInputs(size: number): string[] {
  const runs = [
    'a',
    '0',
    ' ',
    '\t',
    '\u2028',
    'é',
    'a ',
    '0 -',
    'a.',
    'a@',
    'a-',
    'a:',
    'a,',
    'createdAt:asc,',
    '-0',
  ]
  const ends = ['\u0000', '!', '\n']
  const inputs: string[] = []
  for (const run of runs) {
    const body = run.repeat(Math.floor((size - 1) / run.length))
    for (const end of ends) inputs.push(body + end)
  }
  inputs.push(`a@${'a'.repeat(size - 4)}.!`, `2026-11-25T00:00:00${'0'.repeat(size - 20)}Z`)
  return inputs.map(flat)
}

/**
 * `text` as one flat string: repeat() and + build a tree of pieces that the engine joins on first use, and that one-off
 * copy would be counted in the first check's time, not the check's own.
 */
const flat = (text: string): string => Buffer.from(text, 'utf16le').toString('utf16le')

/** A run of `length` 'a's ending in NUL: what makes the review's pattern try each split of the string. */
const nulEnded = (length: number) => flat(`${'a'.repeat(length)}\u0000`)

/** The released AsyncAPI document, the compatibility check's baseline (docs/reference/domain-events.md). */
const releasedDocument = (): Schema =>
  JSON.parse(readFileSync(new URL('../../../docs/asyncapi.released.json', import.meta.url), 'utf8'))

type Key = string | number

/** The string schemas with a format and no maxLength under `root`, each with the keys that lead to it. */
function unboundedFormatsOf(root: unknown, keys: Key[] = [], found: { keys: Key[]; schema: Schema }[] = []) {
  if (Array.isArray(root)) {
    for (const [index, item] of root.entries()) unboundedFormatsOf(item, [...keys, index], found)
  }
  if (!isSchema(root)) return found
  if (isStringSchema(root) && typeof root.format === 'string' && root.maxLength === undefined)
    found.push({ keys, schema: root })
  for (const [key, value] of Object.entries(root)) unboundedFormatsOf(value, [...keys, key], found)
  return found
}

const described = ({ keys, schema }: { keys: Key[]; schema: Schema }) =>
  `${keys.join(' > ')} (${schema.format})`

/** The value the keys lead to in `document`, or undefined. */
function at(document: unknown, keys: readonly Key[]): unknown {
  let value = document
  for (const key of keys) {
    if (!isSchema(value) && !Array.isArray(value)) return undefined
    value = (value as Record<Key, unknown>)[key]
  }
  return value
}

/** The messages a document's Kafka channels carry (events, their retries and dead letters), by component name. */
function kafkaMessages(document: Schema): Set<string> {
  const names = new Set<string>()
  for (const channel of Object.values(isSchema(document.channels) ? document.channels : {})) {
    if (!isSchema(channel) || !JSON.stringify(channel.servers ?? []).includes('#/servers/kafka')) continue
    for (const message of Object.values(isSchema(channel.messages) ? channel.messages : {}))
      if (isSchema(message) && typeof message.$ref === 'string')
        names.add(message.$ref.replace('#/components/messages/', ''))
  }
  return names
}

/**
 * What the released events' envelope holds where `keys` lead into the envelope of an event type added since: the
 * envelope is one schema for every type, so a new type carries the released one.
 */
function inReleasedEnvelope(baseline: Schema, keys: readonly Key[]): unknown {
  const [components, part, , payload, ...inside] = keys
  if (components !== 'components' || part !== 'messages' || payload !== 'payload') return undefined
  const messages = at(baseline, ['components', 'messages'])
  const released = Object.values(isSchema(messages) ? messages : {}).find(
    (message) => isSchema(message) && typeof message['x-schema-version'] === 'string',
  )
  return at(released, ['payload', ...inside])
}

describe('linear-time validation of every contract string', () => {
  const schemas = contractStringSchemas()

  it('when the check meets the quadratic pattern the review found, then recheck calls it vulnerable and its time grows past the bound', () => {
    const quadratic = '^[^\\u0000]*[^\\u0000\\s][^\\u0000]*$'
    expect(checkSync(quadratic, 'u', { checker: 'automaton', timeout: null }).status).toBe('vulnerable')
    const validate = chassisValidator({ type: 'string', maxLength: 100, pattern: quadratic })
    // short inputs: at the body limit this pattern would take minutes; its growth shows at a few thousand characters
    const growth = growthOf((input) => validate(input), [nulEnded(4000)], [nulEnded(16_000)])
    expect(growth.ratio, JSON.stringify(rounded(growth))).toBeGreaterThan(growthBound)
  })

  it('when the check meets the linear pattern that replaced it on the same inputs, then its time grows within the bound', () => {
    const validate = chassisValidator({
      type: 'string',
      maxLength: 100,
      pattern: contracts.visibleTextPattern,
    })
    const growth = growthOf((input) => validate(input), [nulEnded(smallSize - 1)], [nulEnded(largeSize - 1)])
    expect(growth.ratio, JSON.stringify(rounded(growth))).toBeLessThan(growthBound)
  })

  it('when contracts are read, then their string schemas (with patterns, formats and lengths) are all found', () => {
    expect(schemas.length).toBeGreaterThan(30)
    expect(schemas.some((schema) => schema.pattern === contracts.visibleTextPattern)).toBe(true)
    expect(schemas.some((schema) => schema.format === 'email')).toBe(true)
    expect(schemas.some((schema) => schema.format === 'date-time')).toBe(true)
  })

  it('when every pattern of contracts is analysed, then each one runs in linear time (recheck, automaton)', () => {
    const patterns = [
      ...new Set(schemas.flatMap((schema) => (typeof schema.pattern === 'string' ? [schema.pattern] : []))),
    ]
    expect(patterns.length).toBeGreaterThan(10)
    const judged = patterns.map((pattern) => {
      // no time limit (its default 10 s ran out on a loaded machine): the automaton's size limits bound the work
      const verdict = checkSync(pattern, 'u', { checker: 'automaton', timeout: null })
      return {
        pattern,
        status: verdict.status,
        complexity: verdict.status === 'vulnerable' ? verdict.complexity.type : undefined,
      }
    })
    expect(judged.filter((verdict) => verdict.status !== 'safe')).toEqual([])
  })

  // CPU-bound by design: some 15 s of one core, and a process on a machine at a load of 20 gets a tenth of one
  it(
    `when each kind of string schema meets adversarial inputs of ${smallSize} and ${largeSize} characters, then its check of the larger takes less than ${growthBound} times as long`,
    () => {
      const small = adversarialInputs(smallSize)
      const large = adversarialInputs(largeSize)
      const kinds = oneOfEachKind(schemas)
      expect(kinds.length).toBeGreaterThan(20)
      const steep = kinds.flatMap((schema) => {
        const validate = chassisValidator(schema)
        const growth = growthOf((input) => validate(input), small, large)
        return growth.ratio < growthBound ? [] : [{ schema, ...rounded(growth) }]
      })
      expect(steep).toEqual([])
    },
    scaledMs(180_000),
  )

  it('when a schema has a string with a format and no maxLength, then the walk finds it by its keys', () => {
    const made = {
      properties: {
        at: { type: 'string', format: 'date-time' },
        id: { type: 'string', format: 'uuid', maxLength: 36 },
      },
      items: [{ type: ['string', 'null'], format: 'email' }],
    }
    expect(unboundedFormatsOf(made, ['made']).map(described)).toEqual([
      'made > properties > at (date-time)',
      'made > items > 0 (email)',
    ])
  })

  // A bound a client cannot pass: uuid 36 (its canonical text), date-time 64 (RFC 3339 with nanoseconds and an offset
  // is 35), email 254 (RFC 5321's longest path less its angle brackets).
  it('when contracts are read, then every string with a format has a maxLength, but for what released events hold', () => {
    // what a released event holds (envelope and data) keeps no maxLength: a bound would narrow what events already in
    // Kafka may hold, which the compatibility check refuses; the next test keeps this to the released fields
    const released = new Set(
      [
        contracts.EventEnvelopeBase,
        ...Object.values(contracts.eventCatalogue).map(({ data }) => data),
      ].flatMap((schema) => stringSchemasOf(schema)),
    )
    const unbounded = Object.entries(contracts).flatMap(([name, exported]) =>
      unboundedFormatsOf(exported, [name])
        .filter(({ schema }) => !released.has(schema))
        .map(described),
    )
    expect(unbounded).toEqual([])
  })

  it('when the AsyncAPI document is generated, then a format without maxLength is one the released baseline holds so in a Kafka message', () => {
    const baseline = releasedDocument()
    const document = contracts.asyncApiDocument() as Schema
    const kafka = kafkaMessages(document)
    expect(kafka).toContain('order.placed')
    expect(kafka).toContain('deadLetter')
    expect(kafka).not.toContain('server.auth.expiring')
    const unreleased = unboundedFormatsOf(document).filter(({ keys, schema }) => {
      const [components, part, name] = keys
      const inKafkaMessage =
        components === 'components' &&
        (part === 'schemas' || (part === 'messages' && typeof name === 'string' && kafka.has(name)))
      const before = at(baseline, keys) ?? inReleasedEnvelope(baseline, keys)
      return !(
        inKafkaMessage &&
        isSchema(before) &&
        before.format === schema.format &&
        before.maxLength === undefined
      )
    })
    expect(unreleased.map(described)).toEqual([])
  })
})
