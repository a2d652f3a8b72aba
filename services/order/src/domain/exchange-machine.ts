// An exchange's state machine, pure: the replacements reserved (no stock: the exchange fails, nothing charged), a
// price rise charged, the returned goods received (a person's act: its wait escalates), their stock back, a price
// fall refunded on the order, the replacements shipped. Each step's deadline, attempts, exhaustion and compensation
// are declared beside it (exchangeSteps) and run by the module; decide reads as the happy path. A failure before
// receipt (no stock, a declined charge, an operator) undoes what was done in reverse order: the charge refunded, the
// held stock released. exchange-commands.ts says what each command goes out as, exchange-process.ts declares it.
import type { ExchangeStatus } from '@meridian/contracts'
import {
  type Decision,
  type InstanceBase,
  type MechanicsOptions,
  newInstance,
  type OwnFact,
  ProcessConflict,
  type StepMechanics,
  type Steps,
  stepMechanics,
  unchanged,
} from '@meridian/process'

export interface ExchangeInstance extends InstanceBase {
  state: ExchangeStatus
  reservationId: string | null
  shipmentId: string | null
  /** the price rise to charge and the fall to refund, in cents (from the exchange's row) */
  chargeCents: number
  refundCents: number
}

export type ExchangeFact =
  | { kind: 'inventory.reserved'; reservationId: string }
  | { kind: 'inventory.failed'; reason: string }
  | { kind: 'payment.processed'; paymentId: string }
  | { kind: 'payment.failed'; reason: string }
  | { kind: 'received' }
  | { kind: 'inventory.restocked.v2' }
  | { kind: 'payment.refunded'; amount: number }
  | { kind: 'shipment.created'; shipmentId: string }
  | { kind: 'inventory.released' }

type News = 'exchange.requested' | 'exchange.awaiting_goods' | 'exchange.completed' | 'exchange.failed'
export type ExchangeRequest =
  | 'inventory.reservation_requested'
  | 'payment.requested'
  | 'inventory.restock_requested.v2'
  | 'payment.refund_requested'
  | 'shipment.requested'
  | 'inventory.release_requested'
  | 'refund_charge'
export type ExchangeCommand = { type: News } | { type: ExchangeRequest; attempt: number }

export interface ExchangeTiming {
  /** how long a step may go unanswered before it is asked again, ms (doubled each attempt) */
  stepTimeoutMs: number
  /** attempts of a step before it fails (before receipt) or is escalated (after) */
  stepAttempts: number
  /** how long the returned goods may take to arrive before operators are told, ms */
  receiptWaitMs: number
}

/**
 * The steps, in their order. Before receipt a step's exhaustion fails the exchange and the compensations declared
 * beside the reservation and the charge run (the charge refunded, then the stock released); the receipt is a
 * person's act, escalated when its wait passes; after receipt nothing is undone: a step that keeps failing is
 * escalated.
 */
export function exchangeSteps(timing: ExchangeTiming): Steps<ExchangeInstance, ExchangeCommand> {
  const step = (type: ExchangeRequest, more: { exhausted?: 'fail'; compensation?: string } = {}) => ({
    kind: 'forward' as const,
    deadlineMs: timing.stepTimeoutMs,
    attempts: timing.stepAttempts,
    backoff: 'doubling' as const,
    ...more,
    ask: (_instance: ExchangeInstance, attempt: number): ExchangeCommand => ({ type, attempt }),
  })
  const compensation = (type: ExchangeRequest) => ({ ...step(type), kind: 'compensation' as const })
  return {
    reserve: step('inventory.reservation_requested', { exhausted: 'fail', compensation: 'release' }),
    charge: step('payment.requested', { exhausted: 'fail', compensation: 'refund_charge' }),
    receipt: {
      kind: 'forward',
      deadlineMs: timing.receiptWaitMs,
      attempts: 1,
      ask: () => ({ type: 'exchange.awaiting_goods' }),
    },
    restock: step('inventory.restock_requested.v2'),
    refund: step('payment.refund_requested'),
    ship: step('shipment.requested'),
    refund_charge: compensation('refund_charge'),
    release: compensation('inventory.release_requested'),
  }
}

/** What the module's step mechanics know of an exchange: its steps run until it completes or fails. */
export const exchangeMechanics: MechanicsOptions<ExchangeInstance, ExchangeCommand> = {
  noun: 'the exchange',
  forwardActive: (instance) => instance.state !== 'completed' && instance.state !== 'failed',
  failed: (instance, failedStep, reason) => ({
    next: { ...instance, state: 'failed', failedStep, failureReason: reason },
    commands: [{ type: 'exchange.failed' }],
  }),
}

