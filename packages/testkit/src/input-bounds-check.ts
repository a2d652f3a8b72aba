// The class check of issue 42: every input a client can send is bounded by its schema. Read from a service's own
// OpenAPI document (what its validator enforces): in every request body and parameter, each array has maxItems, each
// string maxLength (an enum or a const is bounded by its values), each object that takes any property name
// (additionalProperties or patternProperties) maxProperties. A uniqueItems array's maxItems is the bound that keeps
// its check cheap; sizes first (service-kit's input-bounds.ts) refuses anything past one before it is checked, but only
// where the schema declares it: a place without one is where an input of any size reaches the validator.
import { expect } from 'vitest'
import { type DocumentedApp, openApiDocumentOf } from './openapi-document.ts'

type Schema = Record<string, unknown>

/**
 * The most items a uniqueItems array may allow: a validator that compares items pair by pair (TypeBox's list of errors,
 * Ajv for items without a simple type) makes 4,950 comparisons of 100. The contracts' lists of ids stop there.
 */
export const cheapUniqueItems = 100

const isSchema = (value: unknown): value is Schema =>
  typeof value === 'object' && value !== null && !Array.isArray(value)

const componentPrefix = '#/components/schemas/'

/** What a walk carries: the document's components, the schemas on the path from the root (a cycle), what it found. */
interface Walk {
  components: Schema
  ancestors: Set<Schema>
  found: string[]
}

/**
 * The unbounded places of one schema, each named `where: what`, where is `where` followed by the path in the schema
 * (`.name` a property, `[]` an array's items, `[0]` a tuple's first, `{}` the values of an object of any keys).
 * `$ref`s into `components` (`#/components/schemas/Name`) are followed: a schema used in two places is named in each.
 */
export function unboundedIn(schema: unknown, where: string, components: Schema = {}): string[] {
  const walk: Walk = { components, ancestors: new Set(), found: [] }
  visit(schema, where, walk)
  return walk.found
}

function visit(schema: unknown, where: string, walk: Walk): void {
  // a cycle (a tree of comments, through a $ref): its places were named on the way down already
  if (!isSchema(schema) || walk.ancestors.has(schema)) return
  walk.ancestors.add(schema)
  if (typeof schema.$ref === 'string') followRef(schema.$ref, where, walk)
  walk.found.push(...ownProblems(schema).map((problem) => `${where}: ${problem}`))
  visitParts(schema, where, walk)
  walk.ancestors.delete(schema)
}

/** A `$ref` the document cannot resolve is a place nobody can judge: named, not passed over. */
function followRef(ref: string, where: string, walk: Walk): void {
  const name = ref.startsWith(componentPrefix) ? ref.slice(componentPrefix.length) : undefined
  const target = name === undefined ? undefined : walk.components[name]
  if (isSchema(target)) visit(target, where, walk)
  else walk.found.push(`${where}: a $ref that names no schema of the document (${ref})`)
}

/** What one schema lacks, itself, without its parts. */
function ownProblems(schema: Schema): string[] {
  const problems: string[] = []
  const types = Array.isArray(schema.type) ? schema.type : [schema.type]
  const fixed = Array.isArray(schema.enum) || 'const' in schema
  if (types.includes('string') && !fixed && typeof schema.maxLength !== 'number')
    problems.push('a string without maxLength')
  if (types.includes('array')) {
    const maxItems = schema.maxItems
    if (typeof maxItems !== 'number')
      problems.push(
        schema.uniqueItems === true
          ? 'an array without maxItems (its uniqueItems is checked pair by pair)'
          : 'an array without maxItems',
      )
    else if (schema.uniqueItems === true && maxItems > cheapUniqueItems)
      problems.push(
        `a uniqueItems array whose maxItems ${maxItems} is past ${cheapUniqueItems} (checked pair by pair)`,
      )
  }
  const anyKeys = isSchema(schema.additionalProperties) || isSchema(schema.patternProperties)
  if (anyKeys && typeof schema.maxProperties !== 'number')
    problems.push('an object of any keys without maxProperties')
  return problems
}

