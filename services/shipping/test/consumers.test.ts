// Shipping's consumers on the real broker: an inventory.reserved event published on a topic of this file's own
// creates the order's one shipment with its shipment.created in the outbox, and a redelivery changes nothing; the
// saga's shipment.requested for an order that has its shipment announces it again (same shipment id). Then each
// handler as the runner calls it.
import { randomUUID } from 'node:crypto'
import type { EventType } from '@meridian/contracts'
import { transaction } from '@meridian/db'
import {
  type AnyServiceConsumer,
  consume,
  createEvent,
  createEventProducer,
  type EventConsumer,
  type EventProducer,
} from '@meridian/events'
import { eventually, freshEventTopics, type TestEventTopics, testKafka, uniqueName } from '@meridian/testkit'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type ShippingEventType, shippingConsumers } from '../src/events/consumers.ts'
import { buildShippingTestApp, type ShippingTestApp } from './support/app.ts'
import { outboxOf, reservedOrder, shipmentsOfOrder, testAddress } from './support/shipments.ts'

let shipping: ShippingTestApp
let reservedTopics: TestEventTopics
let requestedTopics: TestEventTopics
let producer: EventProducer
const running: EventConsumer[] = []

beforeAll(async () => {
  shipping = await buildShippingTestApp()
  ;[reservedTopics, requestedTopics] = await Promise.all([
    freshEventTopics('inventory.reserved'),
    freshEventTopics('shipment.requested'),
  ])
  producer = await createEventProducer(testKafka())
})

afterAll(async () => {
  for (const each of running) await each.stop()
  await producer?.disconnect()
  await reservedTopics?.delete()
  await requestedTopics?.delete()
  await shipping?.close()
})

const trackingNumber = expect.stringMatching(/^MP[0-9A-Z]{12}$/)

/** The shipment.created records of an order, oldest first. */
async function announcementsOf(orderId: string) {
  return (await outboxOf(shipping, orderId)).filter((row) => row.eventType === 'shipment.created')
}

describe('the inventory.reserved and shipment.requested consumers', () => {
  it('when inventory.reserved is published, then one shipment and one shipment.created; a redelivery changes nothing; shipment.requested announces the same shipment again', async () => {
    const group = uniqueName('shipping')
    const topics = { 'inventory.reserved': reservedTopics.topic, 'shipment.requested': requestedTopics.topic }
    // generic in the consumer's type, as eventsPlugin starts them, so that each handler keeps its own type
    const start = <Type extends EventType>(each: AnyServiceConsumer<Type>) =>
      consume<Type>({
        ...each,
        // one group for both, as the service runs them (each topic gets a Kafka group of its own: kafkaGroupIdOf)
        group,
        kafka: testKafka(),
        sql: shipping.sql,
        logger: shipping.app.log,
        retryDelaysMs: [200, 200, 200],
      })
    for (const each of shippingConsumers(shipping.shipments, { group, topics }))
      running.push(await start(each))

    const order = reservedOrder()
    const reserved = createEvent(
      'inventory.reserved',
      { ...order, reservationId: randomUUID(), items: [...order.items] },
      { source: 'inventory' },
    )
    const message = {
      topic: reservedTopics.topic,
      key: order.orderId,
      value: JSON.stringify(reserved),
      headers: { 'message-id': reserved.id },
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
      'inventory.reserved',
      { ...marker, reservationId: randomUUID(), items: [...marker.items] },
      { source: 'inventory' },
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
    const requested = createEvent(
      'shipment.requested',
      { ...order, reservationId: reserved.data.reservationId, items: [...order.items], attempt: 2 },
      { source: 'order' },
    )
    await producer.publish([
      {
        topic: requestedTopics.topic,
        key: order.orderId,
        value: JSON.stringify(requested),
        headers: { 'message-id': requested.id },
      },
    ])
    await eventually(
      'shipment.created is announced again',
      async () => (await announcementsOf(order.orderId)).length === 2,
    )
    expect(await shipmentsOfOrder(shipping, order.orderId)).toHaveLength(1)
    const [first, again] = await announcementsOf(order.orderId)
    expect(again?.payload.data).toEqual(first?.payload.data)
    expect(again?.payload.id).not.toBe(first?.payload.id)
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
    ...overrides,
  })

  it('when listed, then one per event type shipping reacts to, all in the shipping group; buildApp hands the same to main.ts', () => {
    const consumers = shippingConsumers(shipping.shipments)
    expect(consumers.map(({ type, group, topic }) => ({ type, group, topic }))).toEqual([
      { type: 'inventory.reserved', group: 'shipping', topic: undefined },
      { type: 'shipment.requested', group: 'shipping', topic: undefined },
    ])
    expect(shipping.consumers.map(({ type, group }) => ({ type, group }))).toEqual(
      consumers.map(({ type, group }) => ({ type, group })),
    )
  })

  it('when shipment.requested comes first, then it creates the shipment; a later inventory.reserved (another event) leaves it and appends nothing', async () => {
    const data = reservedData()
    await handle('shipment.requested', { ...data, attempt: 1 })
    const [shipment] = await shipmentsOfOrder(shipping, data.orderId)
    expect(shipment).toEqual({ id: expect.any(String), status: 'created' })
    await handle('inventory.reserved', data)
    expect(await shipmentsOfOrder(shipping, data.orderId)).toEqual([shipment])
    expect((await announcementsOf(data.orderId)).map((row) => row.payload.data.shipmentId)).toEqual([
      shipment?.id,
    ])
  })

  it('when the event carries no customer or address, then the shipment is still created, without them', async () => {
    const { customerId: _customerId, shippingAddress: _address, ...data } = reservedData()
    await handle('inventory.reserved', data)
    const [stored] = await shipping.sql`
      select customer_id, shipping_address from shipments where order_id = ${data.orderId}`
    expect(stored).toEqual({ customerId: null, shippingAddress: null })
    expect(await announcementsOf(data.orderId)).toHaveLength(1)
  })

  it('when the order id is not a uuid, then the handler fails (the runner retries, then dead-letters) and nothing is written', async () => {
    const data = reservedData({ orderId: 'order-42' })
    await expect(handle('inventory.reserved', data)).rejects.toThrow(/not a uuid/)
    await expect(handle('inventory.reserved', reservedData({ customerId: 'someone' }))).rejects.toThrow(
      /not a uuid/,
    )
    expect(await outboxOf(shipping, 'order-42')).toEqual([])
  })

  it('when a shipment was delivered and the saga asks again, then shipment.created is appended once more and the shipment stays delivered', async () => {
    const data = reservedData()
    await handle('inventory.reserved', data)
    const [shipment] = await shipmentsOfOrder(shipping, data.orderId)
    await shipping.shipments.deliverShipment(shipment?.id ?? '')
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
