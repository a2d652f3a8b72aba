// Inventory's consumers on the real broker, run by the app's own backbone in a group of this file's own: a
// payment.processed event published on a topic of this file's own reaches the reserving consumer, and the
// inventory.reserved event lands in the outbox; delivered again, it changes nothing. The saga's commands
// (inventory.reservation_requested, inventory.release_requested) and a return's inventory.restock_requested on topics
// of their own (a malformed restock dead-lettered, changing nothing), then each handler as the runner calls it: every
// command is answered.
import { randomUUID } from 'node:crypto'
import { transaction } from '@meridian/db'
import { createEvent, createEventProducer, type EventProducer } from '@meridian/events'
import { eventually, freshEventTopics, type TestEventTopics, testKafka, uniqueName } from '@meridian/testkit'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { inventoryConsumers } from '../src/events/consumers.ts'
import { buildInventoryTestApp, type InventoryTestApp } from './support/app.ts'
import { createTestProduct, outboxOf, stockOf } from './support/products.ts'

let inventory: InventoryTestApp
let topics: TestEventTopics
let requestedTopics: TestEventTopics
let releaseTopics: TestEventTopics
let restockTopics: TestEventTopics
let restockV2Topics: TestEventTopics
let producer: EventProducer

beforeAll(async () => {
  // the topics exist before the app's consumers subscribe to them
  ;[topics, requestedTopics, releaseTopics, restockTopics, restockV2Topics] = await Promise.all([
    freshEventTopics('payment.processed'),
    freshEventTopics('inventory.reservation_requested'),
    freshEventTopics('inventory.release_requested'),
    freshEventTopics('inventory.restock_requested'),
    freshEventTopics('inventory.restock_requested.v2'),
  ])
  // one group for the four, as the service runs them (one Kafka consumer in that group reads the four topics);
  // shipment.created is left out (the handler tests below call it); no relay (the outbox is what the tests read)
  inventory = await buildInventoryTestApp(
    {},
    {
      events: {
        kafka: testKafka(),
        relay: false,
        consumers: {
          group: uniqueName('inventory'),
          topics: {
            'payment.processed': topics.topic,
            'inventory.reservation_requested': requestedTopics.topic,
            'inventory.release_requested': releaseTopics.topic,
            'inventory.restock_requested': restockTopics.topic,
            'inventory.restock_requested.v2': restockV2Topics.topic,
          },
          types: [
            'payment.processed',
            'inventory.reservation_requested',
            'inventory.release_requested',
            'inventory.restock_requested',
            'inventory.restock_requested.v2',
          ],
          retryDelaysMs: [200, 200, 200],
        },
      },
    },
  )
  producer = await createEventProducer(testKafka())
})

afterAll(async () => {
  await producer?.disconnect()
  // the app first: its consumers leave their groups before their topics go
  await inventory?.close()
  await Promise.all([topics, requestedTopics, releaseTopics, restockTopics].map((each) => each?.delete()))
})

