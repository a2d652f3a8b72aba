// A return declared on the process module: requested by its customer; received (an admin or a carrier) → the stock
// goes back (inventory.restock_requested → inventory.restocked) → exactly the returned lines are refunded under the
// return's own provider key (payment.refund_requested with cause `return` → payment.refunded) → completed; or rejected
// before receipt. Each step is asked again on its deadline and escalated to operators after its last attempt; a
// declined refund is a failed attempt. The return's row is its owner: locked first, its status written with the
// instance. decideReturn is pure.
import { type EventType, fromMinorUnits, type ReturnStatus, returnStatuses } from '@meridian/contracts'
import { type CatalogueEvent, createEvent } from '@meridian/events'
import {
  type CommandContext,
  type Decision,
  defineProcess,
  type InstanceBase,
  type MechanicsOptions,
  type OwnFact,
  ProcessConflict,
  type Steps,
  stepMechanics,
} from '@meridian/process'
import { type ReturnRecord, readReturnRow, returnOwnerRow, writeReturn } from '../data/returns-repository.ts'
import { orderHref, serviceSource } from './order-links.ts'

export const returnProcessType = 'return'

export interface ReturnInstance extends InstanceBase {
  state: ReturnStatus
  step: 'restock' | 'refund' | null
  orderId: string
  paymentId: string | null
  rejectionReason: string | null
}

export type ReturnFact =
  | { kind: 'received' }
  | { kind: 'rejected'; reason: string }
  | { kind: 'inventory.restocked' }
  | { kind: 'payment.refunded'; amount: number; paymentId?: string }
  | { kind: 'payment.refund_failed'; reason: string }

export type ReturnCommand =
  | { type: 'return.requested' | 'return.received' | 'return.completed' | 'return.rejected' }
  | { type: 'inventory.restock_requested' | 'payment.refund_requested'; attempt: number }

export interface ReturnTiming {
  /** how long the restock or the refund may go unanswered before it is asked again, ms (doubled each attempt) */
  stepTimeoutMs: number
  /** attempts of the restock and of the refund before they are escalated to operators */
  stepAttempts: number
}

export function returnSteps(timing: ReturnTiming): Steps<ReturnInstance, ReturnCommand> {
  const step = (type: 'inventory.restock_requested' | 'payment.refund_requested') => ({
    kind: 'forward' as const,
    deadlineMs: timing.stepTimeoutMs,
    attempts: timing.stepAttempts,
    backoff: 'doubling' as const,
    ask: (_instance: ReturnInstance, attempt: number): ReturnCommand => ({ type, attempt }),
  })
  return { restock: step('inventory.restock_requested'), refund: step('payment.refund_requested') }
}

/** A return just requested: waits for its goods (a person's act: no deadline); return.requested goes out. */
export function requestedReturn(orderId: string): Decision<ReturnInstance, ReturnCommand> {
  return {
    next: {
      state: 'requested',
      step: null,
      attempt: 1,
      compensation: 'none',
      failedStep: null,
      failureReason: null,
      orderId,
      paymentId: null,
      rejectionReason: null,
    },
    deadlineInMs: null,
    commands: [{ type: 'return.requested' }],
    log: [{ step: 'return', outcome: 'started', detail: 'requested' }],
  }
}

const unchanged = (
  instance: ReturnInstance,
  line: Decision<ReturnInstance, ReturnCommand>['log'][number],
): Decision<ReturnInstance, ReturnCommand> => ({
  next: instance,
  deadlineInMs: 'keep',
  commands: [],
  log: [line],
})

/** What the module's step mechanics know of a return: its restock and refund run once it is received. */
const returnMechanics: MechanicsOptions<ReturnInstance, ReturnCommand> = {
  noun: 'the return',
  forwardActive: (each) => each.state === 'received',
}

