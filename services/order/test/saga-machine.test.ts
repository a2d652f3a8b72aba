// The saga's state machine on its own (domain/saga-machine.ts): every move, the order status that goes with it, the
// commands sent, the retries and their limits, the compensations in reverse order, late and out-of-order events.
import { decideOn, ProcessConflict, type StandardFact } from '@meridian/process'
import { describe, expect, it } from 'vitest'
import { type SagaFact, type SagaInstance, type SagaTiming, sagaStarted } from '../src/domain/saga-machine.ts'
import { orderProcess } from '../src/domain/saga-process.ts'

const timing: SagaTiming = {
  stepTimeoutMs: 1000,
  stepAttempts: 3,
  compensationBackoffMs: 500,
  compensationAttempts: 3,
}
const declared = orderProcess(timing)
/** The saga's decision as the module takes it: its own facts by saga-machine.ts, a deadline or a retry by the module. */
const decide = (instance: SagaInstance, fact: SagaFact | StandardFact, _timing: SagaTiming) =>
  decideOn(declared, instance, fact)

const placed: SagaInstance = sagaStarted(timing).next

/** The instance after each fact in turn, and every command sent on the way. */
function run(facts: SagaFact[], from: SagaInstance = placed) {
  let instance = from
  const commands: string[] = []
  for (const fact of facts) {
    const decision = decide(instance, fact, timing)
    instance = decision.next
    commands.push(...decision.commands.map((command) => command.type))
  }
  return { instance, commands }
}

const paid: SagaFact = { kind: 'payment.processed', paymentId: 'pay-1' }
const reserved: SagaFact = { kind: 'inventory.reserved', reservationId: 'res-1' }
const shipped: SagaFact = { kind: 'shipment.created', shipmentId: 'shp-1' }
const released: SagaFact = { kind: 'inventory.released', reservationId: 'res-1' }
const refunded: SagaFact = { kind: 'payment.refunded', paymentId: 'pay-1', amount: 10 }

