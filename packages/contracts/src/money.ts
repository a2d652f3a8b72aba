// Exact money: amounts travel as JSON numbers in the currency's major unit with at most two decimals (19.99), and are
// computed and stored as integer minor units (1999 cents), never added or multiplied as floats.
import { Type } from 'typebox'
import { AppError } from './errors.ts'

/** The largest amount in minor units: 10^10 cents (100 000 000.00), far inside Number.MAX_SAFE_INTEGER. */
export const maximumMinorUnits = 10_000_000_000

/** The largest amount in major units (what a JSON body may carry). */
export const maximumMoney = maximumMinorUnits / 100

/**
 * An amount of money in major units, e.g. 19.99: `multipleOf: 0.01` says "at most two decimals" to clients and to
 * tools. Binary floats make that check loose or strict depending on the validator (19.99 / 0.01 is not an integer in
 * binary), so the chassis' Ajv allows float noise (multipleOfPrecision) and services apply the exact rule with
 * toMinorUnits, answering 422 naming the field.
 */
export const Money = Type.Number({
  minimum: 0,
  maximum: maximumMoney,
  multipleOf: 0.01,
  description: `an amount in major units with at most two decimals, e.g. 19.99 (0 to ${maximumMoney})`,
})

/**
 * The integer minor units (cents) of an amount in major units, or undefined when it is not a money amount: not a
 * finite number, negative, above maximumMoney, or with more than two decimals. A value counts as having at most two
 * decimals when it is the double nearest to some `n / 100`, which is what JSON parsing of `19.99` gives; so `19.99`
 * is 1999 but `0.1 + 0.2` (0.30000000000000004) and `0.001` are refused.
 */
export function toMinorUnits(value: number): number | undefined {
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) return undefined
  const cents = Math.round(value * 100)
  if (cents > maximumMinorUnits || cents / 100 !== value) return undefined
  // -0 and 0 alike
  return cents === 0 ? 0 : cents
}

/** The amount in major units of integer minor units: a JSON number with at most two decimals (1999 -> 19.99). */
export function fromMinorUnits(cents: number): number {
  if (!Number.isSafeInteger(cents) || cents < 0 || cents > maximumMinorUnits) {
    throw new RangeError(`not an amount of minor units: ${String(cents)}`)
  }
  // division is correctly rounded: the result is the double nearest to cents / 100, which prints with <= 2 decimals
  return cents / 100
}

/**
 * toMinorUnits, or 422 VALIDATION_ERROR naming `field` (e.g. `price`, `items.0.price`): what a use case calls on
 * every amount a client sent.
 */
export function requireMinorUnits(value: number, field: string): number {
  const cents = toMinorUnits(value)
  if (cents === undefined) {
    throw AppError.validation([
      {
        field,
        message: `must be an amount with at most two decimals, from 0 to ${maximumMoney}`,
        received: String(value),
      },
    ])
  }
  return cents
}
