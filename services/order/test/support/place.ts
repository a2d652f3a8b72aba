// Placing an order through the app as its customer: two of one product, a test card's token (the saga and statement
// tests start from it).
import { randomUUID } from 'node:crypto'
import { asUser } from '@meridian/testkit'
import { expect } from 'vitest'
import type { OrderTestApp } from './app.ts'

export const testAddress = { street: '1 Main Street', city: 'Springfield', zip: '12345' }

/** POST /api/v1/orders for two of `productId` at 19.99; the new order's id (the answer must be 201). */
export async function placeTestOrder(
  app: OrderTestApp,
  productId: string,
  customerId: string = randomUUID(),
): Promise<string> {
  const answer = await app.app.inject({
    method: 'POST',
    url: '/api/v1/orders',
    payload: {
      customerId,
      items: [{ productId, quantity: 2, price: 19.99 }],
      shippingAddress: testAddress,
      payment: { token: 'tok_test_visa' },
    },
    headers: asUser(customerId),
  })
  expect(answer.statusCode).toBe(201)
  return answer.json().orderId as string
}
