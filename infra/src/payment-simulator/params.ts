// Checking a Stripe request's parameters as Stripe does: any name the endpoint does not take is 400 parameter_unknown
// (its full bracket name, `card[foo]`), a missing required one 400 parameter_missing, a malformed integer, boolean or
// choice 400 naming the parameter. Every error here is a request refused before it ran: never kept for a key.
import { invalidParameter, missingParameter, redact, unknownParameter } from './errors.ts'
import type { FormObject, FormValue } from './form.ts'
import type { Metadata } from './state.ts'

/**
 * What an endpoint takes: `true` a string, 'map' an object of strings with any keys (metadata), 'list' a list of
 * strings (`expand[]`), or an object of its own parameters (`card[number]`).
 */
export type ParamShape = true | 'map' | 'list' | { readonly [key: string]: ParamShape }

const nameOf = (prefix: string, key: string) => (prefix ? `${prefix}[${key}]` : key)

function checkStrings(value: FormValue, name: string): void {
  if (typeof value === 'string') {
    if (value !== '')
      throw invalidParameter(redact(name), `Invalid object: ${redact(name)} must be an object.`)
    return
  }
  for (const [key, item] of Object.entries(value)) {
    const itemName = redact(nameOf(name, key))
    if (typeof item !== 'string')
      throw invalidParameter(itemName, `Invalid string: ${itemName} must be a string, not an object.`)
  }
}

/** Refuses any parameter the shape does not name, and any of the wrong kind (an object for a string, ...). */
export function checkKnown(
  values: FormObject,
  shape: { readonly [key: string]: ParamShape },
  prefix = '',
): void {
  for (const [key, value] of Object.entries(values)) {
    const name = nameOf(prefix, key)
    const expected = Object.hasOwn(shape, key) ? shape[key] : undefined
    if (expected === undefined) throw unknownParameter(name)
    if (expected === true) {
      if (typeof value !== 'string')
        throw invalidParameter(
          redact(name),
          `Invalid string: ${redact(name)} must be a string, not an object.`,
        )
    } else if (expected === 'map' || expected === 'list') checkStrings(value, name)
    else if (typeof value === 'string')
      throw invalidParameter(redact(name), `Invalid object: ${redact(name)} must be an object.`)
    else checkKnown(value, expected, name)
  }
}

export interface IntegerBounds {
  min: number
  max: number
  /** the code of a value under min (parameter_invalid_integer by default) */
  tooSmall?: string
  /** the code of a value over max */
  tooLarge?: string
}

const metadataLimits = { keys: 50, keyLength: 40, valueLength: 500 }

/** The parameters of a request (or of one object in it, `card`), read after checkKnown. */
export class Params {
  readonly values: FormObject
  readonly prefix: string

  constructor(values: FormObject, prefix = '') {
    this.values = values
    this.prefix = prefix
  }

  name(key: string): string {
    return nameOf(this.prefix, key)
  }

  has(key: string): boolean {
    return Object.hasOwn(this.values, key)
  }

  /** A string parameter; an empty one is none (Stripe's way of unsetting). */
  string(key: string): string | undefined {
    const value = this.values[key]
    return typeof value === 'string' && value !== '' ? value : undefined
  }

  required(key: string): string {
    const value = this.string(key)
    if (value === undefined) throw missingParameter(this.name(key))
    return value
  }

  integer(key: string, bounds: IntegerBounds): number | undefined {
    const text = this.string(key)
    if (text === undefined) return undefined
    const name = this.name(key)
    if (!/^-?\d{1,15}$/.test(text))
      throw invalidParameter(
        name,
        `Invalid integer: ${redact(text.slice(0, 50))}`,
        'parameter_invalid_integer',
      )
    const value = Number(text)
    if (value < bounds.min)
      throw invalidParameter(
        name,
        `Invalid ${name}: must be at least ${bounds.min}.`,
        bounds.tooSmall ?? 'parameter_invalid_integer',
      )
    if (value > bounds.max)
      throw invalidParameter(
        name,
        `Invalid ${name}: must be at most ${bounds.max}.`,
        bounds.tooLarge ?? 'parameter_invalid_integer',
      )
    return value
  }

  boolean(key: string): boolean | undefined {
    const text = this.string(key)
    if (text === undefined) return undefined
    if (text === 'true') return true
    if (text === 'false') return false
    throw invalidParameter(
      this.name(key),
      `Invalid boolean: ${redact(text.slice(0, 50))}`,
      'parameter_invalid_boolean',
    )
  }

  choice<T extends string>(key: string, values: readonly T[]): T | undefined {
    const text = this.string(key)
    if (text === undefined) return undefined
    if (!(values as readonly string[]).includes(text))
      throw invalidParameter(
        this.name(key),
        `Invalid ${this.name(key)}: must be one of ${values.join(', ')}`,
        'parameter_invalid',
      )
    return text as T
  }

  /** A list (`expand[]=a`, `expand[0]=a`), in index order; empty when absent. */
  list(key: string): string[] {
    const value = this.values[key]
    if (value === undefined || typeof value === 'string') return []
    return Object.entries(value)
      .sort(([a], [b]) => Number(a) - Number(b) || a.localeCompare(b))
      .map(([, item]) => item)
      .filter((item): item is string => typeof item === 'string' && item !== '')
  }

  /** The object parameter `key`, if given. */
  child(key: string): Params | undefined {
    const value = this.values[key]
    return value === undefined || typeof value === 'string' ? undefined : new Params(value, this.name(key))
  }

  /** metadata[k]=v with Stripe's bounds: 50 keys, keys of 40 characters, values of 500; empty values unset. */
  metadata(key = 'metadata'): Metadata {
    const value = this.values[key]
    if (value === undefined || typeof value === 'string') return {}
    const entries = Object.entries(value).filter(
      (entry): entry is [string, string] => typeof entry[1] === 'string' && entry[1] !== '',
    )
    const name = this.name(key)
    if (entries.length > metadataLimits.keys)
      throw invalidParameter(name, `Invalid ${name}: at most ${metadataLimits.keys} keys are allowed.`)
    for (const [item, text] of entries) {
      if (item.length > metadataLimits.keyLength || text.length > metadataLimits.valueLength)
        throw invalidParameter(
          nameOf(name, redact(item.slice(0, 50))),
          `Metadata keys can have up to ${metadataLimits.keyLength} characters and values up to ${metadataLimits.valueLength}.`,
        )
    }
    return Object.fromEntries(entries)
  }
}
