// Breaking changes between a released OpenAPI document and the one served now (docs/how-to/releasing.md, "What counts
// as breaking"): what a client written against the release would meet. An operation removed; a parameter or request
// field removed, made required or added as required; a request bound narrowed (maxLength, maximum, an enum value
// removed); a response status removed; a response field removed, made optional or given another type; the scopes an
// operation needs changed. Paths under /api/v2 (and later versions) are new interfaces beside v1: never compared.
// Additions (a new path, an optional field, a new response field, a new enum value in a response, a bound widened)
// are not breaking.
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { isSemver } from './release.ts'

/** A JSON Schema as the documents hold it (TypeBox's output): only the keywords the comparison reads are typed. */
interface Schema {
  $ref?: string
  type?: string | string[]
  properties?: Record<string, Schema>
  required?: string[]
  items?: Schema
  enum?: unknown[]
  anyOf?: Schema[]
  oneOf?: Schema[]
  maxLength?: number
  maximum?: number
  maxItems?: number
  minLength?: number
  minimum?: number
  minItems?: number
}

interface Parameter {
  name: string
  in: string
  required?: boolean
  schema?: Schema
}

interface Operation {
  parameters?: Parameter[]
  requestBody?: { required?: boolean; content?: Record<string, { schema?: Schema }> }
  responses?: Record<string, { content?: Record<string, { schema?: Schema }> }>
  security?: Record<string, string[]>[]
}

export interface OpenApiDocument {
  paths?: Record<string, Record<string, unknown>>
  components?: { schemas?: Record<string, Schema> }
}

export interface BreakingChange {
  /** `POST /api/v1/orders` */
  operation: string
  /** where in it: `request body .items[].quantity`, `response 201 .status`, `parameter query limit` */
  where: string
  /** what changed, in words */
  change: string
}

const methods = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options'] as const

/** /api/v2/…, /api/v3/…: a later version of a path, which lives beside v1 and is compared with nothing. */
const isLaterVersion = (path: string): boolean => {
  if (!path.startsWith('/api/v')) return false
  const version = Number(path.slice('/api/v'.length).split('/')[0])
  return Number.isInteger(version) && version >= 2
}

/** How deep a schema is followed: the documents are a few levels deep; a cycle through $ref stops here. */
const maxDepth = 24

class Comparison {
  readonly changes: BreakingChange[] = []
  constructor(
    private readonly before: OpenApiDocument,
    private readonly after: OpenApiDocument,
    private readonly ignored: (path: string) => boolean,
  ) {}

  private resolve(document: OpenApiDocument, schema: Schema | undefined): Schema | undefined {
    let current = schema
    for (let hops = 0; current?.$ref !== undefined && hops < maxDepth; hops++) {
      const prefix = '#/components/schemas/'
      current = current.$ref.startsWith(prefix)
        ? document.components?.schemas?.[current.$ref.slice(prefix.length)]
        : undefined
    }
    return current
  }

  private report(operation: string, where: string, change: string): void {
    this.changes.push({ operation, where, change })
  }

  /** The types a schema allows, anyOf/oneOf branches included ('null' among them for a nullable one). */
  private typesOf(document: OpenApiDocument, schema: Schema | undefined, depth = 0): Set<string> {
    const resolved = this.resolve(document, schema)
    const types = new Set<string>()
    if (!resolved || depth > maxDepth) return types
    for (const type of [resolved.type ?? []].flat()) types.add(type)
    for (const branch of [...(resolved.anyOf ?? []), ...(resolved.oneOf ?? [])])
      for (const type of this.typesOf(document, branch, depth + 1)) types.add(type)
    return types
  }

  /**
   * The part of a schema that has `part` (its properties, its items): itself, or its one branch in anyOf/oneOf that
   * has it (a nullable object or array).
   */
  private branchWith(document: OpenApiDocument, schema: Schema | undefined, part: 'properties' | 'items') {
    const resolved = this.resolve(document, schema)
    if (!resolved || resolved[part] !== undefined) return resolved
    const branches = [...(resolved.anyOf ?? []), ...(resolved.oneOf ?? [])]
      .map((branch) => this.resolve(document, branch))
      .filter((branch) => branch?.[part] !== undefined)
    return branches.length === 1 ? branches[0] : undefined
  }

  private objectOf(document: OpenApiDocument, schema: Schema | undefined): Schema | undefined {
    const object = this.branchWith(document, schema, 'properties')
    return object?.properties ? object : undefined
  }

  private itemsOf(document: OpenApiDocument, schema: Schema | undefined): Schema | undefined {
    return this.branchWith(document, schema, 'items')?.items
  }

