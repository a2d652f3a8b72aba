// The order saga's process manager: applies the state machine (domain/saga.ts) to what happens to an order, in one
// transaction with the order's status, the step log and the commands in the outbox; fires the deadlines of steps
// that did not answer; and gives operators the instances and their actions (GET /admin/sagas, retry, compensate).
import {
  AppError,
  type OrderStatus,
  type Saga,
  type SagaListQuery,
  type SagaLogEntry,
} from '@meridian/contracts'
import { type ListEnvelope, listEnvelope, type Queryable, type Sql, transaction } from '@meridian/db'
import { appendToOutbox } from '@meridian/events'
import type { OrdersRepository } from '../data/orders-repository.ts'
import type { LockedSaga, SagaRecord, SagasRepository } from '../data/sagas-repository.ts'
import { orderHref } from './order-links.ts'
import {
  decide,
  SagaConflict,
  type SagaDecision,
  type SagaFact,
  type SagaInstance,
  type SagaTiming,
} from './saga.ts'
import { commandEvent } from './saga-commands.ts'

/** Where escalations go besides the saga's row: an error log line and a counter. */
export interface SagaAlerts {
  escalated(details: { orderId: string; step: string | null; reason: string }): void
}

export interface SagaProcessDependencies {
  sql: Sql
  orders: OrdersRepository
  sagas: SagasRepository
  timing: SagaTiming
  alerts: SagaAlerts
}

/** The event a fact arrived with, for the step log. */
export interface FactSource {
  eventType: string
  eventId: string
}

export const sagaHref = (orderId: string) => `/api/v1/admin/sagas/${orderId}`

const toInstance = (saga: SagaRecord, orderStatus: OrderStatus): SagaInstance => ({
  state: saga.state,
  step: saga.step,
  attempt: saga.attempt,
  compensation: saga.compensation,
  failedStep: saga.failedStep,
  failureReason: saga.failureReason,
  paymentId: saga.paymentId,
  reservationId: saga.reservationId,
  shipmentId: saga.shipmentId,
  orderStatus,
})

function presentSaga(saga: SagaRecord, orderStatus: OrderStatus, log?: SagaLogEntry[]): Saga {
  const links: Saga['_links'] = {
    self: { href: sagaHref(saga.orderId), method: 'GET' },
    order: { href: orderHref(saga.orderId), method: 'GET' },
  }
  if (saga.step !== null && saga.compensation !== 'done') {
    links.retry = { href: `${sagaHref(saga.orderId)}/retry`, method: 'POST' }
  }
  if (saga.state !== 'shipped' && saga.compensation !== 'running') {
    links.compensate = { href: `${sagaHref(saga.orderId)}/compensate`, method: 'POST' }
  }
  return {
    orderId: saga.orderId,
    state: saga.state,
    orderStatus,
    step: saga.step,
    attempt: saga.attempt,
    deadline: saga.deadline ? saga.deadline.toISOString() : null,
    compensation: saga.compensation,
    failedStep: saga.failedStep,
    failureReason: saga.failureReason,
    ...(saga.paymentId === null ? {} : { paymentId: saga.paymentId }),
    ...(saga.reservationId === null ? {} : { reservationId: saga.reservationId }),
    ...(saga.shipmentId === null ? {} : { shipmentId: saga.shipmentId }),
    createdAt: saga.createdAt.toISOString(),
    updatedAt: saga.updatedAt.toISOString(),
    ...(log ? { log } : {}),
    _links: links,
  }
}