/** The decision on a return's own facts and an operator's compensate: pure (timeouts and retries are the module's). */
export function decideReturn(
  instance: ReturnInstance,
  fact: OwnFact<ReturnFact>,
  timing: ReturnTiming,
): Decision<ReturnInstance, ReturnCommand> {
  const mechanics = stepMechanics(returnSteps(timing), returnMechanics)
  const reject = (reason: string, detail: string): Decision<ReturnInstance, ReturnCommand> => {
    if (instance.state === 'rejected') return unchanged(instance, { step: 'return', outcome: 'late', detail })
    if (instance.state !== 'requested') {
      throw new ProcessConflict(
        `the return's goods were received (${instance.state}): it can no longer be rejected`,
      )
    }
    return {
      next: { ...instance, state: 'rejected', rejectionReason: reason },
      deadlineInMs: null,
      commands: [{ type: 'return.rejected' }],
      log: [{ step: 'return', outcome: 'failed', detail }],
    }
  }
  switch (fact.kind) {
    case 'received': {
      if (instance.state === 'rejected') {
        throw new ProcessConflict('the return was rejected: its goods cannot be received')
      }
      // the same receipt sent twice (a retry, a second scan): nothing moves again
      if (instance.state !== 'requested') {
        return unchanged(instance, { step: 'return', outcome: 'late', detail: 'received again' })
      }
      const asked = mechanics.ask({ ...instance, state: 'received' }, 'restock')
      return {
        ...asked,
        commands: [{ type: 'return.received' }, ...asked.commands],
        log: [{ step: 'return', outcome: 'succeeded', detail: 'received' }, ...asked.log],
      }
    }
    case 'rejected':
      return reject(fact.reason, `rejected: ${fact.reason}`)
    case 'inventory.restocked': {
      if (instance.step !== 'restock') {
        return unchanged(instance, { step: 'restock', outcome: 'succeeded', detail: 'not awaited' })
      }
      const asked = mechanics.ask({ ...instance, escalated: undefined }, 'refund')
      return {
        ...asked,
        log: [{ step: 'restock', outcome: 'succeeded', attempt: instance.attempt }, ...asked.log],
      }
    }
    case 'payment.refunded': {
      const detail = `${fact.paymentId ?? 'no payment'}: ${fact.amount.toFixed(2)}`
      if (instance.step !== 'refund') {
        return unchanged(instance, {
          step: 'refund',
          outcome: 'succeeded',
          detail: `${detail} (not awaited)`,
        })
      }
      return {
        next: {
          ...instance,
          state: 'completed',
          step: null,
          attempt: 1,
          escalated: undefined,
          paymentId: fact.paymentId ?? null,
        },
        deadlineInMs: null,
        commands: [{ type: 'return.completed' }],
        log: [
          { step: 'refund', outcome: 'succeeded', attempt: instance.attempt, detail },
          { step: 'return', outcome: 'succeeded', detail: 'completed' },
        ],
      }
    }
    case 'payment.refund_failed':
      // a decline of an earlier attempt than the awaited one never gets here: the module logs it (an answer's stamp)
      return mechanics.attemptFailed(instance, 'refund', fact.reason)
    case 'operator.compensate':
      // before receipt an operator's undoing is a rejection; a received return's stock and refund are not undone
      if (instance.state === 'requested')
        return reject(fact.reason, `rejected by an operator: ${fact.reason}`)
      throw new ProcessConflict(
        `the return is ${instance.state}: its restock and refund are not undone (retry its step instead)`,
      )
  }
}

