// A return declared on the process module: its states and steps, the answers that move it (found by the stamp they
// carry back), its decision (return-machine.ts), the return's row as its owner (locked first, its status written
// with the instance) and its commands' events (return-commands.ts).
import { returnStatuses } from '@meridian/contracts'
import { defineProcess } from '@meridian/process'
import { Type } from 'typebox'
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
      'inventory.restocked.v2': 'fact',
      'payment.refunded': 'fact',
      // a decline: a failed attempt of the refund, counted by the module
      'payment.refund_failed.v2': { failed: (data) => data.reason },
    },
    decide: decideReturn,
    mechanics: returnMechanics,
    // its order and payment are kept for the operators' list; the return's row is what the instance reads them from
    data: Type.Object({
      orderId: Type.Union([Type.String({ maxLength: 255 }), Type.Null()]),
      paymentId: Type.Union([Type.String({ maxLength: 255 }), Type.Null()]),
    }),
    fromOwner: ({ orderId, paymentId, rejectionReason }) => ({ orderId, paymentId, rejectionReason }),
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