describe('the forward steps', () => {
  it('when payment, reservation and shipment answer in turn, then created -> payment_processed -> inventory_reserved -> shipped, the order placed -> paid -> reserved -> shipped, and delivered completes it', () => {
    const afterPayment = decide(placed, paid, timing)
    expect(afterPayment.next).toMatchObject({
      state: 'payment_processed',
      step: 'inventory',
      attempt: 1,
      orderStatus: 'paid',
      paymentId: 'pay-1',
    })
    expect(afterPayment.deadlineInMs).toBe(1000)
    expect(afterPayment.commands).toEqual([])

    // the shipment step is the saga's to start: reaching inventory_reserved asks shipping for the shipment
    const afterReservation = decide(afterPayment.next, reserved, timing)
    expect(afterReservation.next).toMatchObject({ state: 'inventory_reserved', step: 'shipment' })
    expect(afterReservation.commands).toEqual([{ type: 'shipment.requested', attempt: 1 }])

    const afterShipment = run([paid, reserved, shipped])
    expect(afterShipment.instance).toMatchObject({
      state: 'shipped',
      step: null,
      orderStatus: 'shipped',
      reservationId: 'res-1',
      shipmentId: 'shp-1',
    })
    expect(afterShipment.commands).toEqual(['shipment.requested'])

    const delivered = run([paid, reserved, shipped, { kind: 'shipment.delivered', shipmentId: 'shp-1' }])
    expect(delivered.instance.orderStatus).toBe('delivered')
    expect(delivered.commands).toEqual(['shipment.requested', 'order.completed'])
    // delivered again (a second delivery event) completes nothing twice
    const again = decide(delivered.instance, { kind: 'shipment.delivered', shipmentId: 'shp-1' }, timing)
    expect(again.commands).toEqual([])
    expect(again.next.orderStatus).toBe('delivered')
  })

  it('when a later step answers before an earlier one (different topics), then the saga moves as far as it proves, and the earlier answer only records its id', () => {
    const reservedFirst = decide(placed, reserved, timing)
    expect(reservedFirst.next).toMatchObject({
      state: 'inventory_reserved',
      step: 'shipment',
      orderStatus: 'reserved',
    })
    expect(reservedFirst.commands).toEqual([{ type: 'shipment.requested', attempt: 1 }])
    const thenPaid = decide(reservedFirst.next, paid, timing)
    expect(thenPaid.next).toMatchObject({ state: 'inventory_reserved', step: 'shipment', paymentId: 'pay-1' })
    expect(thenPaid.deadlineInMs).toBe('keep')
    // a second reservation event asks for nothing more
    expect(decide(thenPaid.next, reserved, timing).commands).toEqual([])
  })

  it('when the payment is declined, then failed with the order payment_failed and nothing to undo (no command)', () => {
    const decision = decide(placed, { kind: 'payment.failed', reason: 'card declined' }, timing)
    expect(decision.next).toMatchObject({
      state: 'failed',
      step: null,
      compensation: 'none',
      failedStep: 'payment',
      failureReason: 'card declined',
      orderStatus: 'payment_failed',
    })
    expect(decision.commands).toEqual([])
    expect(decision.deadlineInMs).toBeNull()
  })

  it('when an order whose payment failed is paid (POST /payments), then the saga goes on: paid, the inventory step with its deadline, then the shipment', () => {
    const declined = decide(placed, { kind: 'payment.failed', reason: 'card declined' }, timing).next
    const paidAgain = decide(declined, { kind: 'payment.processed', paymentId: 'pay-2' }, timing)
    expect(paidAgain.next).toMatchObject({
      state: 'payment_processed',
      step: 'inventory',
      attempt: 1,
      compensation: 'none',
      failedStep: null,
      failureReason: null,
      paymentId: 'pay-2',
      orderStatus: 'paid',
    })
    expect(paidAgain.deadlineInMs).toBe(1000)
    expect(paidAgain.commands).toEqual([])
    expect(paidAgain.log.map((line) => `${line.step} ${line.outcome}`)).toEqual([
      'payment succeeded',
      'inventory started',
    ])
    const onwards = run([reserved, shipped], paidAgain.next)
    expect(onwards.instance).toMatchObject({ state: 'shipped', orderStatus: 'shipped', paymentId: 'pay-2' })
    expect(onwards.commands).toEqual(['shipment.requested'])

    // cancelled after the payment failed: a payment arriving then is undone by the compensations, not shipped
    const abandoned = decide(declined, { kind: 'cancel', reason: 'x' }, timing).next
    const late = decide(abandoned, { kind: 'payment.processed', paymentId: 'pay-3' }, timing)
    expect(late.next).toMatchObject({ state: 'cancelled', compensation: 'running' })
    expect(late.commands.map((command) => command.type)).not.toContain('inventory.reservation_requested')
  })

  it('when stock is short, then failed, order.failed, and the compensations start with the release (the refund follows it)', () => {
    const decision = decide(
      run([paid]).instance,
      { kind: 'inventory.failed', reason: 'out of stock' },
      timing,
    )
    expect(decision.next).toMatchObject({
      state: 'failed',
      step: 'release',
      compensation: 'running',
      failedStep: 'inventory',
      orderStatus: 'failed',
    })
    expect(decision.commands).toEqual([
      { type: 'order.failed', reason: 'out of stock', failedStep: 'inventory' },
      { type: 'inventory.release_requested', attempt: 1, reason: 'out of stock' },
    ])
    const afterRelease = decide(decision.next, { kind: 'inventory.released' }, timing)
    expect(afterRelease.next).toMatchObject({ step: 'refund', attempt: 1, compensation: 'running' })
    expect(afterRelease.commands).toEqual([
      { type: 'payment.refund_requested', attempt: 1, reason: 'out of stock' },
    ])
    const done = decide(afterRelease.next, refunded, timing)
    expect(done.next).toMatchObject({
      step: null,
      compensation: 'done',
      orderStatus: 'failed',
      state: 'failed',
    })
    expect(done.deadlineInMs).toBeNull()
  })
})

