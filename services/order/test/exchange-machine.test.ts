// An exchange's decision on its own (domain/exchange-machine.ts, no I/O), as the module takes it (decideOn): reserved →
// charged (a rise) → received → restocked → refunded (a fall) → shipped; no stock or a declined rise fails it and the
// compensations run in reverse order (the charge refunded, the stock released); the receipt's wait escalates and an
// operator's retry asks again; an operator's cancel before receipt, refused after; answers not awaited and late ones.
import { decideOn, ProcessConflict, type StandardFact } from '@meridian/process'
import { describe, expect, it } from 'vitest'
import {
  type ExchangeFact,
  type ExchangeInstance,
  type ExchangeTiming,
  requestedExchange,
} from '../src/domain/exchange-machine.ts'
import { exchangeProcess } from '../src/domain/exchange-process.ts'

const timing: ExchangeTiming = { stepTimeoutMs: 1000, stepAttempts: 2, receiptWaitMs: 60_000 }
const declared = exchangeProcess(timing)
type AnyFact = ExchangeFact | StandardFact | { kind: 'operator.compensate'; reason: string }
const decide = (instance: ExchangeInstance, fact: AnyFact) => decideOn(declared, instance, fact)

const start = (amounts: { chargeCents: number; refundCents: number }) =>
  requestedExchange(timing, amounts).next

function run(facts: AnyFact[], from: ExchangeInstance) {
  let instance = from
  const commands: string[] = []
  for (const fact of facts) {
    const decision = decide(instance, fact)
    instance = decision.next
    commands.push(...decision.commands.map((command) => command.type))
  }
  return { instance, commands }
}

const reserved: ExchangeFact = { kind: 'inventory.reserved', reservationId: 'res-1' }
const charged: ExchangeFact = { kind: 'payment.processed', paymentId: 'pay-1' }
const received: ExchangeFact = { kind: 'received' }
const restocked: ExchangeFact = { kind: 'inventory.restocked.v2' }
const shipped: ExchangeFact = { kind: 'shipment.created', shipmentId: 'ship-1' }

