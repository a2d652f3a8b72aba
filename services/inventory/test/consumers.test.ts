// Inventory's consumers on the real broker: a payment.processed event published on a topic of this file's own
// reaches the reserving consumer, and the inventory.reserved event lands in the outbox; delivered again, it changes
// nothing.
import { randomUUID } from 'node:crypto'
import { transaction } from '@meridian/db'
import {
  consume,
  createEvent,
  createEventProducer,
  type EventConsumer,
  type EventProducer,
} from '@meridian/events'
import { eventually, freshEventTopics, type TestEventTopics, testKafka, uniqueName } from '@meridian/testkit'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { inventoryConsumers } from '../src/events/consumers.ts'
import { buildInventoryTestApp, type InventoryTestApp } from './support/app.ts'
import { createTestProduct, outboxOf, stockOf } from './support/products.ts'

let inventory: InventoryTestApp
let topics: TestEventTopics
let producer: EventProducer
let running: EventConsumer | undefined

beforeAll(async () => {
  inventory = await buildInventoryTestApp()
  topics = await freshEventTopics('payment.processed')
  producer = await createEventProducer(testKafka())
})

afterAll(async () => {
  await running?.stop()
  await producer?.disconnect()
  await topics?.delete()
  await inventory?.close()
})

describe('the payment.processed consumer', () => {
  it('when a payment.processed event is published, then the order is reserved and inventory.reserved is in the outbox; a redelivery changes nothing', async () => {
    const [paymentConsumer] = inventoryConsumers(inventory.reservations, {
      group: uniqueName('inventory'),
      topics: { 'payment.processed': topics.topic },
    }).filter((each) => each.type === 'payment.processed')
    if (!paymentConsumer) throw new Error('inventory has no payment.processed consumer')
    running = await consume({
      ...paymentConsumer,
      kafka: testKafka(),
      sql: inventory.sql,
      logger: inventory.app.log,
      retryDelaysMs: [200, 200, 200],
    })

    const product = await createTestProduct(inventory, { price: 19.99, stock: 5 })
    const orderId = randomUUID()
    const paid = createEvent(
      'payment.processed',
      {
        orderId,
        customerId: randomUUID(),
        paymentId: randomUUID(),
        total: 39.98,
        items: [{ productId: product.id, quantity: 2, price: 19.99 }],
      },
      { source: 'payment' },
    )
    const message = {
      topic: topics.topic,
      key: orderId,
      value: JSON.stringify(paid),
      headers: { 'message-id': paid.id },
    }
    await producer.publish([message])

    await eventually('inventory.reserved is in the outbox', async () => {
      const rows = await outboxOf(inventory, orderId)
      return rows.some((row) => row.eventType === 'inventory.reserved')
    })
    expect(await stockOf(inventory, product.id)).toEqual({ available: 3, reserved: 2 })
    const [reserved] = await outboxOf(inventory, orderId)
    expect(reserved?.payload.data).toEqual({
      orderId,
      reservationId: expect.any(String),
      items: [{ productId: product.id, quantity: 2 }],
    })

    // the same event again (a redelivery), then a marker event behind it on the same key (same partition)
    const marker = randomUUID()
    await producer.publish([
      message,
      {
        ...message,
        value: JSON.stringify(
          createEvent(
            'payment.processed',
            {
              ...paid.data,
              orderId: marker,
              items: [{ productId: product.id, quantity: 1, price: 19.99 }],
            },
            { source: 'payment' },
          ),
        ),
      },
    ])
    await eventually(
      'the marker order is reserved',
      async () => (await outboxOf(inventory, marker)).length > 0,
    )
    expect(await stockOf(inventory, product.id)).toEqual({ available: 2, reserved: 3 })
    expect((await outboxOf(inventory, orderId)).map((row) => row.eventType)).toEqual(['inventory.reserved'])
  })
})

describe('the consumers main.ts starts', () => {
  it('when listed, then one per event type inventory reacts to, all in the inventory group, each calling its use case', async () => {
    const consumers = inventoryConsumers(inventory.reservations)
    expect(consumers.map(({ type, group, topic }) => ({ type, group, topic }))).toEqual([
      { type: 'payment.processed', group: 'inventory', topic: undefined },
      { type: 'order.cancelled', group: 'inventory', topic: undefined },
      { type: 'order.failed', group: 'inventory', topic: undefined },
      { type: 'shipment.created', group: 'inventory', topic: undefined },
    ])
    expect(inventory.consumers.map(({ type }) => type)).toEqual(consumers.map(({ type }) => type))

    // each handler, as the runner calls it: (event, tx, context)
    const product = await createTestProduct(inventory, { stock: 10 })
    const context = { topic: 't', partition: 0, offset: '0', attempt: 1 }
    const handle = async (type: string, data: Record<string, unknown>) => {
      const each = consumers.find((candidate) => candidate.type === type)
      if (!each) throw new Error(`no consumer of ${type}`)
      const event = createEvent(each.type, data as never, { source: 'test' })
      await transaction(inventory.sql, (tx) =>
        (each.handler as (...args: unknown[]) => Promise<void>)(event, tx, context),
      )
    }
    const paid = (orderId: string) => ({
      orderId,
      customerId: randomUUID(),
      paymentId: randomUUID(),
      total: 9.99,
      items: [{ productId: product.id, quantity: 1, price: 9.99 }],
    })
    const [cancelled, failed, shipped] = [randomUUID(), randomUUID(), randomUUID()]
    for (const orderId of [cancelled, failed, shipped]) await handle('payment.processed', paid(orderId))
    expect(await stockOf(inventory, product.id)).toEqual({ available: 7, reserved: 3 })

    await handle('order.cancelled', { orderId: cancelled, reason: 'customer cancelled' })
    await handle('order.failed', { orderId: failed, reason: 'shipping refused', failedStep: 'shipping' })
    await handle('shipment.created', { orderId: shipped, shipmentId: randomUUID() })
    expect(await stockOf(inventory, product.id)).toEqual({ available: 9, reserved: 0 })
    expect((await outboxOf(inventory, cancelled)).map((row) => row.eventType)).toEqual([
      'inventory.reserved',
      'inventory.released',
    ])
    expect((await outboxOf(inventory, failed)).at(-1)?.payload.data).toMatchObject({
      orderId: failed,
      reason: 'shipping refused',
    })
    expect((await outboxOf(inventory, shipped)).map((row) => row.eventType)).toEqual(['inventory.reserved'])
  })
})
