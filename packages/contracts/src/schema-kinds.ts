// Schema shapes that validate and serialize fast: plain `enum` and type arrays instead of anyOf unions, which
// fast-json-stringify resolves by running a validator for every value it writes.
import { type Static, type TSchema, type TUnsafe, Type } from 'typebox'

/** A string that is one of `values`: `{ type: 'string', enum }`, typed as the union of the values. */
export function StringEnum<const Values extends readonly string[]>(
  values: Values,
  options: { description?: string; default?: Values[number] } = {},
): TUnsafe<Values[number]> {
  return Type.Unsafe<Values[number]>({ type: 'string', enum: [...values], ...options })
}

/** `schema` or null, as a type array (`type: ['integer', 'null']`) rather than an anyOf. */
export function Nullable<Schema extends TSchema & { type: string }>(
  schema: Schema,
): TUnsafe<Static<Schema> | null> {
  return Type.Unsafe<Static<Schema> | null>({ ...schema, type: [schema.type, 'null'] })
}

/**
 * The pattern every free-text input carries: no NUL (U+0000), which PostgreSQL text cannot hold. A NUL is refused
 * as 422 VALIDATION_ERROR naming the field (the chassis words the message), never a database error.
 */
export const textPattern = '^[^\\u0000]*$'

/** A text input: a string without NUL characters (`textPattern`), with the given length bounds and description. */
export function Text(options: { minLength?: number; maxLength?: number; description?: string } = {}) {
  return Type.String({ ...options, pattern: textPattern })
}

/**
 * What String.prototype.trim removes (ECMAScript WhiteSpace and LineTerminator), spelled out rather than `\s`, so
 * that every regular-expression engine reading the document (Ajv, a client's, a fuzzer's) draws the same line.
 */
const trimmed =
  '\\u0009-\\u000d\\u0020\\u00a0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000\\ufeff'

/**
 * `textPattern`, and at least one character that trimming keeps. Written so that it runs in linear time: the leading
 * white space and the first visible character are disjoint classes, so no input makes the engine try each split of
 * the string (`^[^\u0000]*[^\u0000\s][^\u0000]*$` did: a 40,000-character name ending in NUL took 3 s to refuse).
 */
export const visibleTextPattern = `^[${trimmed}]*[^\\u0000${trimmed}][^\\u0000]*$`

/** A text input that is stored trimmed: no NUL, and not only white space (which would trim to nothing). */
export function VisibleText(options: { minLength?: number; maxLength?: number; description?: string } = {}) {
  return Type.String({ ...options, pattern: visibleTextPattern })
}
