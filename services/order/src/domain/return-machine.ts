// A return's state machine, pure: requested by its customer; received (an admin or a carrier) → the stock goes back
// (the restock step) → exactly the returned lines are refunded (the refund step) → completed; or rejected before
// receipt. Each step's deadline, an operator's retry and a declined refund (a failed attempt) are the module's
// (decideOn, with returnMechanics). return-commands.ts says what each command goes out as, return-process.ts declares it.
import type { ReturnStatus } from '@meridian/contracts'
import {
  type Decision,
  type InstanceBase,
  type MechanicsOptions,
  newInstance,
  type OwnFact,
  ProcessConflict,
  type StepMechanics,
  type Steps,
  unchanged,
} from '@meridian/process'

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
  | { kind: 'inventory.restocked.v2' }
  | { kind: 'payment.refunded'; amount: number; paymentId?: string }

export type ReturnCommand =
  | { type: 'return.requested' | 'return.received' | 'return.completed' | 'return.rejected' }
  | { type: 'inventory.restock_requested.v2' | 'payment.refund_requested'; attempt: number }

export interface ReturnTiming {
  /** how long the restock or the refund may go unanswered before it is asked again, ms (doubled each attempt) */
  stepTimeoutMs: number
  /** attempts of the restock and of the refund before they are escalated to operators */
  stepAttempts: number
}

export function returnSteps(timing: ReturnTiming): Steps<ReturnInstance, ReturnCommand> {
  const step = (type: 'inventory.restock_requested.v2' | 'payment.refund_requested') => ({
    kind: 'forward' as const,
    deadlineMs: timing.stepTimeoutMs,
    attempts: timing.stepAttempts,
    backoff: 'doubling' as const,
    ask: (_instance: ReturnInstance, attempt: number): ReturnCommand => ({ type, attempt }),
  })
  return { restock: step('inventory.restock_requested.v2'), refund: step('payment.refund_requested') }
}

/** A return just requested: waits for its goods (a person's act: no deadline); return.requested goes out. */
export function requestedReturn(orderId: string): Decision<ReturnInstance, ReturnCommand> {
  return {
    next: newInstance<ReturnInstance>({
      state: 'requested',
      orderId,
      paymentId: null,
      rejectionReason: null,
    }),
    deadlineInMs: null,
    commands: [{ type: 'return.requested' }],
    log: [{ step: 'return', outcome: 'started', detail: 'requested' }],
  }
}

/** What the module's step mechanics know of a return: its restock and refund run once it is received. */
export const returnMechanics: MechanicsOptions<ReturnInstance, ReturnCommand> = {
  noun: 'the return',
  forwardActive: (each) => each.state === 'received',
}

/** The decision on a return's own facts and an operator's compensate: pure, the module's moves given. */
export function decideReturn(
  instance: ReturnInstance,
  fact: OwnFact<ReturnFact>,
  mechanics: StepMechanics<ReturnInstance, ReturnCommand>,
): Decision<ReturnInstance, ReturnCommand> {
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
    case 'inventory.restocked.v2':
      return mechanics.answered(instance, 'restock', 'refund')
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
    case 'operator.compensate':
      // before receipt an operator's undoing is a rejection; a received return's stock and refund are not undone
      if (instance.state === 'requested')
        return reject(fact.reason, `rejected by an operator: ${fact.reason}`)
      throw new ProcessConflict(
        `the return is ${instance.state}: its restock and refund are not undone (retry its step instead)`,
      )
  }
}