describe('3-D Secure: the payment waits for the customer', () => {
  const waiting: SagaFact = {
    kind: 'payment.action_required',
    authenticateUrl: 'https://provider.example/3ds/pi_1',
    expiresAt: '2026-11-29T12:10:00.000Z',
  }

  it('when payment.action_required comes, then the order is payment_action_required with the page, the saga still waits for the payment, and nothing is sent', () => {
    const decision = decide(placed, waiting, timing)
    expect(decision.next).toMatchObject({
      state: 'created',
      step: 'payment',
      attempt: 1,
      orderStatus: 'payment_action_required',
      authenticateUrl: 'https://provider.example/3ds/pi_1',
    })
    expect(decision.deadlineInMs).toBe(1000)
    expect(decision.commands).toEqual([])
    expect(decision.log).toEqual([
      {
        step: 'payment',
        outcome: 'waiting',
        attempt: 1,
        detail: 'authentication asked until 2026-11-29T12:10:00.000Z',
      },
    ])
  })

  it('when the customer takes longer than every attempt of the step, then each answer that it still waits starts the attempts again: the saga never fails while the payment waits', () => {
    let instance = decide(placed, waiting, timing).next
    for (let round = 0; round < 5; round += 1) {
      const timedOut = decide(instance, { kind: 'timeout' }, timing)
      expect(timedOut.commands).toEqual([{ type: 'payment.requested', attempt: 2 }])
      const answered = decide(timedOut.next, waiting, timing)
      expect(answered.next).toMatchObject({ state: 'created', attempt: 1 })
      expect(answered.log).toEqual([])
      instance = answered.next
    }
    expect(instance.orderStatus).toBe('payment_action_required')
  })

  it('when the customer confirms, then the saga goes on to paid; when it is refused or too late, then payment_failed with nothing to undo', () => {
    const confirmed = run([waiting, paid])
    expect(confirmed.instance).toMatchObject({ state: 'payment_processed', orderStatus: 'paid' })
    expect(confirmed.commands).toEqual([])
    const refused = run([waiting, { kind: 'payment.failed', reason: 'authentication failed' }])
    expect(refused.instance).toMatchObject({
      state: 'failed',
      orderStatus: 'payment_failed',
      compensation: 'none',
      failureReason: 'authentication failed',
    })
    expect(refused.commands).toEqual([])
  })

  it('when the customer cancels while the payment waits, then the order is cancelling and the compensations run', () => {
    const decision = decide(
      decide(placed, waiting, timing).next,
      { kind: 'cancel', reason: 'changed my mind' },
      timing,
    )
    expect(decision.next).toMatchObject({
      state: 'cancelled',
      orderStatus: 'cancelling',
      compensation: 'running',
    })
    expect(decision.commands.map((command) => command.type)).toEqual([
      'order.cancelled',
      'inventory.release_requested',
    ])
  })

  it('when payment.action_required comes after the saga moved on, then nothing changes', () => {
    const after = run([paid]).instance
    const decision = decide(after, waiting, timing)
    expect(decision.next).toEqual(after)
    expect(decision.commands).toEqual([])
    expect(decision.log[0]).toMatchObject({ step: 'payment', outcome: 'waiting' })
  })
})

