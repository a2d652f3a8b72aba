// Validation that no input can make slow: every string schema of contracts, checked by the chassis's own validator
// against adversarial strings as long as the body limit allows, and every pattern among them proved linear-time by
// recheck's automaton checker. The review found `^[^\0]*[^\0\s][^\0]*$` taking 3 s on 40,000 characters; the first
// tests show that this check catches such a pattern, so a green run means "none is slow", not "nothing was tried".
import * as contracts from '@meridian/contracts'
import { checkSync } from 'recheck'
import { describe, expect, it } from 'vitest'
import { partAwareValidator } from '../src/validation.ts'

/** The spec's JSON body limit (1 MB): the longest string a client can send in one field. */
const bodyLimit = 1_000_000
/** What one field's check may cost at that size, in CPU time (the bound). */
const budgetMs = 50

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

/** The chassis's validator of a JSON body (no coercion), for one schema. */
function chassisValidator(schema: Schema): Validate {
  const build = partAwareValidator() as unknown as (
    external: unknown,
    options: unknown,
  ) => (route: { schema: Schema; httpPart: string; method: string; url: string }) => Validate
  return build({}, {})({ schema, httpPart: 'body', method: 'POST', url: '/linear' })
}

/**
 * Strings of the body limit's size shaped to make a backtracking engine work hardest on the patterns and formats in
 * use: long runs of what a class accepts (text, digits, white space, separators, list items, e-mail and date parts)
 * followed by what it refuses (NUL, punctuation, a line break) or by nothing.
 */
function adversarialInputs(): string[] {
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
    const body = run.repeat(Math.floor((bodyLimit - 1) / run.length))
    for (const end of ends) inputs.push(body + end)
  }
  inputs.push(`a@${'a'.repeat(bodyLimit - 4)}.!`, `2026-11-25T00:00:00${'0'.repeat(bodyLimit - 20)}Z`)
  return inputs
}

/** CPU time this thread spent in `work`, ms: a loaded machine stretches wall time, not the work a check does. */
function cpuMs(work: () => void): number {
  const before = process.threadCpuUsage()
  work()
  const spent = process.threadCpuUsage(before)
  return (spent.user + spent.system) / 1000
}

/** The slowest check of `validate` over `inputs`, in CPU ms; a slow one is measured twice more (its least counts). */
function slowestCheck(validate: Validate, inputs: readonly string[]): { ms: number; input: string } {
  let slowest = { ms: 0, input: '' }
  for (const input of inputs) {
    let ms = Number.POSITIVE_INFINITY
    for (let attempt = 0; attempt < 3 && ms > budgetMs; attempt += 1) {
      ms = Math.min(
        ms,
        cpuMs(() => validate(input)),
      )
    }
    if (ms > slowest.ms) slowest = { ms, input }
  }
  return slowest
}

const describeInput = (input: string) =>
  `${JSON.stringify(input.slice(0, 16))}… (${input.length} characters, ending ${JSON.stringify(input.slice(-1))})`

describe('linear-time validation of every contract string', () => {
  const schemas = contractStringSchemas()
  const inputs = adversarialInputs()

  it('when the check meets the quadratic pattern the review found, then recheck calls it vulnerable and the timing exceeds the budget', () => {
    const quadratic = '^[^\\u0000]*[^\\u0000\\s][^\\u0000]*$'
    expect(checkSync(quadratic, 'u', { checker: 'automaton' }).status).toBe('vulnerable')
    const validate = chassisValidator({ type: 'string', maxLength: 100, pattern: quadratic })
    // a fiftieth of the body limit is already past the budget; the whole of it would take minutes
    const { ms } = slowestCheck(validate, [`${'a'.repeat(bodyLimit / 50)}\u0000`])
    expect(ms).toBeGreaterThan(budgetMs)
  })

  it('when contracts are read, then their string schemas (with patterns, formats and lengths) are all found', () => {
    expect(schemas.length).toBeGreaterThan(30)
    expect(schemas.some((schema) => schema.pattern === contracts.visibleTextPattern)).toBe(true)
    expect(schemas.some((schema) => schema.format === 'email')).toBe(true)
  })

  it('when every pattern of contracts is analysed, then each one runs in linear time (recheck, automaton)', () => {
    const patterns = [
      ...new Set(schemas.flatMap((schema) => (typeof schema.pattern === 'string' ? [schema.pattern] : []))),
    ]
    expect(patterns.length).toBeGreaterThan(10)
    const judged = patterns.map((pattern) => {
      const verdict = checkSync(pattern, 'u', { checker: 'automaton' })
      return {
        pattern,
        status: verdict.status,
        complexity: verdict.status === 'vulnerable' ? verdict.complexity.type : undefined,
      }
    })
    expect(judged.filter((verdict) => verdict.status !== 'safe')).toEqual([])
  })

  it(`when each string schema meets adversarial inputs of the body limit's size, then no check takes over ${budgetMs} ms`, () => {
    const slow = schemas.flatMap((schema) => {
      const { ms, input } = slowestCheck(chassisValidator(schema), inputs)
      return ms > budgetMs ? [{ schema, ms: Math.round(ms), input: describeInput(input) }] : []
    })
    expect(slow).toEqual([])
  })
})
