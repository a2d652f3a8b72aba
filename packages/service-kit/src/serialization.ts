// Response serialization: fast-json-stringify from each response schema (Fastify's own compiler), and in front of it,
// for a value that already has exactly the shape the schema gives, the native JSON.stringify, which writes the same
// bytes without building the text by concatenation.
//
// fast-json-stringify appends every key and value to a string: on a page of 20 users that is ~20 KB of short-lived
// strings and a flattening of the result before it is written (the chassis bench's list spent more on it than bare
// Fastify's JSON.stringify did, and more on the garbage collections it caused). A value "already has the shape" when
// every object is plain data whose own keys are declared properties, in the schema's order, every required one set,
// and every value of its declared type; fast-json-stringify would then drop nothing, coerce nothing and throw nothing,
// and its text is JSON.stringify's. Anything else (an undeclared key, a Date where a string is declared, a number in
// a string property, a missing required property) goes to fast-json-stringify as before. A schema with anything the
// check does not model (combinators, $ref, const, nullable, defaults, additional or pattern properties, the 'unsafe'
// format, a type left out) is always serialized by fast-json-stringify.
import { createRequire } from 'node:module'
import type { FastifyServerOptions } from 'fastify'

type SerializerFactory = NonNullable<
  NonNullable<NonNullable<FastifyServerOptions['schemaController']>['compilersFactory']>['buildSerializer']
>

type Serialize = (value: unknown) => string
/** What Fastify hands a serializer factory's compiler: one response schema of a route. */
type RouteSerializerCompiler = (route: { schema: unknown }) => Serialize
type CompilerFactory = (externalSchemas: unknown, options?: unknown) => RouteSerializerCompiler

/** Whether a value has exactly the shape a schema gives it (see the top of this file). */
export type ShapeCheck = (value: unknown) => boolean

/** Keywords that never change what fast-json-stringify writes for a value of the schema's type. */
const inertKeywords: ReadonlySet<string> = new Set([
  'description',
  'title',
  'examples',
  '$comment',
  'deprecated',
  'readOnly',
  'writeOnly',
  'format',
  'pattern',
  'minLength',
  'maxLength',
  'minimum',
  'maximum',
  'exclusiveMinimum',
  'exclusiveMaximum',
  'multipleOf',
  'enum',
  'minItems',
  'maxItems',
  'uniqueItems',
  'minProperties',
  'maxProperties',
])

const primitiveChecks: Readonly<Record<string, ShapeCheck>> = {
  string: (value) => typeof value === 'string',
  integer: (value) => Number.isInteger(value),
  // fast-json-stringify writes an infinite number as null, as JSON.stringify does, but refuses NaN: both left to it
  number: (value) => typeof value === 'number' && Number.isFinite(value),
  boolean: (value) => typeof value === 'boolean',
  null: (value) => value === null,
}

const isPlainObject = (value: object): boolean => {
  const prototype = Object.getPrototypeOf(value)
  return prototype === Object.prototype || prototype === null
}

/** Only the keywords of `allowed` and the inert ones, every one of them a string key. */
function onlyKeywords(schema: Record<string, unknown>, allowed: readonly string[]): boolean {
  for (const key of Object.keys(schema)) {
    if (!allowed.includes(key) && !inertKeywords.has(key)) return false
  }
  return true
}

/**
 * The check of a response schema, or undefined when the schema has anything the check does not model (such a
 * schema is always serialized by fast-json-stringify).
 */
export function shapeCheckOf(schema: unknown): ShapeCheck | undefined {
  if (typeof schema !== 'object' || schema === null || Array.isArray(schema)) return undefined
  const node = schema as Record<string, unknown>
  if (node.format === 'unsafe') return undefined
  const { type } = node
  if (Array.isArray(type)) {
    // a list of primitive types: fast-json-stringify tries each in turn, and a value of exactly one of them is
    // written as that type
    if (!onlyKeywords(node, ['type']) || type.length === 0) return undefined
    const checks = type.map((name) => (typeof name === 'string' ? primitiveChecks[name] : undefined))
    if (checks.some((check) => check === undefined)) return undefined
    const any = checks as ShapeCheck[]
    return (value) => {
      for (const check of any) if (check(value)) return true
      return false
    }
  }
  if (type === 'object') return objectCheckOf(node)
  if (type === 'array') return arrayCheckOf(node)
  if (typeof type !== 'string' || !onlyKeywords(node, ['type'])) return undefined
  return primitiveChecks[type]
}

