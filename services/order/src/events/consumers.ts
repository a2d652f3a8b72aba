// Order's consumers: the saga's process manager follows every step's answer. Each handler turns its event into a
// fact of the state machine and applies it in the consumer's transaction (the one that records the event in the
// inbox), so the saga, the order's status, the step log and the commands commit together with the event's record.
import type { EventType } from '@meridian/contracts'
import {
  type AnyServiceConsumer,
  type CatalogueEvent,
  type ConsumersOptions,
  consumersOf,
  type EventHandler,
} from '@meridian/events'
import type { SagaFact } from '../domain/saga.ts'
import type { SagaProcess } from '../domain/saga-process.ts'

/** The consumer group of the order service: its inbox key and its retries' `consumer-group` header. */
export const consumerGroup = 'order'

/** The saga's answers: payment's, inventory's and shipping's events about an order. */
export const sagaEventTypes = [
  'payment.processed',
  'payment.failed',
  'payment.refunded',
  'inventory.reserved',
  'inventory.failed',
  'inventory.released',
  'shipment.created',
  'shipment.delivered',
] as const satisfies readonly EventType[]
export type OrderEventType = (typeof sagaEventTypes)[number]

/** What each event tells the state machine. */
const factOf: { [Type in OrderEventType]: (data: CatalogueEvent<Type>['data']) => SagaFact } = {
  'payment.processed': (data) => ({ kind: 'payment.processed', paymentId: data.paymentId }),
  'payment.failed': (data) => ({ kind: 'payment.failed', reason: data.reason }),
  'payment.refunded': (data) => ({
    kind: 'payment.refunded',
    amount: data.amount,
    ...(data.paymentId ? { paymentId: data.paymentId } : {}),
  }),
  'inventory.reserved': (data) => ({ kind: 'inventory.reserved', reservationId: data.reservationId }),
  'inventory.failed': (data) => ({ kind: 'inventory.failed', reason: data.reason }),
  'inventory.released': (data) => ({
    kind: 'inventory.released',
    ...(data.reservationId ? { reservationId: data.reservationId } : {}),
  }),
  'shipment.created': (data) => ({ kind: 'shipment.created', shipmentId: data.shipmentId }),
  'shipment.delivered': (data) => ({ kind: 'shipment.delivered', shipmentId: data.shipmentId }),
}

/** An order id that is not a uuid names no order of ours: nothing to apply. */
const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

/** The handler of one event type: the event's fact applied to its order's saga. */
export const onSagaEvent =
  <Type extends OrderEventType>(saga: Pick<SagaProcess, 'onEvent'>, type: Type): EventHandler<Type> =>
  async (event, tx) => {
    const { orderId } = event.data
    if (!uuid.test(orderId)) return
    await saga.onEvent(orderId, factOf[type](event.data), tx, { eventType: event.type, eventId: event.id })
  }

export type OrderConsumersOptions = ConsumersOptions<OrderEventType>

/** What the app's event backbone runs: a consumer of each answer the saga follows. */
export function orderConsumers(
  saga: Pick<SagaProcess, 'onEvent'>,
  options?: OrderConsumersOptions,
): AnyServiceConsumer<OrderEventType>[] {
  return consumersOf(
    consumerGroup,
    {
      'payment.processed': onSagaEvent(saga, 'payment.processed'),
      'payment.failed': onSagaEvent(saga, 'payment.failed'),
      'payment.refunded': onSagaEvent(saga, 'payment.refunded'),
      'inventory.reserved': onSagaEvent(saga, 'inventory.reserved'),
      'inventory.failed': onSagaEvent(saga, 'inventory.failed'),
      'inventory.released': onSagaEvent(saga, 'inventory.released'),
      'shipment.created': onSagaEvent(saga, 'shipment.created'),
      'shipment.delivered': onSagaEvent(saga, 'shipment.delivered'),
    },
    options,
  )
}
