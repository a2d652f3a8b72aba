// The class check of issue 42: every input a client can send is bounded by its schema. Read from a service's own
// OpenAPI document (what its validator enforces): in every request body and parameter, each array has maxItems, each
// string maxLength (an enum or a const is bounded by its values), each object that takes any property name
// (additionalProperties or patternProperties) maxProperties. A uniqueItems array's maxItems is the bound that keeps
// its check cheap; sizes first (service-kit's input-bounds.ts) refuses anything past one before it is checked.
import { expect } from 'vitest'
import { openApiDocumentOf } from './scope-checks.ts'

type Schema = Record<string, unknown>
type App = Parameters<typeof openApiDocumentOf>[0]

const isSchema = (value: unknown): value is Schema =>
  typeof value === 'object' && value !== null && !Array.isArray(value)

/** The unbounded places of one schema, each named `where: what` (where: the operation and the path in the schema). */
export function unboundedIn(schema: unknown, where: string, components: Schema = {}, seen = new Set<unknown>()): string[] {
  if (!isSchema(schema) || seen.has(schema)) return []
  seen.add(schema)
  if (typeof schema.$ref === 'string') {
    const name = schema.$ref.replace('#/components/schemas/', '')
    return unboundedIn(components[name], where, components, seen)
  }
  const found: string[] = []
  const types = Array.isArray(schema.type) ? schema.type : [schema.type]
  const fixed = Array.isArray(schema.enum) || 'const' in schema
  if (types.includes('string') && !fixed && typeof schema.maxLength !== 'number') found.push(`${where}: a string without maxLength`)
  if (types.includes('array') && typeof schema.maxItems !== 'number') {
    found.push(`${where}: an array without maxItems${schema.uniqueItems ? ' (its uniqueItems is checked pair by pair)' : ''}`)
  }
  const open = isSchema(schema.additionalProperties) || isSchema(schema.patternProperties)
  if (open && typeof schema.maxProperties !== 'number') found.push(`${where}: an object of any keys without maxProperties`)
  if (isSchema(schema.properties)) {
    for (const [name, each] of Object.entries(schema.properties)) found.push(...unboundedIn(each, `${where}.${name}`, components, seen))
  }
  for (const key of ['items', 'additionalProperties'] as const) found.push(...unboundedIn(schema[key], `${where}[]`, components, seen))
  if (isSchema(schema.patternProperties)) {
    for (const each of Object.values(schema.patternProperties)) found.push(...unboundedIn(each, `${where}{}`, components, seen))
  }
  for (const key of ['anyOf', 'oneOf', 'allOf', 'prefixItems'] as const) {
    const parts = schema[key]
    if (Array.isArray(parts)) for (const part of parts) found.push(...unboundedIn(part, where, components, seen))
  }
  return found
}

interface Operation {
  parameters?: { in: string; name: string; schema?: unknown }[]
  requestBody?: { content?: Record<string, { schema?: unknown }> }
}

/** Fails naming every unbounded input of the app's operations (`allowed`: `METHOD /path: where` lines accepted). */
export async function expectInputsBounded(app: App, allowed: readonly string[] = []): Promise<void> {
  const document = (await openApiDocumentOf(app)) as unknown as {
    paths?: Record<string, Record<string, Operation>>
    components?: { schemas?: Schema }
  }
  const components = document.components?.schemas ?? {}
  const found: string[] = []
  for (const [path, operations] of Object.entries(document.paths ?? {})) {
    for (const [method, operation] of Object.entries(operations)) {
      if (!isSchema(operation)) continue
      const name = `${method.toUpperCase()} ${path}`
      for (const parameter of operation.parameters ?? []) {
        found.push(...unboundedIn(parameter.schema, `${name}: ${parameter.in} ${parameter.name}`, components))
      }
      for (const [type, content] of Object.entries(operation.requestBody?.content ?? {})) {
        found.push(...unboundedIn(content.schema, `${name}: body (${type})`, components))
      }
    }
  }
  expect(found.filter((line) => !allowed.some((accepted) => line.startsWith(accepted)))).toEqual([])
}