  /**
   * A request schema: what the release accepted must still be accepted. A field removed, a field newly required, a
   * type no longer allowed, an upper bound lowered, a lower bound raised, an enum value removed.
   */
  request(
    operation: string,
    where: string,
    before: Schema | undefined,
    after: Schema | undefined,
    depth = 0,
  ): void {
    const old = this.resolve(this.before, before)
    const now = this.resolve(this.after, after)
    if (!old || !now || depth > maxDepth) return
    const types = this.typesOf(this.after, now)
    const lost = [...this.typesOf(this.before, old)].filter(
      (type) => types.size > 0 && !types.has(type) && !(type === 'integer' && types.has('number')),
    )
    if (lost.length > 0) this.report(operation, where, `no longer accepts ${lost.join(', ')}`)
    for (const bound of ['maxLength', 'maximum', 'maxItems'] as const) {
      const [was, is] = [old[bound], now[bound]]
      if (is !== undefined && (was === undefined || is < was))
        this.report(operation, where, `${bound} narrowed from ${was ?? 'none'} to ${is}`)
    }
    for (const bound of ['minLength', 'minimum', 'minItems'] as const) {
      const [was, is] = [old[bound], now[bound]]
      if (is !== undefined && (was === undefined || is > was))
        this.report(operation, where, `${bound} raised from ${was ?? 'none'} to ${is}`)
    }
    if (old.enum && now.enum) {
      const removed = old.enum.filter((value) => !now.enum?.includes(value))
      if (removed.length > 0) this.report(operation, where, `enum values removed: ${removed.join(', ')}`)
    } else if (!old.enum && now.enum) this.report(operation, where, 'restricted to an enum')
    const oldObject = this.objectOf(this.before, old)
    const newObject = this.objectOf(this.after, now)
    if (oldObject?.properties && newObject?.properties) {
      const wasRequired = new Set(oldObject.required ?? [])
      for (const name of newObject.required ?? [])
        if (!wasRequired.has(name))
          this.report(
            operation,
            `${where}.${name}`,
            oldObject.properties[name] ? 'made required' : 'a new required field',
          )
      for (const [name, property] of Object.entries(oldObject.properties)) {
        const next = newObject.properties[name]
        if (!next) this.report(operation, `${where}.${name}`, 'removed')
        else this.request(operation, `${where}.${name}`, property, next, depth + 1)
      }
    }
    const oldItems = this.itemsOf(this.before, old)
    const newItems = this.itemsOf(this.after, now)
    if (oldItems && newItems) this.request(operation, `${where}[]`, oldItems, newItems, depth + 1)
  }

  /**
   * A response schema: what the release's clients read must still be there. A field removed or made optional, a
   * type the release never sent (a new enum value is tolerated: docs/how-to/releasing.md).
   */
  response(
    operation: string,
    where: string,
    before: Schema | undefined,
    after: Schema | undefined,
    depth = 0,
  ): void {
    const old = this.resolve(this.before, before)
    const now = this.resolve(this.after, after)
    if (!old || !now || depth > maxDepth) return
    const oldTypes = this.typesOf(this.before, old)
    const gained = [...this.typesOf(this.after, now)].filter(
      (type) => oldTypes.size > 0 && !oldTypes.has(type) && !(type === 'integer' && oldTypes.has('number')),
    )
    if (gained.length > 0) this.report(operation, where, `may now be ${gained.join(', ')}`)
    const oldObject = this.objectOf(this.before, old)
    const newObject = this.objectOf(this.after, now)
    if (oldObject?.properties && newObject?.properties) {
      const required = new Set(newObject.required ?? [])
      for (const [name, property] of Object.entries(oldObject.properties)) {
        const next = newObject.properties[name]
        if (!next) this.report(operation, `${where}.${name}`, 'removed')
        else {
          if ((oldObject.required ?? []).includes(name) && !required.has(name))
            this.report(operation, `${where}.${name}`, 'made optional')
          this.response(operation, `${where}.${name}`, property, next, depth + 1)
        }
      }
    }
    const oldItems = this.itemsOf(this.before, old)
    const newItems = this.itemsOf(this.after, now)
    if (oldItems && newItems) this.response(operation, `${where}[]`, oldItems, newItems, depth + 1)
  }