function objectCheckOf(schema: Record<string, unknown>): ShapeCheck | undefined {
  if (!onlyKeywords(schema, ['type', 'properties', 'required', 'additionalProperties'])) return undefined
  const { properties, required = [], additionalProperties } = schema
  if (additionalProperties !== undefined && additionalProperties !== false) return undefined
  if (typeof properties !== 'object' || properties === null || Array.isArray(properties)) return undefined
  if (!Array.isArray(required)) return undefined
  const keys = Object.keys(properties)
  if (keys.length === 0 || required.some((name) => !keys.includes(name))) return undefined
  const checks: ShapeCheck[] = []
  for (const key of keys) {
    const check = shapeCheckOf((properties as Record<string, unknown>)[key])
    if (check === undefined) return undefined
    checks.push(check)
  }
  const isRequired = keys.map((key) => required.includes(key))
  const count = keys.length

  return (value) => {
    if (typeof value !== 'object' || value === null || Array.isArray(value) || !isPlainObject(value))
      return false
    const object = value as Record<string, unknown>
    // the value's enumerable keys walked beside the declared ones: each must come, in the schema's order, and a
    // declared key passed over must be unset (an inherited or non-enumerable value would be written by one and not
    // by the other)
    let next = 0
    for (const key in object) {
      while (next < count && keys[next] !== key) {
        if (isRequired[next] || object[keys[next] as string] !== undefined) return false
        next++
      }
      if (next === count) return false
      const item = object[key]
      if (item === undefined ? isRequired[next] : !(checks[next] as ShapeCheck)(item)) return false
      next++
    }
    for (; next < count; next++) {
      if (isRequired[next] || object[keys[next] as string] !== undefined) return false
    }
    return true
  }
}

function arrayCheckOf(schema: Record<string, unknown>): ShapeCheck | undefined {
  if (!onlyKeywords(schema, ['type', 'items'])) return undefined
  const items = shapeCheckOf(schema.items)
  if (items === undefined) return undefined
  return (value) => {
    if (!Array.isArray(value) || Object.getPrototypeOf(value) !== Array.prototype) return false
    // a hole reads as undefined, which no schema type takes
    for (let i = 0; i < value.length; i++) if (!items(value[i])) return false
    return true
  }
}

/**
 * Fastify's serializer compiler (@fastify/fast-json-stringify-compiler, Fastify's dependency: read through Fastify, so
 * that it is always the one this Fastify was built with).
 */
const fastifySerializerCompiler = (): CompilerFactory => {
  const fromFastify = createRequire(import.meta.resolve('fastify'))
  const { SerializerSelector } = fromFastify('@fastify/fast-json-stringify-compiler') as {
    SerializerSelector: () => CompilerFactory
  }
  return SerializerSelector()
}

/**
 * `schemaController.compilersFactory.buildSerializer`: fast-json-stringify for every response schema, with
 * JSON.stringify in front of it for values that already have the schema's shape.
 */
export function shapeCheckedSerializer(): SerializerFactory {
  const build = fastifySerializerCompiler()
  const factory: CompilerFactory = (externalSchemas, options) => {
    const compile = build(externalSchemas, options)
    return (route) => {
      const serialize = compile(route)
      const hasShape = shapeCheckOf(route.schema)
      if (hasShape === undefined) return serialize
      return (value) => (hasShape(value) ? JSON.stringify(value) : serialize(value))
    }
  }
  return factory as unknown as SerializerFactory
}
