// The schema-compatibility check of the domain events: compares the released AsyncAPI document (the baseline) with
// the one these contracts generate, and names every change that a consumer on either side of a deployment could not
// read. docs/reference/domain-events.md states the rule in words.
//
// An event stays in Kafka after its producer changed: consumers still running the old code read events of the new
// schema, and consumers already running the new code read events of the old one (lag at a deployment, retries, a
// dead-letter replay). Consumers validate the data against their schema, so a change is compatible only when each
// side accepts what the other writes. What a producer writes is taken to be what its schema declares: a property that
// one schema does not declare is one that its producers never sent.
import { dataSchemaName } from './asyncapi-events.ts'

type Schema = Record<string, unknown>

/** One incompatibility: where (event type, then the path in its data) and why. */
export interface CompatibilityProblem {
  type: string
  path: string
  problem: string
}

/** Keywords that only describe: their changes never matter. */
const annotations = new Set(['description', 'title', '$comment', 'examples', 'default', 'deprecated'])
/** Lower bounds: the accepting schema's bound must be at most the written one's. */
const lowerBounds = ['minimum', 'exclusiveMinimum', 'minLength', 'minItems', 'minProperties'] as const
const upperBounds = ['maximum', 'exclusiveMaximum', 'maxLength', 'maxItems', 'maxProperties'] as const
/** Keywords that must be equal when the accepting schema has them. */
const exactKeywords = ['pattern', 'format', 'multipleOf', 'uniqueItems', 'patternProperties'] as const
/** Every keyword the rules below understand; any other that differs is reported, since nothing proves it safe. */
const understood = new Set<string>([
  ...annotations,
  ...lowerBounds,
  ...upperBounds,
  ...exactKeywords,
  'type',
  'const',
  'enum',
  'anyOf',
  'items',
  'properties',
  'required',
  'additionalProperties',
])

const isSchema = (value: unknown): value is Schema =>
  typeof value === 'object' && value !== null && !Array.isArray(value)
const typesOf = (schema: Schema): string[] | undefined =>
  schema.type === undefined ? undefined : ([schema.type].flat() as string[])
const valuesOf = (schema: Schema): unknown[] | undefined =>
  'const' in schema ? [schema.const] : Array.isArray(schema.enum) ? schema.enum : undefined
const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b)

/**
 * Why some value valid against `written` (what one side's producers write) may be refused by `accepting` (what the
 * other side's consumers validate with): empty when every such value is accepted, as far as these rules can tell
 * (anything they cannot prove is reported).
 */
export function unacceptedWrites(accepting: Schema, written: Schema, path = 'data'): string[] {
  const at = path
  if (Array.isArray(written.anyOf))
    return written.anyOf.flatMap((branch) =>
      isSchema(branch) ? unacceptedWrites(accepting, branch, path) : [],
    )
  if (Array.isArray(accepting.anyOf)) {
    const branches = accepting.anyOf.filter(isSchema)
    if (branches.some((branch) => unacceptedWrites(branch, written, path).length === 0)) return []
    return [`${at}: no alternative of the union accepts what is written`]
  }
  const problems: string[] = []
  const accepted = typesOf(accepting)
  const writtenTypes = typesOf(written)
  if (accepted) {
    const missing = (writtenTypes ?? ['any type']).filter(
      (type) => !accepted.includes(type) && !(type === 'integer' && accepted.includes('number')),
    )
    // a value of another type: its bounds and properties are beside the point
    if (missing.length > 0)
      return [`${at}: type ${missing.join(', ')} is written, ${accepted.join(', ')} is read`]
  }
  const acceptedValues = valuesOf(accepting)
  if (acceptedValues) {
    const writtenValues = valuesOf(written)
    const extra = writtenValues
      ? writtenValues.filter((value) => !acceptedValues.some((a) => same(a, value)))
      : ['any']
    if (extra.length > 0)
      problems.push(`${at}: value ${extra.map((v) => JSON.stringify(v)).join(', ')} is written, not read`)
  }
  for (const bound of lowerBounds) {
    const limit = accepting[bound]
    if (typeof limit === 'number' && !(typeof written[bound] === 'number' && written[bound] >= limit))
      problems.push(`${at}: ${bound} ${limit} is read, ${written[bound] ?? 'none'} is written`)
  }
  for (const bound of upperBounds) {
    const limit = accepting[bound]
    if (typeof limit === 'number' && !(typeof written[bound] === 'number' && written[bound] <= limit))
      problems.push(`${at}: ${bound} ${limit} is read, ${written[bound] ?? 'none'} is written`)
  }
  for (const keyword of exactKeywords) {
    if (keyword in accepting && !same(accepting[keyword], written[keyword]))
      problems.push(
        `${at}: ${keyword} ${JSON.stringify(accepting[keyword])} is read, ${JSON.stringify(written[keyword]) ?? 'none'} is written`,
      )
  }
  for (const keyword of new Set([...Object.keys(accepting), ...Object.keys(written)])) {
    if (!understood.has(keyword) && !same(accepting[keyword], written[keyword]))
      problems.push(`${at}: ${keyword} changed, and the check cannot tell whether that is compatible`)
  }
  if (isSchema(accepting.items) && isSchema(written.items))
    problems.push(...unacceptedWrites(accepting.items, written.items, `${path}[]`))
  else if (isSchema(accepting.items) && !same(accepting.items, {}))
    problems.push(`${at}: items are read with a schema, written without`)
  problems.push(...unacceptedProperties(accepting, written, path))
  return problems
}

