// The pure rules of reserving: lines merged per product in id order, and which lines cannot be reserved.
import { describe, expect, it } from 'vitest'
import { findShortage, mergeLines } from '../src/domain/stock-rules.ts'

const a = '00000000-0000-4000-8000-00000000000a'
const b = '00000000-0000-4000-8000-00000000000b'

describe('mergeLines', () => {
  it('when a product appears twice (in any case), then one line with the sum, in product id order', () => {
    expect(
      mergeLines([
        { productId: b, quantity: 1 },
        { productId: a, quantity: 2 },
        { productId: b.toUpperCase(), quantity: 3 },
      ]),
    ).toEqual([
      { productId: a, quantity: 2 },
      { productId: b, quantity: 4 },
    ])
  })
})

describe('findShortage', () => {
  const stock = new Map([
    [a, { id: a, active: true, available: 3 }],
    [b, { id: b, active: false, available: 10 }],
  ])

  it('when every line fits an active product, then no shortage', () => {
    expect(findShortage([{ productId: a, quantity: 3 }], stock)).toBeUndefined()
  })

  it('when a line asks more than available or an inactive product, then insufficient stock naming those lines', () => {
    expect(
      findShortage(
        [
          { productId: a, quantity: 4 },
          { productId: b, quantity: 1 },
        ],
        stock,
      ),
    ).toEqual({
      reason: 'insufficient stock',
      items: [
        { productId: a, quantity: 4 },
        { productId: b, quantity: 1 },
      ],
    })
  })

  it('when a product is unknown, then unknown product is the reason, every failing line listed', () => {
    expect(
      findShortage(
        [
          { productId: a, quantity: 4 },
          { productId: 'nope', quantity: 1 },
        ],
        stock,
      ),
    ).toEqual({
      reason: 'unknown product',
      items: [
        { productId: 'nope', quantity: 1 },
        { productId: a, quantity: 4 },
      ],
    })
  })
})