describe('timeouts and retries', () => {
  it('when a step does not answer, then it is asked again with the next attempt until the last, after which the saga fails and compensates', () => {
    const first = decide(placed, { kind: 'timeout' }, timing)
    expect(first.next.attempt).toBe(2)
    expect(first.commands).toEqual([{ type: 'payment.requested', attempt: 2 }])
    expect(first.deadlineInMs).toBe(1000)
    const second = decide(first.next, { kind: 'timeout' }, timing)
    expect(second.commands).toEqual([{ type: 'payment.requested', attempt: 3 }])
    const last = decide(second.next, { kind: 'timeout' }, timing)
    expect(last.next).toMatchObject({
      state: 'failed',
      failedStep: 'payment',
      step: 'release',
      orderStatus: 'failed',
    })
    expect(last.commands.map((command) => command.type)).toEqual([
      'order.failed',
      'inventory.release_requested',
    ])
    expect(last.log[0]).toMatchObject({ step: 'payment', outcome: 'timed_out', attempt: 3 })
  })

  it('when the inventory and shipment steps time out, then their own requests go out', () => {
    expect(decide(run([paid]).instance, { kind: 'timeout' }, timing).commands).toEqual([
      { type: 'inventory.reservation_requested', attempt: 2 },
    ])
    expect(decide(run([paid, reserved]).instance, { kind: 'timeout' }, timing).commands).toEqual([
      { type: 'shipment.requested', attempt: 2 },
    ])
  })

  it('when a compensation does not answer, then it is asked again with a doubled wait, and after its last attempt escalated', () => {
    const failing = decide(
      run([paid]).instance,
      { kind: 'inventory.failed', reason: 'out of stock' },
      timing,
    ).next
    const second = decide(failing, { kind: 'timeout' }, timing)
    expect(second.commands).toEqual([
      { type: 'inventory.release_requested', attempt: 2, reason: 'out of stock' },
    ])
    expect(second.deadlineInMs).toBe(1000)
    const third = decide(second.next, { kind: 'timeout' }, timing)
    expect(third.deadlineInMs).toBe(2000)
    const escalated = decide(third.next, { kind: 'timeout' }, timing)
    expect(escalated.next).toMatchObject({ compensation: 'escalated', step: 'release' })
    expect(escalated.deadlineInMs).toBeNull()
    expect(escalated.escalation).toContain('release')
    expect(escalated.commands).toEqual([])
  })

  it('when an operator retries an escalated compensation, then it runs again from attempt 1; a saga awaiting nothing refuses', () => {
    let instance = decide(
      run([paid]).instance,
      { kind: 'inventory.failed', reason: 'out of stock' },
      timing,
    ).next
    for (let i = 0; i < 3; i++) instance = decide(instance, { kind: 'timeout' }, timing).next
    expect(instance.compensation).toBe('escalated')
    const retried = decide(instance, { kind: 'operator.retry' }, timing)
    expect(retried.next).toMatchObject({ compensation: 'running', attempt: 1, step: 'release' })
    expect(retried.commands).toEqual([
      { type: 'inventory.release_requested', attempt: 1, reason: 'out of stock' },
    ])

    const complete = run([paid, reserved, shipped]).instance
    expect(() => decide(complete, { kind: 'operator.retry' }, timing)).toThrow(/waits for no step/)
  })

  it('when an operator compensates a running saga, then it fails now and compensates; a shipped one refuses', () => {
    const decision = decide(run([paid]).instance, { kind: 'operator.compensate', reason: 'fraud' }, timing)
    expect(decision.next).toMatchObject({ state: 'failed', failedStep: 'inventory', failureReason: 'fraud' })
    expect(decision.commands.map((command) => command.type)).toEqual([
      'order.failed',
      'inventory.release_requested',
    ])
    expect(() =>
      decide(run([paid, reserved, shipped]).instance, { kind: 'operator.compensate', reason: 'x' }, timing),
    ).toThrow(/shipped/)
    expect(() => decide(decision.next, { kind: 'operator.compensate', reason: 'x' }, timing)).toThrow(
      /running/,
    )
  })
})