/** An exchange just requested: exchange.requested goes out and its replacements are reserved. */
export function requestedExchange(
  timing: ExchangeTiming,
  amounts: Pick<ExchangeInstance, 'chargeCents' | 'refundCents'>,
): Decision<ExchangeInstance, ExchangeCommand> {
  const instance = newInstance<ExchangeInstance>({
    state: 'requested',
    reservationId: null,
    shipmentId: null,
    ...amounts,
  })
  const asked = stepMechanics(exchangeSteps(timing), exchangeMechanics).ask(instance, 'reserve')
  return { ...asked, commands: [{ type: 'exchange.requested' }, ...asked.commands] }
}

/** The decision on an exchange's own facts and an operator's compensate: pure, the module's moves given. */
export function decideExchange(
  instance: ExchangeInstance,
  fact: OwnFact<ExchangeFact>,
  mechanics: StepMechanics<ExchangeInstance, ExchangeCommand>,
): Decision<ExchangeInstance, ExchangeCommand> {
  /** A failure answer of `step`: the exchange fails while it awaits it (a later one is only logged). */
  const failed = (step: string, reason: string) =>
    instance.step === step && exchangeMechanics.forwardActive?.(instance)
      ? mechanics.fail(instance, step, reason)
      : unchanged<ExchangeInstance, ExchangeCommand>(instance, {
          step,
          outcome: 'failed',
          detail: `${reason} (not awaited)`,
        })
  const awaitingGoods = { state: 'awaiting_goods' as const }
  switch (fact.kind) {
    case 'inventory.reserved': {
      const held = { reservationId: fact.reservationId }
      // a reservation that comes after the exchange failed is undone by the release still to come, or again
      if (instance.state === 'failed')
        return mechanics.lateSucceeded({ ...instance, ...held }, 'reserve', fact.reservationId)
      return instance.chargeCents > 0
        ? mechanics.answered(instance, 'reserve', 'charge', held, fact.reservationId)
        : mechanics.answered(
            instance,
            'reserve',
            'receipt',
            { ...held, ...awaitingGoods },
            fact.reservationId,
          )
    }
    case 'inventory.failed':
      return failed('reserve', fact.reason)
    case 'payment.processed':
      if (instance.state === 'failed') return mechanics.lateSucceeded(instance, 'charge', fact.paymentId)
      return mechanics.answered(instance, 'charge', 'receipt', awaitingGoods, fact.paymentId)
    case 'payment.failed':
      return failed('charge', fact.reason)
    case 'received':
      if (instance.state === 'received' || instance.state === 'completed')
        return unchanged(instance, { step: 'receipt', outcome: 'late', detail: 'received again' })
      if (instance.state !== 'awaiting_goods')
        throw new ProcessConflict(`the exchange is ${instance.state}: its goods cannot be received`)
      return mechanics.answered(instance, 'receipt', 'restock', { state: 'received' }, 'received')
    case 'inventory.restocked.v2':
      return mechanics.answered(instance, 'restock', instance.refundCents > 0 ? 'refund' : 'ship')
    case 'payment.refunded':
      // the price fall's refund, or the compensation's refund of the charge
      if (instance.step === 'refund_charge')
        return mechanics.compensated(instance, 'refund_charge', 'refunded')
      return mechanics.answered(instance, 'refund', 'ship', {}, fact.amount.toFixed(2))
    case 'inventory.released':
      return mechanics.compensated(instance, 'release', 'released')
    case 'shipment.created':
      if (instance.step !== 'ship' || instance.state !== 'received')
        return unchanged(instance, { step: 'ship', outcome: 'succeeded', detail: 'not awaited' })
      return {
        next: { ...instance, state: 'completed', step: null, attempt: 1, shipmentId: fact.shipmentId },
        deadlineInMs: null,
        commands: [{ type: 'exchange.completed' }],
        log: [{ step: 'ship', outcome: 'succeeded', attempt: instance.attempt, detail: fact.shipmentId }],
      }
    case 'operator.compensate':
      // before receipt an operator may cancel it (what was done is undone); once the goods are back, nothing is
      if (instance.state !== 'requested' && instance.state !== 'awaiting_goods')
        throw new ProcessConflict(`the exchange is ${instance.state}: it can no longer be cancelled`)
      return mechanics.fail(instance, instance.step ?? 'exchange', `cancelled by an operator: ${fact.reason}`)
  }
}
