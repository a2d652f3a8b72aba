// Shipping's consumer on the real broker, run by the app's own backbone in a group of this file's own: the saga's
// shipment.requested published on a topic of this file's own creates the order's one shipment with its shipment.created in the outbox, and a redelivery changes nothing; a
// further request for an order that has its shipment announces it again (same shipment id). inventory.reserved ships
// nothing: the shipment step is the saga's command. Then the handler as the runner calls it.
import { randomUUID } from 'node:crypto'
import { transaction } from '@meridian/db'
import { createEvent, createEventProducer, type EventProducer } from '@meridian/events'
import { eventually, freshEventTopics, type TestEventTopics, testKafka, uniqueName } from '@meridian/testkit'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  type ShippingConsumersOptions,
  type ShippingEventType,
  shippingConsumers,
} from '../src/events/consumers.ts'
import { buildShippingTestApp, type ShippingTestApp } from './support/app.ts'
import { outboxOf, reservedOrder, shipmentsOfOrder, testAddress } from './support/shipments.ts'

let shipping: ShippingTestApp
let requestedTopics: TestEventTopics
let producer: EventProducer
/** the group and topic of this file's own that the app's consumer runs on */
let consumerOptions: ShippingConsumersOptions

beforeAll(async () => {
  // the topic exists before the app's consumer subscribes to it
  requestedTopics = await freshEventTopics('shipment.requested')
  consumerOptions = {
    group: uniqueName('shipping'),
    topics: { 'shipment.requested': requestedTopics.topic },
    types: ['shipment.requested'],
    retryDelaysMs: [200, 200, 200],
  }
  // no relay: the outbox is what the tests read
  shipping = await buildShippingTestApp(
    {},
    { events: { kafka: testKafka(), relay: false, consumers: consumerOptions } },
  )
  producer = await createEventProducer(testKafka())
})

afterAll(async () => {
  await producer?.disconnect()
  // the app first: its consumer leaves its group before its topics go
  await shipping?.close()
  await requestedTopics?.delete()
})

const trackingNumber = expect.stringMatching(/^MP[0-9A-Z]{12}$/)

/** The shipment.created records of an order, oldest first. */
async function announcementsOf(orderId: string) {
  return (await outboxOf(shipping, orderId)).filter((row) => row.eventType === 'shipment.created')
}

describe('the shipment.requested consumer', () => {
  it('when shipment.requested is published, then one shipment and one shipment.created; a redelivery changes nothing; a further request announces the same shipment again', async () => {
    const order = reservedOrder()
    const reservationId = randomUUID()
    const requested = createEvent(
      'shipment.requested',
      { ...order, reservationId, items: [...order.items], attempt: 1 },
      { source: 'order' },
    )
    const message = {
      topic: requestedTopics.topic,
      key: order.orderId,
      value: JSON.stringify(requested),
      headers: { 'message-id': requested.id },
    }
    await producer.publish([message])

    await eventually(
      'shipment.created is in the outbox',
      async () => (await announcementsOf(order.orderId)).length > 0,
    )
    const [shipment] = await shipmentsOfOrder(shipping, order.orderId)
    expect(shipment?.status).toBe('created')
    const [created] = await announcementsOf(order.orderId)
    expect(created?.payload).toMatchObject({ type: 'shipment.created', source: 'shipping' })
    expect(created?.payload.data).toEqual({
      orderId: order.orderId,
      shipmentId: shipment?.id,
      carrier: 'meridian-post',
      trackingNumber,
    })
    const [stored] = await shipping.sql`
      select customer_id, shipping_address, items from shipments where order_id = ${order.orderId}`
    expect(stored).toEqual({ customerId: order.customerId, shippingAddress: testAddress, items: order.items })

    // the same event again (a redelivery), then a marker order behind it on the same key (same partition)
    const marker = reservedOrder()
    const markerEvent = createEvent(
      'shipment.requested',
      { ...marker, reservationId: randomUUID(), items: [...marker.items], attempt: 1 },
      { source: 'order' },
    )
    await producer.publish([
      message,
      { ...message, value: JSON.stringify(markerEvent), headers: { 'message-id': markerEvent.id } },
    ])
    await eventually(
      'the marker order has its shipment',
      async () => (await announcementsOf(marker.orderId)).length > 0,
    )
    expect(await shipmentsOfOrder(shipping, order.orderId)).toHaveLength(1)
    expect((await outboxOf(shipping, order.orderId)).map((row) => row.eventType)).toEqual([
      'shipment.created',
    ])

    // the saga did not hear the answer and asks again: the same shipment, announced once more
    const again = createEvent(
      'shipment.requested',
      { ...order, reservationId, items: [...order.items], attempt: 2 },
      { source: 'order' },
    )
    await producer.publish([
      { ...message, value: JSON.stringify(again), headers: { 'message-id': again.id } },
    ])
    await eventually(
      'shipment.created is announced again',
      async () => (await announcementsOf(order.orderId)).length === 2,
    )
    expect(await shipmentsOfOrder(shipping, order.orderId)).toHaveLength(1)
    const [first, second] = await announcementsOf(order.orderId)
    expect(second?.payload.data).toEqual(first?.payload.data)
    expect(second?.payload.id).not.toBe(first?.payload.id)
  })
})

