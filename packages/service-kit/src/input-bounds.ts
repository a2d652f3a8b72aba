// Size bounds first. Before a validator looks at an untrusted input as a whole, its arrays, strings and objects are
// measured against their schema's `maxItems`, `maxLength` and `maxProperties`, and an input past one of them is refused
// for that alone. Checked all together, an oversized input costs what its size makes it cost: `uniqueItems` compares
// items pair by pair where they have no simple type (80,000 API-key scopes held auth for 10 to 47 s), a validator that
// collects every problem (Ajv's allErrors, TypeBox's Errors) visits every item of an array already too long, and each
// problem becomes a detail of the refusal (150,000 junk items answered with 9.9 MB). Measured first, the walk goes
// only where the schema has structure, stops at the first array or string too long, and is linear in what it reads.

/** One bound an input went past: where (the path's segments) and which. */
export interface BoundProblem {
  /** the segments of the value's path from the input's root (`['items', '3', 'sku']`); empty for the root */
  path: string[]
  keyword: 'maxItems' | 'maxLength' | 'maxProperties'
  limit: number
}

/** The most problems one walk reports: a refusal names the first ones, not every one. */
export const maxBoundProblems = 20

type Schema = Record<string, unknown>

const isSchema = (value: unknown): value is Schema => typeof value === 'object' && value !== null

/** A string's length as JSON Schema counts it (code points), read no further than needed to pass `limit`. */
function exceedsLength(text: string, limit: number): boolean {
  // UTF-16 units are never fewer than code points: within the limit in units is within it in code points
  if (text.length <= limit) return false
  let points = 0
  for (let index = 0; index < text.length; index++) {
    const unit = text.charCodeAt(index)
    // a high surrogate followed by a low one is one code point
    if (unit >= 0xd800 && unit <= 0xdbff && index + 1 < text.length) {
      const next = text.charCodeAt(index + 1)
      if (next >= 0xdc00 && next <= 0xdfff) index++
    }
    if (++points > limit) return true
  }
  return false
}

/**
 * The size bounds `data` goes past under `schema` (at most {@link maxBoundProblems}), found without reading any part of
 * it the schema does not describe. A union (`anyOf`, `oneOf`) counts as past a bound only when every branch is; the
 * rest of validation (types, formats, patterns, uniqueness) is the validator's, on an input now known to be in size.
 */
export function boundsExceeded(schema: unknown, data: unknown): BoundProblem[] {
  const problems: BoundProblem[] = []
  walk(schema, data, [], problems)
  return problems
}

// `path` is one stack pushed and popped as the walk goes (every request passes here): copied only into a problem.
function walk(schema: unknown, data: unknown, path: string[], problems: BoundProblem[]): void {
  if (!isSchema(schema) || problems.length >= maxBoundProblems) return
  for (const key of ['allOf'] as const) {
    const parts = schema[key]
    if (Array.isArray(parts)) for (const part of parts) walk(part, data, path, problems)
  }
  for (const key of ['anyOf', 'oneOf'] as const) {
    const branches = schema[key]
    if (!Array.isArray(branches) || branches.length === 0) continue
    let first: BoundProblem[] | undefined
    let everyBranch = true
    for (const branch of branches) {
      const found: BoundProblem[] = []
      walk(branch, data, path, found)
      if (found.length === 0) {
        everyBranch = false
        break
      }
      first ??= found
    }
    if (everyBranch && first) problems.push(...first.slice(0, maxBoundProblems - problems.length))
  }
  if (typeof data === 'string') {
    const limit = schema.maxLength
    if (typeof limit === 'number' && exceedsLength(data, limit))
      problems.push({ path: [...path], keyword: 'maxLength', limit })
    return
  }
  if (Array.isArray(data)) {
    const limit = schema.maxItems
    if (typeof limit === 'number' && data.length > limit) {
      problems.push({ path: [...path], keyword: 'maxItems', limit })
      return
    }
    const prefix = Array.isArray(schema.prefixItems)
      ? schema.prefixItems
      : Array.isArray(schema.items)
        ? schema.items
        : []
    const rest = isSchema(schema.items) ? schema.items : undefined
    for (let index = 0; index < data.length && problems.length < maxBoundProblems; index++) {
      const itemSchema = index < prefix.length ? prefix[index] : rest
      if (itemSchema === undefined) continue
      path.push(String(index))
      walk(itemSchema, data[index], path, problems)
      path.pop()
    }
    return
  }
  if (isSchema(data)) {
    const limit = schema.maxProperties
    if (typeof limit === 'number') {
      let count = 0
      for (const key in data) {
        if (Object.hasOwn(data, key) && ++count > limit) {
          problems.push({ path: [...path], keyword: 'maxProperties', limit })
          return
        }
      }
    }
    const properties = isSchema(schema.properties) ? schema.properties : {}
    const patterns = patternsOf(schema)
    const additional = isSchema(schema.additionalProperties) ? schema.additionalProperties : undefined
    for (const key in data) {
      if (!Object.hasOwn(data, key) || problems.length >= maxBoundProblems) continue
      const propertySchema = Object.hasOwn(properties, key)
        ? properties[key]
        : (patterns.find(([pattern]) => pattern.test(key))?.[1] ?? additional)
      if (propertySchema === undefined) continue
      path.push(key)
      walk(propertySchema, data[key], path, problems)
      path.pop()
    }
  }
}

const compiledPatterns = new WeakMap<Schema, [RegExp, unknown][]>()

/**
 * A schema's `patternProperties` (a TypeBox Record's) as regular expressions, made once per schema. The patterns are
 * the contracts' own, each proved linear-time (linear-validation.test.ts): matching an untrusted key is safe.
 */
function patternsOf(schema: Schema): [RegExp, unknown][] {
  const given = schema.patternProperties
  if (!isSchema(given)) return []
  let compiled = compiledPatterns.get(schema)
  if (!compiled) {
    compiled = Object.entries(given).map(([pattern, each]) => [new RegExp(pattern, 'u'), each])
    compiledPatterns.set(schema, compiled)
  }
  return compiled
}

/** A bound problem as Ajv words the same keyword's error (what the kit's error handler turns into a detail). */
export function boundProblemAsAjvIssue(problem: BoundProblem): {
  instancePath: string
  schemaPath: string
  keyword: BoundProblem['keyword']
  params: { limit: number }
  message: string
} {
  const noun = { maxItems: 'items', maxLength: 'characters', maxProperties: 'properties' }[problem.keyword]
  return {
    instancePath: problem.path
      .map((segment) => `/${segment.replaceAll('~', '~0').replaceAll('/', '~1')}`)
      .join(''),
    schemaPath: `#/${problem.keyword}`,
    keyword: problem.keyword,
    params: { limit: problem.limit },
    message: `must NOT have more than ${problem.limit} ${noun}`,
  }
}
