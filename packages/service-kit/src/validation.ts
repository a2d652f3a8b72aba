// Request validation: query strings, path parameters and headers arrive as text and are coerced to their schema's
// types ("2" -> 2); a JSON body already has types, so it is validated as it was sent (123 is not a string).
import { createRequire } from 'node:module'
import type { FastifyServerOptions } from 'fastify'
import { boundProblemAsAjvIssue, boundsExceeded } from './input-bounds.ts'

type ValidatorFactory = NonNullable<
  NonNullable<NonNullable<FastifyServerOptions['schemaController']>['compilersFactory']>['buildValidator']
>

/** What Fastify hands a validator factory, and what it expects back: a compiler of one route part's schema. */
type CompilerOptions = { customOptions?: Record<string, unknown> } & Record<string, unknown>
type RoutePartCompiler = (route: { httpPart?: string; schema?: unknown }) => unknown
type CompilerFactory = (externalSchemas: unknown, options?: CompilerOptions) => RoutePartCompiler

/** The options every validator of the chassis uses: every problem at once, unknown fields refused, defaults applied. */
export const ajvOptions = {
  allErrors: true,
  removeAdditional: false,
  coerceTypes: 'array',
  useDefaults: true,
  // multipleOf on binary floats: 19.99 / 0.01 is 1998.9999999999998, which an exact check refuses. Within 1e-4 of an
  // integer counts (money's 0.01 up to 10^8), and the service's own rule decides the rest (contracts' money.ts).
  multipleOfPrecision: 4,
} as const

/**
 * Fastify's own validator compiler (@fastify/ajv-compiler, Fastify's dependency: read through Fastify, so that it is
 * always the one this Fastify was built with).
 */
const fastifyValidatorCompiler = (): CompilerFactory => {
  const fromFastify = createRequire(import.meta.resolve('fastify'))
  const ajvCompiler = fromFastify('@fastify/ajv-compiler') as () => CompilerFactory
  return ajvCompiler()
}

/** What Fastify calls: Ajv's validate function, with its `errors` and (when it can coerce a root) `schemaEnv`. */
interface ValidateFunction {
  (data: unknown, context?: { parentData?: unknown; parentDataProperty?: string }): unknown
  errors?: unknown[] | null
  schemaEnv?: unknown
  schema?: unknown
}

interface NonFiniteProblem {
  instancePath: string
  schemaPath: string
  keyword: 'type'
  params: { type: 'number' }
  message: string
}

const isNonFinite = (value: unknown): boolean => typeof value === 'number' && !Number.isFinite(value)

/** A non-finite number, or an array (a repeated query parameter) holding one. */
function isOrHoldsNonFinite(value: unknown): boolean {
  if (!Array.isArray(value)) return isNonFinite(value)
  for (const item of value) if (isNonFinite(item)) return true
  return false
}

const nonFiniteProblem = (name: string): NonFiniteProblem => ({
  instancePath: `/${name.replaceAll('~', '~0').replaceAll('/', '~1')}`,
  schemaPath: `#/properties/${name}`,
  keyword: 'type',
  params: { type: 'number' },
  message: 'must be a finite number',
})

/**
 * Ajv coerces `"1e400"` to Infinity and then checks numeric keywords only on finite numbers, so `?page=1e400` would
 * pass `maximum` and reach the handler (and SQL) as Infinity. A coerced part with a non-finite number is refused
 * here, naming the parameter, as Ajv refuses one in a JSON body.
 */
function refusingNonFiniteNumbers(validate: ValidateFunction): ValidateFunction {
  const wrapped: ValidateFunction = (data, context) => {
    const valid = validate(data, context)
    if (!valid) {
      wrapped.errors = validate.errors ?? null
      return false
    }
    // every request passes here: nothing is allocated unless a parameter is not finite
    let problems: NonFiniteProblem[] | undefined
    if (data !== null && typeof data === 'object') {
      const parts = data as Record<string, unknown>
      for (const name in parts) {
        if (!Object.hasOwn(parts, name) || !isOrHoldsNonFinite(parts[name])) continue
        problems ??= []
        problems.push(nonFiniteProblem(name))
      }
    }
    wrapped.errors = problems ?? null
    return problems === undefined
  }
  if (validate.schemaEnv !== undefined) wrapped.schemaEnv = validate.schemaEnv
  if (validate.schema !== undefined) wrapped.schema = validate.schema
  return wrapped
}

/**
 * Sizes first (input-bounds.ts): an input past a `maxItems`, `maxLength` or `maxProperties` of its schema is refused for
 * that alone, before Ajv (which, collecting every problem, would check the uniqueness and every item of an array
 * already too long) sees it.
 */
function boundsFirst(schema: unknown, validate: ValidateFunction): ValidateFunction {
  const wrapped: ValidateFunction = (data, context) => {
    const problems = boundsExceeded(schema, data)
    if (problems.length > 0) {
      wrapped.errors = problems.map(boundProblemAsAjvIssue)
      return false
    }
    const valid = validate(data, context)
    wrapped.errors = validate.errors ?? null
    return valid
  }
  if (validate.schemaEnv !== undefined) wrapped.schemaEnv = validate.schemaEnv
  if (validate.schema !== undefined) wrapped.schema = validate.schema
  return wrapped
}

/**
 * `schemaController.compilersFactory.buildValidator`: Fastify's compiler twice, with coercion for the parts that are
 * text (and no number that coerced to Infinity) and without it for the body. Fastify would otherwise coerce bodies too (its default), accepting
 * `{"name": 123}` for a string and `"x"` for an array of strings, which the documented schema refuses.
 */
export function partAwareValidator(): ValidatorFactory {
  const build = fastifyValidatorCompiler()
  const factory: CompilerFactory = (externalSchemas, options) => {
    const customOptions = { ...ajvOptions, ...options?.customOptions }
    const coercing = build(externalSchemas, { ...options, customOptions })
    const exact = build(externalSchemas, {
      ...options,
      customOptions: { ...customOptions, coerceTypes: false },
    })
    return (route) =>
      boundsFirst(
        route.schema,
        route.httpPart === 'body'
          ? (exact(route) as ValidateFunction)
          : refusingNonFiniteNumbers(coercing(route) as ValidateFunction),
      )
  }
  return factory as unknown as ValidatorFactory
}
