// Stripe's request encoding, parsed with bounds: application/x-www-form-urlencoded bodies and query strings in bracket
// notation (`metadata[orderId]=…`, `expand[]=…`, `expand[0]=…`, `card[number]=…`) into a tree of strings. Untrusted
// input, so every size is bounded (fields, nesting, lengths) with a Stripe-shaped 400 naming the bound.
import { invalidParameter, redact, StripeError } from './errors.ts'

/** A parameter: a string, or an object of parameters (lists too: their keys are "0", "1", ...). */
export type FormValue = string | FormObject
export interface FormObject {
  [key: string]: FormValue
}

/** The bounds of one request's parameters. */
export const formLimits = {
  /** bytes of a body */
  maxBodyBytes: 64 * 1024,
  /** name=value pairs of a body or query string */
  maxFields: 100,
  /** bracket levels of a name: `a[b][c][d][e]` is 4 */
  maxDepth: 4,
  /** characters of a value, and of a name */
  maxValueLength: 5000,
} as const

const tooLarge = (code: string, message: string) =>
  new StripeError(400, 'invalid_request_error', message, { code })

/** The Stripe-shaped 400 of a body over maxBodyBytes. */
export const bodyTooLarge = (): StripeError =>
  tooLarge(
    'request_body_too_large',
    `The request body is larger than ${formLimits.maxBodyBytes} bytes; send fewer or shorter parameters.`,
  )

const newObject = (): FormObject => Object.create(null) as FormObject

function decode(text: string, what: string): string {
  try {
    return decodeURIComponent(text.replace(/\+/g, ' '))
  } catch {
    throw new StripeError(400, 'invalid_request_error', `Invalid URL encoding in a parameter ${what}.`, {
      code: 'parameter_invalid_encoding',
    })
  }
}

/** `a[b][]` as its path: ['a', 'b', '']; a name that is no bracket notation is refused. */
function pathOf(name: string): string[] {
  const match = /^([^[\]]+)((?:\[[^[\]]*\])*)$/.exec(name)
  if (!match)
    throw invalidParameter(
      redact(name.slice(0, 100)),
      `Invalid parameter name: ${redact(name.slice(0, 100))}`,
    )
  const brackets = match[2]!.match(/\[[^[\]]*\]/g) ?? []
  if (brackets.length > formLimits.maxDepth)
    throw tooLarge(
      'parameter_nesting_too_deep',
      `Parameter ${redact(match[1]!.slice(0, 100))} is nested ${brackets.length} levels deep; at most ${formLimits.maxDepth} are allowed.`,
    )
  return [match[1]!, ...brackets.map((bracket) => bracket.slice(1, -1))]
}

/** Puts one value at its path; `[]` appends; a name used both as a value and as an object is refused. */
function assign(root: FormObject, path: string[], value: string, name: string): void {
  let node = root
  for (let index = 0; index < path.length; index++) {
    const key = path[index] === '' ? String(Object.keys(node).length) : path[index]!
    const last = index === path.length - 1
    const existing = node[key]
    if (last) {
      if (existing !== undefined && typeof existing !== 'string')
        throw invalidParameter(redact(name), `Invalid value for ${redact(name)}: it is also an object.`)
      node[key] = value
      return
    }
    if (typeof existing === 'string')
      throw invalidParameter(redact(name), `Invalid value for ${redact(name)}: it is also a string.`)
    if (existing === undefined) {
      const created = newObject()
      node[key] = created
      node = created
    } else node = existing
  }
}

/** Parses a body or query string; throws a 400 over any bound. */
export function parseForm(text: string): FormObject {
  const root = newObject()
  const pairs = text.split('&').filter((pair) => pair !== '')
  if (pairs.length > formLimits.maxFields)
    throw tooLarge(
      'too_many_parameters',
      `The request has ${pairs.length} parameters; at most ${formLimits.maxFields} are allowed.`,
    )
  for (const pair of pairs) {
    const at = pair.indexOf('=')
    const rawName = at === -1 ? pair : pair.slice(0, at)
    const rawValue = at === -1 ? '' : pair.slice(at + 1)
    const name = decode(rawName, 'name')
    const value = decode(rawValue, 'value')
    if (name.length > formLimits.maxValueLength || value.length > formLimits.maxValueLength)
      throw tooLong(name)
    assign(root, pathOf(name), value, name)
  }
  return root
}

function tooLong(name: string): StripeError {
  const param = redact(name.slice(0, 100))
  return new StripeError(
    400,
    'invalid_request_error',
    `Parameter ${param} (or its name) is longer than ${formLimits.maxValueLength} characters.`,
    { code: 'parameter_too_long', param },
  )
}