export function createSagaProcess({ sql, orders, sagas, timing, alerts }: SagaProcessDependencies) {
  /**
   * Decides on `fact` for the order's saga and applies the decision: the instance, the order's status, the step
   * log and the commands in the outbox, all in `tx`. The order's row is locked before the saga's (as a cancel
   * does), so the two never wait on each other in opposite orders. An order without a saga is not ours: ignored.
   */
  async function applyFact(
    orderId: string,
    fact: SagaFact,
    tx: Queryable,
    source?: FactSource,
  ): Promise<SagaDecision | undefined> {
    const locked = await sagas.lockForDecision(orderId, {}, tx)
    return locked ? applyDecision(orderId, locked, fact, tx, source) : undefined
  }

  /**
   * The decision on `fact` for the instance `locked` (both rows held in `tx`), applied in one round trip: the
   * instance, the order's status and the step log in one statement, and its commands' outbox rows sent with it,
   * in the order of the commands.
   */
  async function applyDecision(
    orderId: string,
    { saga, order }: LockedSaga,
    fact: SagaFact,
    tx: Queryable,
    source?: FactSource,
  ): Promise<SagaDecision> {
    const decision = decide(toInstance(saga, order.status), fact, timing)
    const { next } = decision
    // built before anything is sent: an event its schema refuses throws here, and the transaction rolls back
    const events = decision.commands.map((command) => commandEvent(command, orderId, order, next))
    await Promise.all([
      sagas.record(
        orderId,
        {
          state: next.state,
          step: next.step,
          attempt: next.attempt,
          compensation: next.compensation,
          failedStep: next.failedStep,
          failureReason: next.failureReason,
          paymentId: next.paymentId,
          reservationId: next.reservationId,
          shipmentId: next.shipmentId,
          deadlineInMs: decision.deadlineInMs,
        },
        next.orderStatus === order.status ? null : next.orderStatus,
        decision.log.map((line) => ({ ...line, ...(source ?? {}) })),
        tx,
      ),
      ...events.map((event) => appendToOutbox(tx, event, { aggregateId: orderId })),
    ])
    if (decision.escalation) alerts.escalated({ orderId, step: next.step, reason: decision.escalation })
    return decision
  }

  /** An operator's action on one saga: 404 without one, 409 when the state refuses it; 202 with the saga. */
  async function operatorAction(orderId: string, fact: SagaFact): Promise<Saga> {
    try {
      await transaction(sql, async (tx) => {
        const applied = await applyFact(orderId, fact, tx, { eventType: 'operator', eventId: fact.kind })
        if (!applied) throw AppError.notFound(`No saga for order ${orderId}`)
      })
    } catch (error) {
      if (error instanceof SagaConflict) throw AppError.conflict(error.message)
      throw error
    }
    return getSaga(orderId)
  }

  async function getSaga(orderId: string): Promise<Saga> {
    const [saga, order] = await Promise.all([sagas.findByOrder(orderId), orders.findById(orderId)])
    if (!saga || !order) throw AppError.notFound(`No saga for order ${orderId}`)
    const log = (await sagas.logOf(orderId)).map(
      (line): SagaLogEntry => ({
        step: line.step,
        outcome: line.outcome,
        ...(line.attempt === null ? {} : { attempt: line.attempt }),
        ...(line.eventType === null ? {} : { eventType: line.eventType }),
        ...(line.eventId === null ? {} : { eventId: line.eventId }),
        ...(line.detail === null ? {} : { detail: line.detail }),
        at: line.at.toISOString(),
      }),
    )
    return presentSaga(saga, order.status, log)
  }

  return {
    /**
     * The instance of an order placed in `tx`: waits for its payment (order.placed asks for it). One statement, sent
     * as it is called: the caller may send it right behind the order's insert without waiting for that.
     */
    start: (orderId: string, tx: Queryable): Promise<void> =>
      sagas.start(
        orderId,
        timing.stepTimeoutMs,
        [{ step: 'payment', outcome: 'started', attempt: 1, eventType: 'order.placed' }],
        tx,
      ),

    /** A step's event (from payment, inventory or shipping), in the consumer's transaction. */
    onEvent: (orderId: string, fact: SagaFact, tx: Queryable, source: FactSource) =>
      applyFact(orderId, fact, tx, source),

    /**
     * The customer's cancel, in the transaction that locked the order: the saga is cancelled (order.cancelled, then
     * the compensations); a saga past cancelling answers SagaConflict.
     */
    cancel: (orderId: string, reason: string, tx: Queryable) =>
      applyFact(orderId, { kind: 'cancel', reason }, tx, { eventType: 'cancel', eventId: 'customer' }),

    /**
     * Fires the deadlines that have passed: each due instance (at most `limit`, skipping those another order
     * process holds) decided on in a transaction of its own. Returns how many fired.
     */
    async fireDeadlines(limit = 50): Promise<number> {
      let fired = 0
      for (const orderId of await sagas.dueOrders(limit)) {
        const applied = await transaction(sql, async (tx) => {
          // the order's row first, as every other change of the saga takes them (no two wait in opposite orders);
          // the instance only if its deadline has still passed and no other order process holds it
          const locked = await sagas.lockForDecision(orderId, { onlyIfDue: true }, tx)
          if (!locked) return false
          await applyDecision(orderId, locked, { kind: 'timeout' }, tx, {
            eventType: 'timeout',
            eventId: 'deadline',
          })
          return true
        })
        if (applied) fired += 1
      }
      return fired
    },

    async listSagas(query: SagaListQuery, path: string): Promise<ListEnvelope<Saga>> {
      const request = sagas.listRequest(query)
      const { rows, total } = await sagas.list(request)
      const statuses = await orders.statusesOf(rows.map((row) => row.orderId))
      return listEnvelope(
        path,
        query,
        request,
        rows.map((row) => presentSaga(row, statuses.get(row.orderId) ?? 'placed')),
        total,
      )
    },

    getSaga,

    retry: (orderId: string) => operatorAction(orderId, { kind: 'operator.retry' }),

    compensate: (orderId: string, reason = 'compensated by an operator') =>
      operatorAction(orderId, { kind: 'operator.compensate', reason }),
  }
}

export type SagaProcess = ReturnType<typeof createSagaProcess>
