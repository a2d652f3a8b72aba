// A return's decision on its own (domain/return-machine.ts, no I/O): requested → received (restock asked) →
// restocked (refund asked) → refunded (completed); rejected before receipt; a receipt twice; answers not awaited; a
// declined refund of this attempt and of an earlier one; the deadline's asks and escalation; an operator's retry and
// compensate.
import { decideOn, ProcessConflict, type StandardFact } from '@meridian/process'
import { describe, expect, it } from 'vitest'
import {
  type ReturnFact,
  type ReturnInstance,
  type ReturnTiming,
  requestedReturn,
} from '../src/domain/return-machine.ts'
import { returnProcess } from '../src/domain/return-process.ts'

const timing: ReturnTiming = { stepTimeoutMs: 1000, stepAttempts: 3 }
const declared = returnProcess(timing)
/** The return's decision as the module takes it: its own facts by decideReturn, a deadline or a retry by the module. */
const decideReturn = (instance: ReturnInstance, fact: ReturnFact | StandardFact, _timing: ReturnTiming) =>
  decideOn(declared, instance, fact)
const requested = requestedReturn('0c5e1f2a-3b4c-4d5e-8f60-718293a4b5c6').next

function run(facts: Parameters<typeof decideReturn>[1][], from: ReturnInstance = requested) {
  let instance = from
  const commands: string[] = []
  for (const fact of facts) {
    const decision = decideReturn(instance, fact, timing)
    instance = decision.next
    commands.push(...decision.commands.map((command) => command.type))
  }
  return { instance, commands }
}

const received: ReturnFact = { kind: 'received' }
const restocked: ReturnFact = { kind: 'inventory.restocked.v2' }

describe("a return's decision", () => {
  it('when it is requested, then return.requested goes out and it waits for its goods without a deadline', () => {
    const decision = requestedReturn('order')
    expect(decision).toMatchObject({ next: { state: 'requested', step: null }, deadlineInMs: null })
    expect(decision.commands).toEqual([{ type: 'return.requested' }])
  })

  it('when received, restocked and refunded, then it asks the restock, then the refund, then completes', () => {
    const { instance, commands } = run([
      received,
      restocked,
      { kind: 'payment.refunded', amount: 23.8, paymentId: 'pay-1' },
    ])
    expect(instance).toMatchObject({ state: 'completed', step: null, paymentId: 'pay-1' })
    expect(commands).toEqual([
      'return.received',
      'inventory.restock_requested.v2',
      'payment.refund_requested',
      'return.completed',
    ])
    const asked = decideReturn(requested, received, timing)
    expect(asked.deadlineInMs).toBe(1000)
  })

  it('when the same receipt comes twice, then the second moves nothing; a rejected return refuses a receipt', () => {
    const once = run([received]).instance
    const twice = decideReturn(once, received, timing)
    expect(twice).toMatchObject({ next: once, commands: [], deadlineInMs: 'keep' })
    const rejected = run([{ kind: 'rejected', reason: 'late' }])
    expect(rejected.instance).toMatchObject({ state: 'rejected', rejectionReason: 'late' })
    expect(rejected.commands).toEqual(['return.rejected'])
    expect(() => decideReturn(rejected.instance, received, timing)).toThrow(ProcessConflict)
    expect(() => decideReturn(once, { kind: 'rejected', reason: 'x' }, timing)).toThrow(ProcessConflict)
  })

  it('when an answer is not awaited, then nothing moves (a refund before the restock, a restock twice)', () => {
    const once = run([received]).instance
    expect(decideReturn(once, { kind: 'payment.refunded', amount: 1 }, timing)).toMatchObject({
      next: once,
      commands: [],
    })
    const refunding = run([restocked], once).instance
    expect(decideReturn(refunding, restocked, timing)).toMatchObject({ next: refunding, commands: [] })
  })

  it("when the refund is declined, then it waits for the next attempt, an earlier attempt's decline counts for nothing, and the last attempt's escalates", () => {
    const refunding = run([received, restocked]).instance
    const declined = decideReturn(refunding, { kind: 'step.failed', step: 'refund', reason: 'no' }, timing)
    expect(declined).toMatchObject({ next: refunding, commands: [], deadlineInMs: 'keep' })
    const second = decideReturn(refunding, { kind: 'timeout' }, timing).next
    expect(second.attempt).toBe(2)
    // a decline is the module's (payment.refund_failed.v2's route says `failed`); one of an earlier attempt is set
    // aside before this (its stamp names the attempt: packages/process/test/answers.test.ts, and returns.test.ts end
    // to end); one of the awaited attempt waits for the next
    const late = decideReturn(second, { kind: 'step.failed', step: 'refund', reason: 'no' }, timing)
    expect(late.next).toBe(second)
    expect(late.escalation).toBeUndefined()
    const third = decideReturn(second, { kind: 'timeout' }, timing).next
    const last = decideReturn(third, { kind: 'step.failed', step: 'refund', reason: 'declined' }, timing)
    expect(last.next.escalated).toBe(true)
    expect(last.escalation).toContain('declined')
    const retried = decideReturn(last.next, { kind: 'operator.retry' }, timing)
    expect(retried.next).toMatchObject({ step: 'refund', attempt: 1 })
    expect(retried.next.escalated).not.toBe(true)
    expect(retried.commands).toEqual([{ type: 'payment.refund_requested', attempt: 1 }])
  })

  it('when an operator compensates, then a requested return is rejected and a received one is refused', () => {
    const compensated = decideReturn(requested, { kind: 'operator.compensate', reason: 'fraud' }, timing)
    expect(compensated.next).toMatchObject({ state: 'rejected', rejectionReason: 'fraud' })
    const once = run([received]).instance
    expect(() => decideReturn(once, { kind: 'operator.compensate', reason: 'x' }, timing)).toThrow(
      ProcessConflict,
    )
  })
})
