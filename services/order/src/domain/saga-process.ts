// The order saga declared on the process module: its states, its steps (sagaSteps), the events that move it (the
// choreographed ones by the order they name, the answers to its commands by the stamp they carry back), its decision
// (saga-machine.ts), the order's row as its owner (locked first; its status written with the instance) and the events
// its commands go out as (saga-commands.ts).
import { sagaStates } from '@meridian/contracts'
import { type AnswerRoutes, defineProcess, type EventRoutes } from '@meridian/process'
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

/** An event about an order names its saga by its orderId; one that is not a uuid names no order of ours. */
const byOrder = { key: ({ orderId }: { orderId: string }) => (uuid.test(orderId) ? orderId : undefined) }

/**
 * The answers to the saga's commands (each step's request, and the compensations'), found by their stamp: each one's
 * data is its fact, but the 3-D Secure page's, which may be absent.
 */
const sagaAnswers = {
  'payment.processed': 'fact',
  'payment.action_required': {
    fact: ({ authenticateUrl, expiresAt }) => ({
      kind: 'payment.action_required',
      authenticateUrl: authenticateUrl ?? null,
      expiresAt,
    }),
  },
  'payment.failed': 'fact',
  'inventory.reserved': 'fact',
  'inventory.failed': 'fact',
  'shipment.created': 'fact',
  'inventory.released': 'fact',
  'payment.refunded': 'fact',
} satisfies AnswerRoutes<SagaFact>

/**
 * The choreographed events the saga follows by the order they name, each with its answer's fact: payment charges on
 * order.placed, inventory reserves on payment.processed, and the carrier delivers; an answer sent before answers
 * were stamped also arrives this way. A compensation's answer (a release, a refund) is only ever an answer: a refund
 * made for anything else (a return's, the provider's own) never reaches the saga.
 */
const sagaEventRoutes = {
  'payment.processed': byOrder,
  'payment.action_required': byOrder,
  'payment.failed': byOrder,
  'inventory.reserved': byOrder,
  'inventory.failed': byOrder,
  'shipment.created': byOrder,
  // the carrier's news, no answer to the saga: its own fact
  'shipment.delivered': (data) =>
    byOrder.key(data) === undefined
      ? undefined
      : { key: data.orderId, fact: { kind: 'shipment.delivered', shipmentId: data.shipmentId } },
} satisfies EventRoutes<SagaFact>

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
    decide: decideSaga,
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