describe('the payment.processed consumer', () => {
  it('when a payment.processed event is published, then the order is reserved and inventory.reserved is in the outbox; a redelivery changes nothing', async () => {
    const product = await createTestProduct(inventory, { price: 19.99, stock: 5 })
    const orderId = randomUUID()
    const customerId = randomUUID()
    const paid = createEvent(
      'payment.processed',
      {
        orderId,
        customerId,
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
      customerId,
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

describe("the saga's commands on the broker", () => {
  it('when inventory.reservation_requested and then inventory.release_requested are published, then the order is reserved, answered, released and answered', async () => {
    const consumers = inventory.consumers.filter((each) => /_requested(\.v2)?$/.test(each.type))
    expect(consumers.map(({ type, topic }) => ({ type, topic }))).toEqual([
      { type: 'inventory.reservation_requested', topic: requestedTopics.topic },
      { type: 'inventory.release_requested', topic: releaseTopics.topic },
      { type: 'inventory.restock_requested', topic: restockTopics.topic },
      { type: 'inventory.restock_requested.v2', topic: restockV2Topics.topic },
    ])
    const product = await createTestProduct(inventory, { stock: 5 })
    const orderId = randomUUID()
    const publish = async (
      topic: string,
      type: 'inventory.reservation_requested' | 'inventory.release_requested',
      data: object,
    ) => {
      const event = createEvent(type, data as never, { source: 'order' })
      await producer.publish([
        { topic, key: orderId, value: JSON.stringify(event), headers: { 'message-id': event.id } },
      ])
    }

    await publish(requestedTopics.topic, 'inventory.reservation_requested', {
      orderId,
      customerId: randomUUID(),
      paymentId: randomUUID(),
      total: 19.98,
      items: [{ productId: product.id, quantity: 2, price: 9.99 }],
      attempt: 2,
    })
    await eventually('inventory.reserved is in the outbox', async () =>
      (await outboxOf(inventory, orderId)).some((row) => row.eventType === 'inventory.reserved'),
    )
    expect(await stockOf(inventory, product.id)).toEqual({ available: 3, reserved: 2 })
    await publish(releaseTopics.topic, 'inventory.release_requested', {
      orderId,
      reason: 'shipping refused',
      attempt: 1,
    })
    await eventually('inventory.released is in the outbox', async () =>
      (await outboxOf(inventory, orderId)).some((row) => row.eventType === 'inventory.released'),
    )
    const [reserved, released] = await outboxOf(inventory, orderId)
    expect(released?.payload.data).toEqual({
      orderId,
      reservationId: reserved?.payload.data.reservationId,
      reason: 'shipping refused',
    })
    expect(await stockOf(inventory, product.id)).toEqual({ available: 5, reserved: 0 })
  })
})

interface DeadLetter {
  messageId: string | undefined
  retryCount: string | undefined
  errorMessage: string | undefined
}

/** Reads a topic from its beginning in a group of its own, collecting each message's failure headers. */
async function readTopic(topic: string): Promise<{ messages: DeadLetter[]; stop: () => Promise<void> }> {
  const consumer = testKafka().consumer({ groupId: uniqueName('dead-letters') })
  const messages: DeadLetter[] = []
  await consumer.connect()
  await consumer.subscribe({ topic, fromBeginning: true })
  const header = (headers: Record<string, unknown> | undefined, name: string) => headers?.[name]?.toString()
  await consumer.run({
    eachMessage: async ({ message }) => {
      messages.push({
        messageId: header(message.headers, 'message-id'),
        retryCount: header(message.headers, 'retry-count'),
        errorMessage: header(message.headers, 'error-message'),
      })
    },
  })
  return { messages, stop: () => consumer.disconnect() }
}

describe("a return's restock on the broker", () => {
  const publishRestock = async (key: string, value: string, id: string, topic = restockTopics.topic) => {
    await producer.publish([{ topic, key, value, headers: { 'message-id': id } }])
  }
  const restockRequested = (data: Record<string, unknown>) =>
    createEvent('inventory.restock_requested', data as never, { source: 'order' })

  it('when inventory.restock_requested.v2 is published, then the lines go back in stock and inventory.restocked.v2 answers; asked again (attempt 2), answered again, the stock unchanged', async () => {
    const product = await createTestProduct(inventory, { stock: 5 })
    const orderId = randomUUID()
    const restockId = randomUUID()
    const items = [{ productId: product.id, quantity: 2 }]
    const asked = (attempt: number) =>
      createEvent(
        'inventory.restock_requested.v2',
        { restockId, orderId, items, reason: `return ${restockId}`, attempt },
        { source: 'order' },
      )
    const first = asked(1)
    await publishRestock(orderId, JSON.stringify(first), first.id, restockV2Topics.topic)
    await eventually('inventory.restocked.v2 is in the outbox', async () =>
      (await outboxOf(inventory, orderId)).some((row) => row.eventType === 'inventory.restocked.v2'),
    )
    expect(await stockOf(inventory, product.id)).toEqual({ available: 7, reserved: 0 })

    const again = asked(2)
    await publishRestock(orderId, JSON.stringify(again), again.id, restockV2Topics.topic)
    await eventually(
      'inventory.restocked.v2 is answered again',
      async () => (await outboxOf(inventory, orderId)).length === 2,
    )
    expect(await stockOf(inventory, product.id)).toEqual({ available: 7, reserved: 0 })
    for (const row of await outboxOf(inventory, orderId)) {
      expect(row).toMatchObject({
        eventType: 'inventory.restocked.v2',
        payload: { source: 'inventory', data: { restockId, orderId, items } },
      })
    }
  })

  it('when a malformed inventory.restock_requested comes (a quantity of 0, not an event), then it is dead-lettered as invalid and changes nothing; the restock behind it is made', async () => {
    const product = await createTestProduct(inventory, { stock: 5 })
    const orderId = randomUUID()
    // made valid, then spoilt: createEvent refuses a quantity of 0
    const spoilt = restockRequested({
      returnId: randomUUID(),
      orderId,
      items: [{ productId: product.id, quantity: 1 }],
      attempt: 1,
    })
    const bad = { ...spoilt, data: { ...spoilt.data, items: [{ productId: product.id, quantity: 0 }] } }
    const good = restockRequested({
      returnId: randomUUID(),
      orderId,
      items: [{ productId: product.id, quantity: 1 }],
      attempt: 1,
    })
    const deadLetters = await readTopic(restockTopics.deadLetterTopic)
    try {
      await publishRestock(orderId, JSON.stringify(bad), bad.id)
      await publishRestock(orderId, '{"not": "an event"', randomUUID())
      await publishRestock(orderId, JSON.stringify(good), good.id)
      await eventually(
        'the good restock is answered',
        async () => (await outboxOf(inventory, orderId)).length > 0,
      )
      await eventually('both bad messages are dead-lettered', async () => deadLetters.messages.length === 2)
      // dead-lettered at once (no retry: an invalid event never succeeds), as they came
      expect(deadLetters.messages).toEqual([
        expect.objectContaining({ messageId: bad.id, retryCount: '0' }),
        expect.objectContaining({ retryCount: '0' }),
      ])
      expect(deadLetters.messages[0]?.errorMessage).toMatch(/quantity/)
    } finally {
      await deadLetters.stop()
    }
    expect(await stockOf(inventory, product.id)).toEqual({ available: 6, reserved: 0 })
    expect((await outboxOf(inventory, orderId)).map((row) => row.payload.data.returnId)).toEqual([
      good.data.returnId,
    ])
  })
})

describe('the consumers main.ts starts', () => {
  const context = { topic: 't', partition: 0, offset: '0', attempt: 1 }
  const handle = async (type: string, data: Record<string, unknown>) => {
    const each = inventory.consumers.find((candidate) => candidate.type === type)
    if (!each) throw new Error(`no consumer of ${type}`)
    const event = createEvent(each.type, data as never, { source: 'test' })
    await transaction(inventory.sql, (tx) =>
      (each.handler as (...args: unknown[]) => Promise<void>)(event, tx, context),
    )
  }
  const paid = (orderId: string, productId: string, quantity = 1) => ({
    orderId,
    customerId: randomUUID(),
    paymentId: randomUUID(),
    total: 9.99 * quantity,
    items: [{ productId, quantity, price: 9.99 }],
    shippingAddress: { street: '1 Main St', city: 'Springfield', zip: '12345' },
  })
  const requestRelease = (orderId: string, reason = 'payment refunded', attempt = 1) =>
    handle('inventory.release_requested', { orderId, reason, attempt })
  const dataOf = async (orderId: string) =>
    (await outboxOf(inventory, orderId)).map((row) => row.payload.data)

  it('when listed, then one per event type inventory reacts to, all in the inventory group (no order.cancelled nor order.failed)', () => {
    const consumers = inventoryConsumers(inventory)
    expect(consumers.map(({ type, group, topic }) => ({ type, group, topic }))).toEqual([
      { type: 'payment.processed', group: 'inventory', topic: undefined },
      { type: 'inventory.reservation_requested', group: 'inventory', topic: undefined },
      { type: 'inventory.release_requested', group: 'inventory', topic: undefined },
      { type: 'shipment.created', group: 'inventory', topic: undefined },
      { type: 'inventory.restock_requested', group: 'inventory', topic: undefined },
      { type: 'inventory.restock_requested.v2', group: 'inventory', topic: undefined },
    ])
    expect(inventory.consumers.map(({ type }) => type)).toEqual(consumers.map(({ type }) => type))
  })

  it('when a 1.0 inventory.restock_requested comes (an order release before 0.2), then it is restocked once under its return and answered with inventory.restocked 1.0, as that release waits for; the same return asked as v2 moves nothing', async () => {
    const product = await createTestProduct(inventory, { stock: 5 })
    const orderId = randomUUID()
    const returnId = randomUUID()
    const items = [{ productId: product.id, quantity: 2 }]
    await handle('inventory.restock_requested', { returnId, orderId, items, attempt: 1 })
    await handle('inventory.restock_requested.v2', { restockId: returnId, orderId, items, attempt: 2 })
    expect(await stockOf(inventory, product.id)).toEqual({ available: 7, reserved: 0 })
    expect((await outboxOf(inventory, orderId)).map((row) => [row.eventType, row.payload.data])).toEqual([
      ['inventory.restocked', { returnId, orderId, items }],
      ['inventory.restocked.v2', { restockId: returnId, orderId, items }],
    ])
    expect([
      ...(await inventory.sql`select reason from stock_movements where order_id = ${orderId}`),
    ]).toEqual([{ reason: `restocked: return ${returnId}` }])
  })

  it('when paid orders are reserved, one released on request and one shipped, then the stock adds up and each step is answered', async () => {
    const product = await createTestProduct(inventory, { stock: 10 })
    const [released, shipped] = [randomUUID(), randomUUID()]
    const orders = { released: paid(released, product.id), shipped: paid(shipped, product.id) }
    await handle('payment.processed', orders.released)
    await handle('payment.processed', orders.shipped)
    expect(await stockOf(inventory, product.id)).toEqual({ available: 8, reserved: 2 })
    const [reservedData] = await dataOf(released)
    expect(reservedData).toEqual({
      orderId: released,
      reservationId: expect.any(String),
      items: [{ productId: product.id, quantity: 1 }],
      customerId: orders.released.customerId,
      shippingAddress: orders.released.shippingAddress,
    })

    await requestRelease(released, 'shipping refused')
    await handle('shipment.created', { orderId: shipped, shipmentId: randomUUID() })
    expect(await stockOf(inventory, product.id)).toEqual({ available: 9, reserved: 0 })
    expect((await dataOf(released)).at(-1)).toEqual({
      orderId: released,
      reservationId: reservedData?.reservationId,
      reason: 'shipping refused',
    })
    expect((await outboxOf(inventory, shipped)).map((row) => row.eventType)).toEqual(['inventory.reserved'])
  })

  describe('inventory.reservation_requested', () => {
    it('when the order was never reserved (payment.processed lost), then it is reserved and inventory.reserved answers with the customer and address', async () => {
      const product = await createTestProduct(inventory, { stock: 5 })
      const orderId = randomUUID()
      const order = paid(orderId, product.id, 2)
      await handle('inventory.reservation_requested', { ...order, attempt: 2 })
      expect(await stockOf(inventory, product.id)).toEqual({ available: 3, reserved: 2 })
      expect(await outboxOf(inventory, orderId)).toEqual([
        expect.objectContaining({
          eventType: 'inventory.reserved',
          payload: expect.objectContaining({
            source: 'inventory',
            data: {
              orderId,
              reservationId: expect.any(String),
              items: [{ productId: product.id, quantity: 2 }],
              customerId: order.customerId,
              shippingAddress: order.shippingAddress,
            },
          }),
        }),
      ])
    })

    it('when the order was reserved already, then each request answers inventory.reserved with the same reservationId; reserved once', async () => {
      const product = await createTestProduct(inventory, { stock: 5 })
      const orderId = randomUUID()
      const order = paid(orderId, product.id, 2)
      await handle('payment.processed', order)
      await handle('inventory.reservation_requested', { ...order, attempt: 2 })
      await handle('inventory.reservation_requested', { ...order, attempt: 3 })
      const answers = await dataOf(orderId)
      expect(answers).toHaveLength(3)
      expect(answers[1]).toEqual(answers[0])
      expect(answers[2]).toEqual(answers[0])
      expect(await stockOf(inventory, product.id)).toEqual({ available: 3, reserved: 2 })
    })

    it("when the order's reservation was released, then inventory.failed 'the reservation was released'; stock unchanged", async () => {
      const product = await createTestProduct(inventory, { stock: 5 })
      const orderId = randomUUID()
      const order = paid(orderId, product.id, 2)
      await handle('payment.processed', order)
      await requestRelease(orderId)
      await handle('inventory.reservation_requested', { ...order, attempt: 2 })
      expect((await dataOf(orderId)).at(-1)).toEqual({ orderId, reason: 'the reservation was released' })
      expect(await stockOf(inventory, product.id)).toEqual({ available: 5, reserved: 0 })
    })
  })

  describe('inventory.release_requested', () => {
    it('when the order holds nothing, then inventory.released answers without reservationId; asked again, the same', async () => {
      const orderId = randomUUID()
      await requestRelease(orderId, 'payment failed')
      await requestRelease(orderId, 'payment failed', 2)
      expect(await outboxOf(inventory, orderId)).toEqual([
        expect.objectContaining({
          eventType: 'inventory.released',
          payload: expect.objectContaining({ data: { orderId, reason: 'payment failed' } }),
        }),
        expect.objectContaining({
          eventType: 'inventory.released',
          payload: expect.objectContaining({ data: { orderId, reason: 'payment failed' } }),
        }),
      ])
    })

    it("when the release was requested before payment.processed or inventory.reservation_requested, then nothing is reserved: inventory.failed 'the order was cancelled'", async () => {
      const product = await createTestProduct(inventory, { stock: 5 })
      const orderId = randomUUID()
      const order = paid(orderId, product.id, 2)
      await requestRelease(orderId, 'customer cancelled')
      await handle('payment.processed', order)
      await handle('inventory.reservation_requested', { ...order, attempt: 2 })
      expect(await dataOf(orderId)).toEqual([
        { orderId, reason: 'customer cancelled' },
        { orderId, reason: 'the order was cancelled' },
        { orderId, reason: 'the order was cancelled' },
      ])
      expect(await stockOf(inventory, product.id)).toEqual({ available: 5, reserved: 0 })
      const [counted] = await inventory.sql<{ count: number }[]>`
        select count(*)::int from reservations where order_id = ${orderId}`
      expect(counted?.count).toBe(0)
    })
  })
})
