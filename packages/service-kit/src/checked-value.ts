// A value that did not come through a route's schema (a GraphQL operation's arguments, a message on a socket)
// checked against its TypeBox schema, with the same details a request's validation gives.
import { AppError } from '@meridian/contracts'
import type { FastifyError } from 'fastify'
import type { Static, TSchema } from 'typebox'
import { Compile } from 'typebox/compile'
import { validationDetails } from './error-handler.ts'

const compiled = new WeakMap<TSchema, ReturnType<typeof Compile>>()

function compiledOf(schema: TSchema): ReturnType<typeof Compile> {
  let check = compiled.get(schema)
  if (!check) {
    check = Compile(schema)
    compiled.set(schema, check)
  }
  return check
}

/** The value, typed by its schema; otherwise a 422 VALIDATION_ERROR with one detail per problem (field, message, received). */
export function checkedValue<Schema extends TSchema>(
  schema: Schema,
  value: unknown,
  message?: string,
): Static<Schema> {
  const check = compiledOf(schema)
  if (check.Check(value)) return value as Static<Schema>
  // TypeBox reports issues as Ajv does (instancePath, keyword, params, message)
  const issues = check.Errors(value) as unknown as NonNullable<FastifyError['validation']>
  throw AppError.validation(validationDetails(issues, value), message)
}
