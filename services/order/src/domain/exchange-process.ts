// An exchange declared on the process module: its states and steps, the answers that move it (found by the stamp they
// carry back: payment, inventory and shipping answer it as any order's commands, knowing nothing of exchanges), its
// decision (exchange-machine.ts), the exchange's row as its owner (locked first, its status written with the
// instance) and its commands' events (exchange-commands.ts).
import { exchangeStatuses } from '@meridian/contracts'
import { defineProcess } from '@meridian/process'
import { Type } from 'typebox'
import {
  type ExchangeRecord,
  exchangeOwnerRow,
  readExchangeRow,
  writeExchange,
} from '../data/exchanges-repository.ts'
import { exchangeCommandEvent } from './exchange-commands.ts'
import {
  decideExchange,
  type ExchangeCommand,
  type ExchangeFact,
  type ExchangeInstance,
  type ExchangeTiming,
  exchangeMechanics,
  exchangeSteps,
} from './exchange-machine.ts'

export const exchangeProcessType = 'exchange'
export const exchangeHref = (exchangeId: string) => `/api/v1/exchanges/${exchangeId}`

const maybe = Type.Union([Type.String({ maxLength: 255 }), Type.Null()])

export function exchangeProcess(timing: ExchangeTiming) {
  return defineProcess<ExchangeInstance, ExchangeFact, ExchangeCommand, ExchangeRecord>({
    type: exchangeProcessType,
    description:
      'An exchange: replacements reserved, a rise charged, the goods received and restocked, a fall refunded, shipped',
    states: exchangeStatuses,
    finalStates: ['completed', 'failed'],
    steps: exchangeSteps(timing),
    // nothing moves an exchange but the answers to its own commands and the receipt
    events: {},
    answers: {
      'inventory.reserved': 'fact',
      'inventory.failed': 'fact',
      'payment.processed': 'fact',
      'payment.failed': 'fact',
      'inventory.restocked.v2': 'fact',
      'payment.refunded': 'fact',
      // a declined refund of a price fall: a failed attempt, counted by the module
      'payment.refund_failed.v2': { failed: (data) => data.reason },
      'shipment.created': 'fact',
      'inventory.released': 'fact',
    },
    decide: decideExchange,
    mechanics: exchangeMechanics,
    // the ids its steps answered with; the amounts are the exchange's row's
    data: Type.Object({ reservationId: maybe, shipmentId: maybe }),
    fromOwner: ({ chargeCents, refundCents }) => ({ chargeCents, refundCents }),
    commandEvent: exchangeCommandEvent,
    // every event of it in its order's partition, beside the order's own
    aggregateId: ({ owner }) => owner.orderId,
    owner: {
      select: exchangeOwnerRow,
      read: readExchangeRow,
      write: (key, owner, next, sql) =>
        next.state === owner.status && next.failureReason === owner.failureReason
          ? null
          : writeExchange(key, { status: next.state, failureReason: next.failureReason }, sql),
    },
    links: (key) => ({ exchange: { href: exchangeHref(key), method: 'GET' } }),
  })
}