function unacceptedProperties(accepting: Schema, written: Schema, path: string): string[] {
  const problems: string[] = []
  const acceptingProperties = isSchema(accepting.properties) ? accepting.properties : {}
  const writtenProperties = isSchema(written.properties) ? written.properties : {}
  const writtenRequired = new Set(Array.isArray(written.required) ? (written.required as string[]) : [])
  for (const name of Array.isArray(accepting.required) ? (accepting.required as string[]) : []) {
    if (writtenRequired.has(name)) continue
    problems.push(
      name in writtenProperties
        ? `${path}.${name}: required when read, optional when written`
        : `${path}.${name}: required when read, not written`,
    )
  }
  for (const [name, schema] of Object.entries(writtenProperties)) {
    const readWith = acceptingProperties[name]
    if (isSchema(readWith) && isSchema(schema))
      problems.push(...unacceptedWrites(readWith, schema, `${path}.${name}`))
    else if (readWith === undefined && accepting.additionalProperties === false)
      problems.push(`${path}.${name}: written, but no other property is read (additionalProperties: false)`)
    else if (readWith === undefined && isSchema(accepting.additionalProperties) && isSchema(schema))
      problems.push(...unacceptedWrites(accepting.additionalProperties, schema, `${path}.${name}`))
  }
  if (accepting.additionalProperties === false && written.additionalProperties !== false)
    problems.push(`${path}: other properties may be written, none is read (additionalProperties: false)`)
  return problems
}

/** `1.2.0` -> [1, 2, 0] */
const versionParts = (version: string) => version.split('.').map(Number)

/**
 * Every incompatibility between the released document (`baseline`) and the current one: an event type removed, a
 * data schema that either side's consumers could not read (both directions of unacceptedWrites), a version moved
 * backwards, to another major (a breaking change is a new type, `<type>.v2`) or left unchanged by a changed schema.
 */
export function eventCompatibilityProblems(baseline: Schema, current: Schema): CompatibilityProblem[] {
  const problems: CompatibilityProblem[] = []
  const oldMessages = eventMessages(baseline)
  const newMessages = eventMessages(current)
  for (const [type, old] of oldMessages) {
    const now = newMessages.get(type)
    if (!now) {
      problems.push({
        type,
        path: 'type',
        problem: 'the event type was removed; its consumers and stored events remain',
      })
      continue
    }
    const report = (path: string, problem: string) => problems.push({ type, path, problem })
    for (const text of unacceptedWrites(old.data, now.data))
      report(pathOf(text), `consumers of the released schema cannot read new events: ${reasonOf(text)}`)
    for (const text of unacceptedWrites(now.data, old.data))
      report(pathOf(text), `consumers of the new schema cannot read released events: ${reasonOf(text)}`)
    const [oldMajor = 0, ...oldRest] = versionParts(old.version)
    const [newMajor = 0, ...newRest] = versionParts(now.version)
    if (newMajor !== oldMajor)
      report(
        'schemaVersion',
        `schemaVersion ${old.version} -> ${now.version}: a new major is a breaking change; publish ${type}.v2`,
      )
    else if (compareVersions(newRest, oldRest) < 0)
      report('schemaVersion', `schemaVersion ${old.version} -> ${now.version} goes backwards`)
    else if (now.version === old.version && !same(withoutAnnotations(old.data), withoutAnnotations(now.data)))
      report(
        'schemaVersion',
        `the data schema changed but schemaVersion is still ${now.version}: raise its minor or patch`,
      )
  }
  return problems
}

const pathOf = (text: string) => text.slice(0, text.indexOf(': '))
const reasonOf = (text: string) => text.slice(text.indexOf(': ') + 2)

function compareVersions(a: number[], b: number[]): number {
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    const difference = (a[i] ?? 0) - (b[i] ?? 0)
    if (difference !== 0) return difference
  }
  return 0
}

function withoutAnnotations(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutAnnotations)
  if (!isSchema(value)) return value
  return Object.fromEntries(
    Object.entries(value)
      .filter(([key]) => !annotations.has(key))
      .map(([key, inner]) => [key, withoutAnnotations(inner)]),
  )
}

/** The event messages of a document: each type's data schema and x-schema-version. */
function eventMessages(document: Schema): Map<string, { data: Schema; version: string }> {
  const components = isSchema(document.components) ? document.components : {}
  const messages = isSchema(components.messages) ? components.messages : {}
  const schemas = isSchema(components.schemas) ? components.schemas : {}
  const events = new Map<string, { data: Schema; version: string }>()
  for (const [type, message] of Object.entries(messages)) {
    if (!isSchema(message) || typeof message['x-schema-version'] !== 'string') continue
    const data = schemas[dataSchemaName(type)]
    if (isSchema(data)) events.set(type, { data, version: message['x-schema-version'] })
  }
  return events
}