/** The event a return's command goes out as, from its row (the owner) and the instance the decision leads to. */
export function returnCommandEvent(
  command: ReturnCommand,
  { instance, owner }: CommandContext<ReturnInstance, ReturnRecord>,
): CatalogueEvent<EventType> {
  const event = <Type extends EventType>(type: Type, data: CatalogueEvent<Type>['data']) =>
    createEvent(type, data, { source: serviceSource })
  const about = { returnId: owner.id, orderId: owner.orderId }
  const items = owner.items.map(({ productId, quantity }) => ({ productId, quantity }))
  const refundAmount = fromMinorUnits(owner.refundCents)
  switch (command.type) {
    case 'return.requested':
      return event('return.requested', {
        ...about,
        customerId: owner.customerId,
        items: owner.items.map((item) => ({
          productId: item.productId,
          quantity: item.quantity,
          price: fromMinorUnits(item.priceCents),
          name: item.name,
        })),
        refundAmount,
        reason: owner.reason,
      })
    case 'return.received':
      return event('return.received', { ...about, customerId: owner.customerId, items })
    case 'return.completed':
      return event('return.completed', {
        ...about,
        customerId: owner.customerId,
        refundAmount,
        ...(instance.paymentId ? { paymentId: instance.paymentId } : {}),
      })
    case 'return.rejected':
      return event('return.rejected', {
        ...about,
        customerId: owner.customerId,
        reason: instance.rejectionReason ?? 'rejected',
      })
    case 'inventory.restock_requested':
      return event('inventory.restock_requested', { ...about, items, attempt: command.attempt })
    case 'payment.refund_requested':
      return event('payment.refund_requested', {
        orderId: owner.orderId,
        reason: `return ${owner.id}: ${owner.reason}`,
        attempt: command.attempt,
        cause: 'return',
        returnId: owner.id,
        amount: refundAmount,
      })
  }
}

export function returnProcess(timing: ReturnTiming) {
  return defineProcess<ReturnInstance, ReturnFact, ReturnCommand, ReturnRecord>({
    type: returnProcessType,
    description: 'A return: received, its stock back, exactly its lines refunded; or rejected before receipt',
    states: returnStatuses,
    finalStates: ['completed', 'rejected'],
    steps: returnSteps(timing),
    // nothing moves a return but the answers to its own commands, found by the stamp they carry back
    events: {},
    answers: {
      'inventory.restocked': { fact: () => ({ kind: 'inventory.restocked' }) },
      'payment.refunded': {
        fact: (data) => ({
          kind: 'payment.refunded',
          amount: data.amount,
          ...(data.paymentId ? { paymentId: data.paymentId } : {}),
        }),
      },
      'payment.refund_failed': {
        fact: (data) => ({ kind: 'payment.refund_failed', reason: data.reason }),
        failure: true,
      },
    },
    decide: (instance, fact) => decideReturn(instance, fact, timing),
    mechanics: returnMechanics,
    restore: (stored, owner) => ({
      state: stored.state as ReturnStatus,
      step: stored.step as ReturnInstance['step'],
      attempt: stored.attempt,
      compensation: stored.compensation,
      failedStep: stored.failedStep,
      failureReason: stored.failureReason,
      ...(stored.escalation !== null && stored.compensation !== 'escalated' ? { escalated: true } : {}),
      orderId: owner.orderId,
      paymentId: owner.paymentId,
      rejectionReason: owner.rejectionReason,
    }),
    persist: (instance) => ({
      orderId: instance.orderId,
      ...(instance.paymentId === null ? {} : { paymentId: instance.paymentId }),
    }),
    commandEvent: returnCommandEvent,
    aggregateId: ({ owner }) => owner.orderId,
    owner: {
      select: returnOwnerRow,
      read: readReturnRow,
      write: (key, owner, next, sql) =>
        next.state === owner.status &&
        next.paymentId === owner.paymentId &&
        next.rejectionReason === owner.rejectionReason
          ? null
          : writeReturn(
              key,
              { status: next.state, paymentId: next.paymentId, rejectionReason: next.rejectionReason },
              sql,
            ),
    },
    links: (key, stored) => ({
      return: { href: `/api/v1/returns/${key}`, method: 'GET' },
      ...(typeof stored.data.orderId === 'string'
        ? { order: { href: orderHref(stored.data.orderId), method: 'GET' } }
        : {}),
    }),
  })
}