describe("an exchange's decision", () => {
  it('when it is requested, then exchange.requested goes out and its replacements are reserved, with a deadline', () => {
    const decision = requestedExchange(timing, { chargeCents: 0, refundCents: 0 })
    expect(decision).toMatchObject({ next: { state: 'requested', step: 'reserve' }, deadlineInMs: 1000 })
    expect(decision.commands).toEqual([
      { type: 'exchange.requested' },
      { type: 'inventory.reservation_requested', attempt: 1 },
    ])
  })

  it('when the replacements cost more, then it reserves, charges, waits for the goods, restocks and ships', () => {
    const { instance, commands } = run(
      [reserved, charged, received, restocked, shipped],
      start({ chargeCents: 450, refundCents: 0 }),
    )
    expect(instance).toMatchObject({
      state: 'completed',
      step: null,
      reservationId: 'res-1',
      shipmentId: 'ship-1',
    })
    expect(commands).toEqual([
      'payment.requested',
      'exchange.awaiting_goods',
      'inventory.restock_requested.v2',
      'shipment.requested',
      'exchange.completed',
    ])
  })

  it('when they cost less, then nothing is charged and the fall is refunded after the restock; the same price asks neither', () => {
    const falling = run(
      [reserved, received, restocked, { kind: 'payment.refunded', amount: 15.5 }, shipped],
      start({ chargeCents: 0, refundCents: 1550 }),
    )
    expect(falling.instance.state).toBe('completed')
    expect(falling.commands).toEqual([
      'exchange.awaiting_goods',
      'inventory.restock_requested.v2',
      'payment.refund_requested',
      'shipment.requested',
      'exchange.completed',
    ])
    const even = run([reserved, received, restocked, shipped], start({ chargeCents: 0, refundCents: 0 }))
    expect(even.commands).not.toContain('payment.requested')
    expect(even.commands).not.toContain('payment.refund_requested')
    expect(even.instance.state).toBe('completed')
  })

  it('when the replacement is out of stock, then it fails at once and its compensations run: the charge (none) refunded, then the stock released', () => {
    const failed = decide(start({ chargeCents: 450, refundCents: 0 }), {
      kind: 'inventory.failed',
      reason: 'no stock',
    })
    expect(failed.next).toMatchObject({
      state: 'failed',
      failedStep: 'reserve',
      compensation: 'running',
      step: 'refund_charge',
    })
    expect(failed.commands.map((command) => command.type)).toEqual(['exchange.failed', 'refund_charge'])
    const { instance, commands } = run(
      [{ kind: 'payment.refunded', amount: 0 }, { kind: 'inventory.released' }],
      failed.next,
    )
    expect(commands).toEqual(['inventory.release_requested'])
    expect(instance).toMatchObject({ state: 'failed', compensation: 'done', step: null })
  })

  it('when the rise is declined, then it fails at the charge and releases the held replacement', () => {
    const { instance, commands } = run(
      [reserved, { kind: 'payment.failed', reason: 'card declined' }],
      start({ chargeCents: 450, refundCents: 0 }),
    )
    expect(instance).toMatchObject({ state: 'failed', failedStep: 'charge', failureReason: 'card declined' })
    expect(commands).toEqual(['payment.requested', 'exchange.failed', 'refund_charge'])
  })

  it('when the goods do not come in time, then it is escalated where it stands; a retry asks again and a late receipt goes on', () => {
    const waiting = run([reserved], start({ chargeCents: 0, refundCents: 0 })).instance
    expect(decide(waiting, received).deadlineInMs).toBe(1000)
    const escalated = decide(waiting, { kind: 'timeout' })
    expect(escalated.next).toMatchObject({ state: 'awaiting_goods', step: 'receipt', escalated: true })
    expect(escalated.escalation).toEqual(expect.stringContaining('receipt'))
    const retried = decide(escalated.next, { kind: 'operator.retry' })
    expect(retried.next).toMatchObject({ step: 'receipt', attempt: 1, escalated: false })
    expect(retried.commands).toEqual([{ type: 'exchange.awaiting_goods' }])
    const late = decide(escalated.next, received)
    expect(late.next).toMatchObject({ state: 'received', step: 'restock' })
    expect(late.next.escalated).toBe(false)
  })

  it('when an operator cancels it before receipt, then it fails and compensates; after receipt, or before the goods are held, a receipt or cancel is refused', () => {
    const waiting = run([reserved, charged], start({ chargeCents: 450, refundCents: 0 })).instance
    const cancelled = decide(waiting, { kind: 'operator.compensate', reason: 'asked by the customer' })
    expect(cancelled.next).toMatchObject({ state: 'failed', compensation: 'running', step: 'refund_charge' })
    expect(() => decide(cancelled.next, received)).toThrow(ProcessConflict)
    const inside = decide(waiting, received).next
    expect(() => decide(inside, { kind: 'operator.compensate', reason: 'late' })).toThrow(ProcessConflict)
    expect(() => decide(start({ chargeCents: 0, refundCents: 0 }), received)).toThrow(ProcessConflict)
    // the same receipt twice moves nothing
    expect(decide(inside, received)).toMatchObject({ next: inside, commands: [] })
  })

  it('when an answer is not awaited or comes late, then it moves nothing, and a late reservation after a failure is undone', () => {
    const requested = start({ chargeCents: 450, refundCents: 0 })
    // a reservation seen again while the charge is awaited (inventory answering payment.processed): nothing moves
    const charging = decide(requested, reserved).next
    expect(decide(charging, reserved)).toMatchObject({ next: charging, commands: [] })
    // the reservation arrives after the exchange failed and its compensations finished: they run again
    const failed = run(
      [
        { kind: 'timeout' },
        { kind: 'timeout' },
        { kind: 'payment.refunded', amount: 0 },
        { kind: 'inventory.released' },
      ],
      requested,
    ).instance
    expect(failed).toMatchObject({ state: 'failed', compensation: 'done', failedStep: 'reserve' })
    const late = decide(failed, reserved)
    expect(late.next).toMatchObject({
      compensation: 'running',
      step: 'refund_charge',
      reservationId: 'res-1',
    })
  })
})