describe('cancelling', () => {
  it('when the customer cancels before the shipment step, then cancelled, the order cancelling, order.cancelled and the release; the refund after it; then cancelled', () => {
    const decision = decide(run([paid]).instance, { kind: 'cancel', reason: 'changed my mind' }, timing)
    expect(decision.next).toMatchObject({ state: 'cancelled', orderStatus: 'cancelling', step: 'release' })
    expect(decision.commands).toEqual([
      { type: 'order.cancelled', reason: 'changed my mind' },
      { type: 'inventory.release_requested', attempt: 1, reason: 'changed my mind' },
    ])
    const done = run([released, refunded], decision.next)
    expect(done.instance).toMatchObject({
      state: 'cancelled',
      orderStatus: 'cancelled',
      compensation: 'done',
    })
    expect(done.commands).toEqual(['payment.refund_requested'])
  })

  it('when the shipment step has begun (reserved: shipment.requested is out), then a cancel is refused', () => {
    const shipping = run([paid, reserved]).instance
    expect(shipping.state).toBe('inventory_reserved')
    expect(() => decide(shipping, { kind: 'cancel', reason: 'x' }, timing)).toThrow(ProcessConflict)
    // the reservation proved the payment first (topics out of order): refused all the same
    expect(() => decide(run([reserved]).instance, { kind: 'cancel', reason: 'x' }, timing)).toThrow(
      ProcessConflict,
    )
  })

  it('when the order has shipped or is already undone, then a cancel is refused; a payment_failed order may be cancelled', () => {
    expect(() =>
      decide(run([paid, reserved, shipped]).instance, { kind: 'cancel', reason: 'x' }, timing),
    ).toThrow(ProcessConflict)
    const cancelled = decide(placed, { kind: 'cancel', reason: 'x' }, timing).next
    expect(() => decide(cancelled, { kind: 'cancel', reason: 'x' }, timing)).toThrow()
    const declined = decide(placed, { kind: 'payment.failed', reason: 'declined' }, timing).next
    expect(decide(declined, { kind: 'cancel', reason: 'x' }, timing).next.state).toBe('cancelled')
  })
})

describe('late answers', () => {
  it('when a charge succeeds after the compensations finished, then they run again (the refund covers it)', () => {
    const cancelled = run([
      { kind: 'cancel', reason: 'x' },
      { kind: 'inventory.released' },
      refunded,
    ]).instance
    expect(cancelled.compensation).toBe('done')
    const late = decide(cancelled, paid, timing)
    expect(late.next).toMatchObject({ compensation: 'running', step: 'release', state: 'cancelled' })
    expect(late.commands).toEqual([{ type: 'inventory.release_requested', attempt: 1, reason: 'x' }])
    expect(late.log[0]).toMatchObject({ step: 'payment', outcome: 'late' })
  })

  it('when a reservation arrives while the refund runs, then the compensations start over (the stock must go back); a charge arriving then is covered by the refund', () => {
    const refunding = run([{ kind: 'cancel', reason: 'x' }, { kind: 'inventory.released' }]).instance
    expect(refunding.step).toBe('refund')
    expect(decide(refunding, reserved, timing).commands).toEqual([
      { type: 'inventory.release_requested', attempt: 1, reason: 'x' },
    ])
    expect(decide(refunding, paid, timing).commands).toEqual([])
  })

  it('when a shipment is created for a cancelled order, then it is escalated to operators', () => {
    const cancelled = decide(run([paid]).instance, { kind: 'cancel', reason: 'x' }, timing).next
    const late = decide(cancelled, shipped, timing)
    expect(late.next.compensation).toBe('escalated')
    expect(late.escalation).toContain('shp-1')
  })

  it('when a compensation answers that was not awaited (a retry answered twice), then nothing moves', () => {
    const refunding = run([{ kind: 'cancel', reason: 'x' }, { kind: 'inventory.released' }]).instance
    const second = decide(refunding, { kind: 'inventory.released' }, timing)
    expect(second.next).toEqual(refunding)
    expect(second.commands).toEqual([])
  })
})
