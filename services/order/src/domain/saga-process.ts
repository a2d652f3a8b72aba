// The order saga declared on the process module: its states, its steps (sagaSteps), the events that move it (the
// choreographed ones by the order they name, the answers to its commands by the stamp they carry back), its decision
// (saga-machine.ts), the order's row as its owner (locked first; its status written with the instance) and the events
// its commands go out as (saga-commands.ts).
import { type EventData, sagaStates } from '@meridian/contracts'
import { type AnswerRoutes, defineProcess, type EventRoute, type EventRoutes } from '@meridian/process'
import { Type } from 'typebox'
import type { OrderContent } from '../data/orders-repository.ts'
import { orderOwnerRow, readOrderRow, writeOrderStatus } from '../data/process-owner.ts'
import { orderHref } from './order-links.ts'
import { commandEvent } from './saga-commands.ts'
import {
  decideSaga,
  type SagaCommand,
  type SagaFact,
  type SagaInstance,
  type SagaTiming,
  sagaMechanics,
  sagaSteps,
} from './saga-machine.ts'

export const orderProcessType = 'order'

/** An order id that is not a uuid names no order of ours: nothing to apply. */
export const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

/** What each event about an order tells its saga, answer or not. */
const sagaFacts = {
  'payment.processed': (data: EventData<'payment.processed'>): SagaFact => ({
    kind: 'payment.processed',
    paymentId: data.paymentId,
  }),
  'payment.action_required': (data: EventData<'payment.action_required'>): SagaFact => ({
    kind: 'payment.action_required',
    authenticateUrl: data.authenticateUrl ?? null,
    expiresAt: data.expiresAt,
  }),
  'payment.failed': (data: EventData<'payment.failed'>): SagaFact => ({
    kind: 'payment.failed',
    reason: data.reason,
  }),
  'payment.refunded': (data: EventData<'payment.refunded'>): SagaFact => ({
    kind: 'payment.refunded',
    amount: data.amount,
    ...(data.paymentId ? { paymentId: data.paymentId } : {}),
  }),
  'inventory.reserved': (data: EventData<'inventory.reserved'>): SagaFact => ({
    kind: 'inventory.reserved',
    reservationId: data.reservationId,
  }),
  'inventory.failed': (data: EventData<'inventory.failed'>): SagaFact => ({
    kind: 'inventory.failed',
    reason: data.reason,
  }),
  'inventory.released': (data: EventData<'inventory.released'>): SagaFact => ({
    kind: 'inventory.released',
    ...(data.reservationId ? { reservationId: data.reservationId } : {}),
  }),
  'shipment.created': (data: EventData<'shipment.created'>): SagaFact => ({
    kind: 'shipment.created',
    shipmentId: data.shipmentId,
  }),
  'shipment.delivered': (data: EventData<'shipment.delivered'>): SagaFact => ({
    kind: 'shipment.delivered',
    shipmentId: data.shipmentId,
  }),
}

/** The route of an event about an order that is no answer of its saga's: the saga of the order its data names. */
const aboutOrder =
  <Type extends keyof typeof sagaFacts>(type: Type): EventRoute<Type, SagaFact> =>
  (data) => {
    const { orderId } = data as { orderId: string }
    if (!uuid.test(orderId)) return undefined
    return { key: orderId, fact: (sagaFacts[type] as (data: EventData<Type>) => SagaFact)(data) }
  }

/**
 * The choreographed events the saga follows by the order they name: payment charges on order.placed, inventory
 * reserves on payment.processed, and the carrier delivers; an answer sent before answers were stamped also arrives
 * this way. A compensation's answer (a release, a refund) is only ever an answer: a refund made for anything else
 * (a return's, the provider's own) never reaches the saga.
 */
const sagaEventRoutes = {
  'payment.processed': aboutOrder('payment.processed'),
  'payment.action_required': aboutOrder('payment.action_required'),
  'payment.failed': aboutOrder('payment.failed'),
  'inventory.reserved': aboutOrder('inventory.reserved'),
  'inventory.failed': aboutOrder('inventory.failed'),
  'shipment.created': aboutOrder('shipment.created'),
  'shipment.delivered': aboutOrder('shipment.delivered'),
} satisfies EventRoutes<SagaFact>

/** The answers to the saga's commands (each step's request, and the compensations'), found by their stamp. */
const sagaAnswers = {
  'payment.processed': { fact: sagaFacts['payment.processed'] },
  'payment.action_required': { fact: sagaFacts['payment.action_required'] },
  'payment.failed': { fact: sagaFacts['payment.failed'] },
  'inventory.reserved': { fact: sagaFacts['inventory.reserved'] },
  'inventory.failed': { fact: sagaFacts['inventory.failed'] },
  'shipment.created': { fact: sagaFacts['shipment.created'] },
  'inventory.released': { fact: sagaFacts['inventory.released'] },
  'payment.refunded': { fact: sagaFacts['payment.refunded'] },
} satisfies AnswerRoutes<SagaFact>

const maybe = Type.Union([Type.String({ maxLength: 2000 }), Type.Null()])
/** What the saga keeps of its own in its row: the ids its steps answered with, the 3-D Secure page it waits on. */
const SagaData = Type.Object({
  paymentId: maybe,
  reservationId: maybe,
  shipmentId: maybe,
  authenticateUrl: maybe,
})

export function orderProcess(timing: SagaTiming) {
  return defineProcess<SagaInstance, SagaFact, SagaCommand, OrderContent>({
    type: orderProcessType,
    description:
      'The order saga: payment, stock, shipment; on failure or cancel the stock released, then refunded',
    states: sagaStates,
    finalStates: ['shipped'],
    steps: sagaSteps(timing),
    events: sagaEventRoutes,
    answers: sagaAnswers,
    decide: (instance, fact) => decideSaga(instance, fact, timing),
    mechanics: sagaMechanics,
    data: SagaData,
    fromOwner: (order) => ({ orderStatus: order.status }),
    commandEvent: (command, { key, instance, owner }) => commandEvent(command, key, owner, instance),
    owner: {
      select: orderOwnerRow,
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