describe('the consumers main.ts starts', () => {
  const context = { topic: 't', partition: 0, offset: '0', attempt: 1 }
  const handle = async (type: ShippingEventType, data: Record<string, unknown>) => {
    const each = shippingConsumers(shipping.shipments).find((candidate) => candidate.type === type)
    if (!each) throw new Error(`no consumer of ${type}`)
    const event = createEvent(each.type, data as never, { source: 'test' })
    await transaction(shipping.sql, (tx) =>
      (each.handler as (...args: unknown[]) => Promise<void>)(event, tx, context),
    )
  }
  const reservedData = (overrides: Record<string, unknown> = {}) => ({
    ...reservedOrder(),
    reservationId: randomUUID(),
    attempt: 1,
    ...overrides,
  })

  it('when listed, then shipment.requested alone (inventory.reserved ships nothing: the saga asks), in the shipping group; buildApp hands the same to main.ts (here with the group and topic it was asked for)', () => {
    const listed = ({ type, group, topic }: (typeof shipping.consumers)[number]) => ({ type, group, topic })
    expect(shippingConsumers(shipping.shipments).map(listed)).toEqual([
      { type: 'shipment.requested', group: 'shipping', topic: undefined },
    ])
    expect(shipping.consumers.map(listed)).toEqual(
      shippingConsumers(shipping.shipments, consumerOptions).map(listed),
    )
  })

  it('when the saga asks twice, then one shipment, announced by both requests with the same id', async () => {
    const data = reservedData()
    await handle('shipment.requested', { ...data, attempt: 1 })
    const [shipment] = await shipmentsOfOrder(shipping, data.orderId)
    expect(shipment).toEqual({ id: expect.any(String), status: 'created' })
    await handle('shipment.requested', { ...data, attempt: 2 })
    expect(await shipmentsOfOrder(shipping, data.orderId)).toEqual([shipment])
    expect((await announcementsOf(data.orderId)).map((row) => row.payload.data.shipmentId)).toEqual([
      shipment?.id,
      shipment?.id,
    ])
  })

  it('when the event carries no customer or address, then the shipment is still created, without them', async () => {
    const { customerId: _customerId, shippingAddress: _address, ...data } = reservedData()
    await handle('shipment.requested', data)
    const [stored] = await shipping.sql`
      select customer_id, shipping_address from shipments where order_id = ${data.orderId}`
    expect(stored).toEqual({ customerId: null, shippingAddress: null })
    expect(await announcementsOf(data.orderId)).toHaveLength(1)
  })

  it('when the order id is not a uuid, then the handler fails (the runner retries, then dead-letters) and nothing is written', async () => {
    const data = reservedData({ orderId: 'order-42' })
    await expect(handle('shipment.requested', data)).rejects.toThrow(/not a uuid/)
    await expect(handle('shipment.requested', reservedData({ customerId: 'someone' }))).rejects.toThrow(
      /not a uuid/,
    )
    expect(await outboxOf(shipping, 'order-42')).toEqual([])
  })

  it('when a shipment was delivered and the saga asks again, then shipment.created is appended once more and the shipment stays delivered', async () => {
    const data = reservedData()
    await handle('shipment.requested', data)
    const [shipment] = await shipmentsOfOrder(shipping, data.orderId)
    await shipping.shipments.deliverShipment(shipment?.id ?? '', { actor: 'user:test-admin' })
    await handle('shipment.requested', { ...data, attempt: 3 })
    expect(await shipmentsOfOrder(shipping, data.orderId)).toEqual([
      { id: shipment?.id, status: 'delivered' },
    ])
    expect((await outboxOf(shipping, data.orderId)).map((row) => row.eventType)).toEqual([
      'shipment.created',
      'shipment.delivered',
      'shipment.created',
    ])
  })
})