/** The schemas inside one: properties, items, the values of any keys, and the branches of a union or an allOf. */
function visitParts(schema: Schema, where: string, walk: Walk): void {
  if (isSchema(schema.properties)) {
    for (const [name, each] of Object.entries(schema.properties)) visit(each, `${where}.${name}`, walk)
  }
  // a tuple: `prefixItems` (2020-12) or `items` as a list (draft 7), then the items after them
  const tuple = Array.isArray(schema.prefixItems)
    ? schema.prefixItems
    : Array.isArray(schema.items)
      ? schema.items
      : []
  for (const [index, each] of tuple.entries()) visit(each, `${where}[${index}]`, walk)
  for (const key of ['items', 'additionalItems'] as const) visit(schema[key], `${where}[]`, walk)
  visit(schema.additionalProperties, `${where}{}`, walk)
  if (isSchema(schema.patternProperties)) {
    for (const each of Object.values(schema.patternProperties)) visit(each, `${where}{}`, walk)
  }
  for (const key of ['anyOf', 'oneOf', 'allOf'] as const) {
    const parts = schema[key]
    if (Array.isArray(parts)) for (const part of parts) visit(part, where, walk)
  }
}

interface Parameter {
  in?: string
  name?: string
  schema?: unknown
  content?: Record<string, { schema?: unknown }>
}

interface Operation {
  parameters?: Parameter[]
  requestBody?: { content?: Record<string, { schema?: unknown }> }
}

interface InputDocument {
  paths?: Record<string, Record<string, unknown> & { parameters?: Parameter[] }>
  components?: { schemas?: Schema }
}

const httpMethods = new Set(['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'])

/** Every input schema of a document's operations, named `METHOD /path: query limit`, `METHOD /path: body (type)`. */
export function inputSchemasOf(document: InputDocument): [where: string, schema: unknown][] {
  const inputs: [string, unknown][] = []
  for (const [path, item] of Object.entries(document.paths ?? {})) {
    for (const [method, operation] of Object.entries(item)) {
      if (!httpMethods.has(method) || !isSchema(operation)) continue
      const name = `${method.toUpperCase()} ${path}`
      const { parameters = [], requestBody } = operation as Operation
      // parameters of the path item count for each of its operations
      for (const parameter of [...(item.parameters ?? []), ...parameters]) {
        const place = `${name}: ${parameter.in} ${parameter.name}`
        if (parameter.schema !== undefined) inputs.push([place, parameter.schema])
        for (const [type, content] of Object.entries(parameter.content ?? {}))
          inputs.push([`${place} (${type})`, content.schema])
      }
      for (const [type, content] of Object.entries(requestBody?.content ?? {}))
        inputs.push([`${name}: body (${type})`, content.schema])
    }
  }
  return inputs
}

/**
 * Fails naming every unbounded input of the app's operations. `allowed`: places accepted as they are, each the start
 * of a line the check names (`POST /graphql: body (application/json).variables`), each with its reason beside it where
 * it is passed; an allowance that names no place any more fails too, so that none outlives its reason. Returns how
 * many input schemas were read (a document without any would pass for nothing).
 */
export async function expectInputsBounded(
  app: DocumentedApp,
  allowed: readonly string[] = [],
): Promise<number> {
  const document = await openApiDocumentOf<InputDocument>(app)
  const components = document.components?.schemas ?? {}
  const inputs = inputSchemasOf(document)
  const found = inputs.flatMap(([where, schema]) => unboundedIn(schema, where, components))
  const accepted = (line: string) => allowed.some((place) => line.startsWith(place))
  const unbounded = found.filter((line) => !accepted(line))
  // the list in the message too: an assertion's diff of a long array is cut short in a log
  expect(unbounded, `inputs a client can send without a bound:\n${unbounded.join('\n')}\n`).toEqual([])
  const stale = allowed.filter((place) => !found.some((line) => line.startsWith(place)))
  expect(stale, `allowances that name no unbounded place:\n${stale.join('\n')}\n`).toEqual([])
  return inputs.length
}
