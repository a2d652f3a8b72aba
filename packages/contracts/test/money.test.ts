import { Value } from 'typebox/value'
import { describe, expect, it } from 'vitest'
import { AppError } from '../src/errors.ts'
import {
  fromMinorUnits,
  Money,
  maximumMinorUnits,
  maximumMoney,
  requireMinorUnits,
  toMinorUnits,
} from '../src/money.ts'

describe('toMinorUnits', () => {
  it('when an amount has at most two decimals, then it is its exact number of cents', () => {
    expect(toMinorUnits(0.07)).toBe(7)
    expect(toMinorUnits(19.99)).toBe(1999)
    expect(toMinorUnits(0.29)).toBe(29)
    expect(toMinorUnits(1.01)).toBe(101)
    expect(toMinorUnits(1234567.89)).toBe(123456789)
    expect(toMinorUnits(10)).toBe(1000)
    expect(toMinorUnits(0)).toBe(0)
    expect(Object.is(toMinorUnits(-0), 0)).toBe(true)
    expect(toMinorUnits(maximumMoney)).toBe(maximumMinorUnits)
  })

  it('when every two-decimal amount up to 100.00 is parsed from its JSON text, then each is its cents exactly', () => {
    for (let cents = 0; cents <= 10_000; cents++) {
      const text = `${Math.floor(cents / 100)}.${String(cents % 100).padStart(2, '0')}`
      expect(toMinorUnits(JSON.parse(text) as number), text).toBe(cents)
    }
  })

  it('when a float sum drifted (0.1 + 0.2), then the drifted value is refused and the sum in cents is exact', () => {
    expect(0.1 + 0.2).not.toBe(0.3)
    expect(toMinorUnits(0.1 + 0.2)).toBeUndefined()
    const cents = (toMinorUnits(0.1) as number) + (toMinorUnits(0.2) as number)
    expect(cents).toBe(30)
    expect(fromMinorUnits(cents)).toBe(0.3)
    // 3 x 1.15 as floats is 3.4499999999999997; in cents it is exact
    expect(1.15 * 3).not.toBe(3.45)
    expect(fromMinorUnits((toMinorUnits(1.15) as number) * 3)).toBe(3.45)
    // 4.35 x 100 as floats is 434.99999999999994, yet 4.35 is 435 cents
    expect(toMinorUnits(4.35)).toBe(435)
  })

  it('when an amount has more than two decimals, is negative, not finite or too large, then it is refused', () => {
    for (const value of [
      1e-3,
      0.001,
      19.999,
      0.125,
      -0.01,
      -5,
      Number.NaN,
      Number.POSITIVE_INFINITY,
      Number.NEGATIVE_INFINITY,
      maximumMoney + 0.01,
      1e15,
    ]) {
      expect(toMinorUnits(value), String(value)).toBeUndefined()
    }
  })
})

describe('fromMinorUnits', () => {
  it('when given cents, then the amount prints with at most two decimals', () => {
    expect(fromMinorUnits(7)).toBe(0.07)
    expect(fromMinorUnits(1999)).toBe(19.99)
    expect(JSON.stringify({ price: fromMinorUnits(1999) })).toBe('{"price":19.99}')
    expect(fromMinorUnits(0)).toBe(0)
    for (let cents = 0; cents <= 10_000; cents += 7) {
      expect(String(fromMinorUnits(cents))).toMatch(/^\d+(\.\d{1,2})?$/)
      expect(toMinorUnits(fromMinorUnits(cents))).toBe(cents)
    }
  })

  it('when given something that is not a count of cents, then it throws', () => {
    for (const value of [1.5, -1, Number.NaN, maximumMinorUnits + 1]) {
      expect(() => fromMinorUnits(value), String(value)).toThrow(RangeError)
    }
  })
})

describe('requireMinorUnits', () => {
  it('when an amount is not money, then a 422 names the field and the value', () => {
    expect(requireMinorUnits(19.99, 'price')).toBe(1999)
    let error: unknown
    try {
      requireMinorUnits(19.999, 'items.0.price')
    } catch (caught) {
      error = caught
    }
    expect(error).toBeInstanceOf(AppError)
    expect(error).toMatchObject({
      statusCode: 422,
      code: 'VALIDATION_ERROR',
      details: [{ field: 'items.0.price', received: '19.999' }],
    })
  })
})

describe('Money', () => {
  it('when checked by the schema, then negatives and amounts above the maximum fail, decimals are left to the domain', () => {
    expect(Value.Check(Money, 19.99)).toBe(true)
    expect(Value.Check(Money, 0)).toBe(true)
    expect(Value.Check(Money, -0.01)).toBe(false)
    expect(Value.Check(Money, maximumMoney + 1)).toBe(false)
    expect(Value.Check(Money, '19.99')).toBe(false)
  })
})
