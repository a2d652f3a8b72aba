// The order saga's face for the order service and its operators, on the process module (the saga is the process type
// `order`, declared in saga-process.ts): start an order's instance, feed it an event or the customer's cancel, fire
// deadlines, and GET /admin/sagas with its retry and compensate (a deprecated alias of /admin/processes/order) — each
// a call of the module's manager, which applies the state machine (saga-machine.ts) in one transaction with the
// order's status, the step log and the commands in the outbox, and whose rows and store the saga's list reads.
import {
  AppError,
  type OrderStatus,
  type Saga,
  type SagaListQuery,
  type SagaLogEntry,
  type SagaState,
  type SagaStep,
} from '@meridian/contracts'
import { type ListEnvelope, listEnvelope, type Queryable } from '@meridian/db'
import type { FactSource, ProcessManager, StoredInstance } from '@meridian/process'
import type { AuditSource } from '@meridian/service-kit'
import type { OrdersRepository } from '../data/orders-repository.ts'
import { orderHref } from './order-links.ts'
import { type SagaDecision, type SagaFact, type SagaTiming, sagaStarted } from './saga-machine.ts'
import { orderProcessType } from './saga-process.ts'

export interface SagaFacadeDependencies {
  orders: OrdersRepository
  timing: SagaTiming
  /** the process module's manager, with the order process among its definitions */
  processes: ProcessManager
}

export const sagaHref = (orderId: string) => `/api/v1/admin/sagas/${orderId}`

/** An id the saga's row keeps in its data (the ids its steps answered with), when it has it. */
const idIn = (saga: StoredInstance, name: 'paymentId' | 'reservationId' | 'shipmentId') => {
  const value = saga.data[name]
  return typeof value === 'string' ? { [name]: value } : {}
}

/** The saga as operators read it at /admin/sagas, from the module's row of its order's instance. */
function presentSaga(saga: StoredInstance, orderStatus: OrderStatus, log?: SagaLogEntry[]): Saga {
  const orderId = saga.key
  const links: Saga['_links'] = {
    self: { href: sagaHref(orderId), method: 'GET' },
    order: { href: orderHref(orderId), method: 'GET' },
  }
  if (saga.step !== null && saga.compensation !== 'done') {
    links.retry = { href: `${sagaHref(orderId)}/retry`, method: 'POST' }
  }
  if (saga.state !== 'shipped' && saga.compensation !== 'running') {
    links.compensate = { href: `${sagaHref(orderId)}/compensate`, method: 'POST' }
  }
  return {
    orderId,
    state: saga.state as SagaState,
    orderStatus,
    step: saga.step as SagaStep | null,
    attempt: saga.attempt,
    deadline: saga.deadline ? saga.deadline.toISOString() : null,
    compensation: saga.compensation,
    failedStep: saga.failedStep,
    failureReason: saga.failureReason,
    ...idIn(saga, 'paymentId'),
    ...idIn(saga, 'reservationId'),
    ...idIn(saga, 'shipmentId'),
    createdAt: saga.createdAt.toISOString(),
    updatedAt: saga.updatedAt.toISOString(),
    ...(log ? { log } : {}),
    _links: links,
  }
}

export function createSagaFacade({ orders, timing, processes }: SagaFacadeDependencies) {
  /** A fact applied to the order's saga in `tx`; undefined: the order has no saga (not ours). */
  const applyFact = (orderId: string, fact: SagaFact, tx: Queryable, source?: FactSource) =>
    processes.apply(orderProcessType, orderId, fact, tx, source) as Promise<SagaDecision | undefined>

  /** An operator's action on one saga: 404 without one, 409 when the state refuses it; 202 with the saga. */
  async function operatorAction(
    orderId: string,
    action: 'retry' | 'compensate',
    audit: AuditSource,
    reason?: string,
  ): Promise<Saga> {
    if (action === 'retry') await processes.retry(orderProcessType, orderId, audit)
    else await processes.compensate(orderProcessType, orderId, reason, audit)
    return getSaga(orderId)
  }

  async function getSaga(orderId: string): Promise<Saga> {
    const [saga, order] = await Promise.all([
      processes.store.find(orderProcessType, orderId),
      orders.findById(orderId),
    ])
    if (!saga || !order) throw AppError.notFound(`No saga for order ${orderId}`)
    const log: SagaLogEntry[] = await processes.logOf(orderProcessType, orderId)
    return presentSaga(saga, order.status, log)
  }

  return {
    /**
     * The instance of an order placed in `tx`: waits for its payment (order.placed asks for it). One statement, sent
     * as it is called: the caller may send it right behind the order's insert without waiting for that.
     */
    start: (orderId: string, tx: Queryable): Promise<void> =>
      processes.start(orderProcessType, orderId, sagaStarted(timing), tx, {
        source: { eventType: 'order.placed' },
      }),

    /** A step's event (from payment, inventory or shipping), in the consumer's transaction. */
    onEvent: (orderId: string, fact: SagaFact, tx: Queryable, source: FactSource) =>
      applyFact(orderId, fact, tx, source),

    /**
     * The customer's cancel, in the transaction that locked the order: the saga is cancelled (order.cancelled, then
     * the compensations); a saga past cancelling answers ProcessConflict.
     */
    cancel: (orderId: string, reason: string, tx: Queryable) =>
      applyFact(orderId, { kind: 'cancel', reason }, tx, { eventType: 'cancel', eventId: 'customer' }),

    /** Fires the deadlines that have passed (of every process the manager runs); how many fired. */
    fireDeadlines: (limit = 50): Promise<number> => processes.fireDeadlines(limit),

    async listSagas(query: SagaListQuery, path: string): Promise<ListEnvelope<Saga>> {
      // the module's rows of type `order`: the saga's filters and sorts are the module's list's
      const request = processes.store.listRequest({ ...query, type: orderProcessType })
      const { rows, total } = await processes.store.list(request)
      const statuses = await orders.statusesOf(rows.map((row) => row.key))
      return listEnvelope(
        path,
        query,
        request,
        rows.map((row) => presentSaga(row, statuses.get(row.key) ?? 'placed')),
        total,
      )
    },

    getSaga,

    retry: (orderId: string, audit: AuditSource) => operatorAction(orderId, 'retry', audit),

    compensate: (orderId: string, audit: AuditSource, reason = 'compensated by an operator') =>
      operatorAction(orderId, 'compensate', audit, reason),
  }
}

export type SagaFacade = ReturnType<typeof createSagaFacade>
