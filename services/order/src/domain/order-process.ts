// The order saga declared on the process module: its states, its steps (sagaSteps), the events that move it (each
// answer of payment, inventory and shipping about an order — a return's refund is not a compensation and is not
// its), its decision (saga.ts), the order's row as its owner (locked first; its status written with the instance)
// and the events its commands go out as (saga-commands.ts).
import { type EventData, type EventType, sagaStates } from '@meridian/contracts'
import { defineProcess, type EventRoute, type EventRoutes } from '@meridian/process'
import type { OrderContent } from '../data/orders-repository.ts'
import { lockOrderRow, readOrderRow, writeOrderStatus } from '../data/process-owner.ts'
import { orderHref } from './order-links.ts'
import {
  decide,
  type SagaCommand,
  type SagaFact,
  type SagaInstance,
  type SagaTiming,
  sagaSteps,
} from './saga.ts'
import { commandEvent } from './saga-commands.ts'

export const orderProcessType = 'order'

/** An order id that is not a uuid names no order of ours: nothing to apply. */
export const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

/** The route of an event about an order: its order's saga, when the order id is one of ours. */
const aboutOrder =
  <Type extends EventType>(
    _type: Type,
    fact: (data: EventData<Type>) => SagaFact | undefined,
  ): EventRoute<Type, SagaFact> =>
  (data) => {
    const { orderId } = data as { orderId: string }
    if (!uuid.test(orderId)) return undefined
    const made = fact(data)
    return made ? { key: orderId, fact: made } : undefined
  }

/** What each answer tells the saga. */
const sagaEventRoutes = {
  'payment.processed': aboutOrder('payment.processed', (data) => ({
    kind: 'payment.processed',
    paymentId: data.paymentId,
  })),
  'payment.action_required': aboutOrder('payment.action_required', (data) => ({
    kind: 'payment.action_required',
    authenticateUrl: data.authenticateUrl ?? null,
    expiresAt: data.expiresAt,
  })),
  'payment.failed': aboutOrder('payment.failed', (data) => ({ kind: 'payment.failed', reason: data.reason })),
  // a return's refund (cause: return) is the return's, never a compensation of the order
  'payment.refunded': aboutOrder('payment.refunded', (data) =>
    data.cause === 'return' || data.returnId !== undefined
      ? undefined
      : {
          kind: 'payment.refunded',
          amount: data.amount,
          ...(data.paymentId ? { paymentId: data.paymentId } : {}),
        },
  ),
  'inventory.reserved': aboutOrder('inventory.reserved', (data) => ({
    kind: 'inventory.reserved',
    reservationId: data.reservationId,
  })),
  'inventory.failed': aboutOrder('inventory.failed', (data) => ({
    kind: 'inventory.failed',
    reason: data.reason,
  })),
  'inventory.released': aboutOrder('inventory.released', (data) => ({
    kind: 'inventory.released',
    ...(data.reservationId ? { reservationId: data.reservationId } : {}),
  })),
  'shipment.created': aboutOrder('shipment.created', (data) => ({
    kind: 'shipment.created',
    shipmentId: data.shipmentId,
  })),
  'shipment.delivered': aboutOrder('shipment.delivered', (data) => ({
    kind: 'shipment.delivered',
    shipmentId: data.shipmentId,
  })),
} satisfies EventRoutes<SagaFact>

/** The event types the saga follows. */
export const sagaEventTypes = Object.keys(sagaEventRoutes) as (keyof typeof sagaEventRoutes)[]

export function orderProcess(timing: SagaTiming) {
  return defineProcess<SagaInstance, SagaFact, SagaCommand, OrderContent>({
    type: orderProcessType,
    description:
      'The order saga: payment, stock, shipment; on failure or cancel the stock released, then refunded',
    states: sagaStates,
    finalStates: ['shipped'],
    steps: sagaSteps(timing),
    events: sagaEventRoutes,
    decide: (instance, fact) => decide(instance, fact, timing),
    restore: (stored, order) => ({
      state: stored.state as SagaInstance['state'],
      step: stored.step as SagaInstance['step'],
      attempt: stored.attempt,
      compensation: stored.compensation,
      failedStep: stored.failedStep,
      failureReason: stored.failureReason,
      paymentId: (stored.data.paymentId as string | undefined) ?? null,
      reservationId: (stored.data.reservationId as string | undefined) ?? null,
      shipmentId: (stored.data.shipmentId as string | undefined) ?? null,
      authenticateUrl: (stored.data.authenticateUrl as string | undefined) ?? null,
      orderStatus: order.status,
    }),
    persist: (instance) => ({
      ...(instance.paymentId === null ? {} : { paymentId: instance.paymentId }),
      ...(instance.reservationId === null ? {} : { reservationId: instance.reservationId }),
      ...(instance.shipmentId === null ? {} : { shipmentId: instance.shipmentId }),
      ...(instance.authenticateUrl === null ? {} : { authenticateUrl: instance.authenticateUrl }),
    }),
    commandEvent: (command, { key, instance, owner }) => commandEvent(command, key, owner, instance),
    owner: {
      lock: lockOrderRow,
      read: readOrderRow,
      write: (key, order, next, sql) =>
        next.orderStatus === order.status ? null : writeOrderStatus(key, next.orderStatus, sql),
    },
    links: (key) => ({
      order: { href: orderHref(key), method: 'GET' },
      saga: { href: `/api/v1/admin/sagas/${key}`, method: 'GET' },
    }),
  })
}
