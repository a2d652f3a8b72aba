// A return declared on the process module: its states and steps, the answers that move it (found by the stamp they
// carry back), its decision (return-machine.ts), the return's row as its owner (locked first, its status written
// with the instance) and its commands' events (return-commands.ts).
import { type ReturnStatus, returnStatuses } from '@meridian/contracts'
import { defineProcess } from '@meridian/process'
import { type ReturnRecord, readReturnRow, returnOwnerRow, writeReturn } from '../data/returns-repository.ts'
import { orderHref } from './order-links.ts'
import { returnCommandEvent } from './return-commands.ts'
import {
  decideReturn,
  type ReturnCommand,
  type ReturnFact,
  type ReturnInstance,
  type ReturnTiming,
  returnMechanics,
  returnSteps,
} from './return-machine.ts'

export const returnProcessType = 'return'

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
      'inventory.restocked.v2': { fact: () => ({ kind: 'inventory.restocked' }) },
      'payment.refunded': {
        fact: (data) => ({
          kind: 'payment.refunded',
          amount: data.amount,
          ...(data.paymentId ? { paymentId: data.paymentId } : {}),
        }),
      },
      'payment.refund_failed.v2': {
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