  operation(name: string, before: Operation, after: Operation): void {
    const key = (parameter: Parameter) => `${parameter.in} ${parameter.name.toLowerCase()}`
    const newParameters = new Map((after.parameters ?? []).map((parameter) => [key(parameter), parameter]))
    const oldParameters = new Map((before.parameters ?? []).map((parameter) => [key(parameter), parameter]))
    for (const [id, parameter] of oldParameters) {
      const next = newParameters.get(id)
      if (!next) this.report(name, `parameter ${id}`, 'removed')
      else {
        if (!parameter.required && next.required) this.report(name, `parameter ${id}`, 'made required')
        this.request(name, `parameter ${id}`, parameter.schema, next.schema)
      }
    }
    for (const [id, parameter] of newParameters)
      if (!oldParameters.has(id) && parameter.required)
        this.report(name, `parameter ${id}`, 'a new required parameter')

    if (!before.requestBody?.required && after.requestBody?.required)
      this.report(name, 'request body', 'made required')
    for (const [type, media] of Object.entries(before.requestBody?.content ?? {})) {
      const next = after.requestBody?.content?.[type]
      if (!next) this.report(name, `request body ${type}`, 'no longer accepted')
      else this.request(name, 'request body ', media.schema, next.schema)
    }

    for (const [status, response] of Object.entries(before.responses ?? {})) {
      const next = after.responses?.[status]
      if (!next) {
        this.report(name, `response ${status}`, 'no longer answered')
        continue
      }
      for (const [type, media] of Object.entries(response.content ?? {})) {
        const nextMedia = next.content?.[type]
        if (!nextMedia) this.report(name, `response ${status} ${type}`, 'no longer sent')
        else this.response(name, `response ${status} `, media.schema, nextMedia.schema)
      }
    }

    const scopes = (operation: Operation) =>
      JSON.stringify(
        (operation.security ?? [])
          .map((requirement) =>
            Object.entries(requirement)
              .map(([scheme, needed]) => `${scheme}:${[...needed].sort().join(' ')}`)
              .sort()
              .join(','),
          )
          .sort(),
      )
    if (scopes(before) !== scopes(after))
      this.report(name, 'security', `the credentials it needs changed: ${scopes(before)} -> ${scopes(after)}`)
  }

  run(): BreakingChange[] {
    for (const [path, item] of Object.entries(this.before.paths ?? {})) {
      if (isLaterVersion(path) || this.ignored(path)) continue
      for (const method of methods) {
        const before = item[method] as Operation | undefined
        if (!before) continue
        const name = `${method.toUpperCase()} ${path}`
        const after = this.after.paths?.[path]?.[method] as Operation | undefined
        if (!after) this.report(name, 'operation', 'removed')
        else this.operation(name, before, after)
      }
    }
    return this.changes
  }
}

export interface CompatibilityOptions {
  /** paths of the release that are not part of the interface (a development tool's page): not compared */
  ignorePaths?: (path: string) => boolean
}

/** The changes from `released` to `current` that break a client of the release (none: compatible). */
export function breakingChanges(
  released: OpenApiDocument,
  current: OpenApiDocument,
  options: CompatibilityOptions = {},
): BreakingChange[] {
  return new Comparison(released, current, options.ignorePaths ?? (() => false)).run()
}

/** One line per change, for a test's or a script's message. */
export const describeChanges = (changes: readonly BreakingChange[]): string =>
  changes.map(({ operation, where, change }) => `${operation}: ${where.trim()} ${change}`).join('\n')

/** The released versions under `releases/`, newest first (SemVer order; a pre-release before its release). */
export function releasedVersions(root: string): string[] {
  const folder = join(root, 'releases')
  if (!existsSync(folder)) return []
  const parts = (version: string) => {
    const [core = '', pre] = version.split('-', 2)
    return { numbers: core.split('.').map(Number), pre }
  }
  return readdirSync(folder)
    .filter((name) => isSemver(name) && existsSync(join(folder, name, 'openapi.json')))
    .sort((a, b) => {
      const [left, right] = [parts(a), parts(b)]
      for (let index = 0; index < 3; index++) {
        const difference = (right.numbers[index] ?? 0) - (left.numbers[index] ?? 0)
        if (difference !== 0) return difference
      }
      if (left.pre === right.pre) return 0
      if (left.pre === undefined) return -1
      if (right.pre === undefined) return 1
      return right.pre.localeCompare(left.pre)
    })
}

/** The newest release's OpenAPI document (releases/<version>/openapi.json), or undefined before the first release. */
export function latestReleasedOpenApi(
  root: string,
): { version: string; document: OpenApiDocument } | undefined {
  const [version] = releasedVersions(root)
  if (version === undefined) return undefined
  const text = readFileSync(join(root, 'releases', version, 'openapi.json'), 'utf8')
  return { version, document: JSON.parse(text) as OpenApiDocument }
}
