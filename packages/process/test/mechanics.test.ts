// The step mechanics every process shares (stepMechanics), as the pure functions they are: no database, no clock.
import { describe, expect, it } from 'vitest'
import { type InstanceBase, ProcessConflict, type Steps } from '../src/definition.ts'
import { compensationOrderOf, stepMechanics } from '../src/mechanics.ts'

interface Instance extends InstanceBase {
  state: 'running' | 'failed' | 'done'
  step: 'fetch' | 'store' | 'unstore' | 'unfetch' | null
}
type Command = { type: string; attempt: number }

const steps: Steps<Instance, Command> = {
  fetch: {
    kind: 'forward',
    deadlineMs: 100,
    attempts: 3,
    compensation: 'unfetch',
    ask: (_, attempt) => ({ type: 'fetch', attempt }),
  },
  store: {
    kind: 'forward',
    deadlineMs: 100,
    attempts: 2,
    backoff: 'doubling',
    compensation: 'unstore',
    ask: (_, attempt) => ({ type: 'store', attempt }),
  },
  unstore: {
    kind: 'compensation',
    deadlineMs: 50,
    attempts: 2,
    backoff: 'doubling',
    ask: (_, attempt) => ({ type: 'unstore', attempt }),
  },
  unfetch: {
    kind: 'compensation',
    deadlineMs: 50,
    attempts: 2,
    ask: (_, attempt) => ({ type: 'unfetch', attempt }),
  },
}

const instance = (changes: Partial<Instance> = {}): Instance => ({
  state: 'running',
  step: 'fetch',
  attempt: 1,
  compensation: 'none',
  failedStep: null,
  failureReason: null,
  ...changes,
})

const mechanics = stepMechanics(steps, { forwardActive: (each) => each.state === 'running' })

describe('waitMs', () => {
  it('when a step has a fixed wait, then every attempt waits its deadline', () => {
    expect([1, 2, 3].map((attempt) => mechanics.waitMs('fetch', attempt))).toEqual([100, 100, 100])
  })

  it('when a step doubles its wait, then each further attempt waits twice as long', () => {
    expect([1, 2, 3, 4].map((attempt) => mechanics.waitMs('store', attempt))).toEqual([100, 200, 400, 800])
  })

  it('when a step is not declared, then it throws naming it', () => {
    expect(() => mechanics.waitMs('ship', 1)).toThrow("no step 'ship' is declared")
  })
})

describe('ask', () => {
  it('when a step is asked, then it is awaited at attempt 1 with its command, its deadline and a requested line', () => {
    const decision = mechanics.ask(instance({ step: null, attempt: 3 }), 'store', 'first')
    expect(decision).toEqual({
      next: instance({ step: 'store', attempt: 1 }),
      deadlineInMs: 100,
      commands: [{ type: 'store', attempt: 1 }],
      log: [{ step: 'store', outcome: 'requested', attempt: 1, detail: 'first' }],
    })
  })

  it('when an escalated instance is asked a step, then it is no longer escalated', () => {
    const decision = mechanics.ask(instance({ step: 'fetch', attempt: 3, escalated: true }), 'store')
    expect(decision.next).toEqual(instance({ step: 'store', attempt: 1, escalated: false }))
  })
})

describe('answered', () => {
  it('when the awaited step answers, then it succeeded and the next is asked in the instance the move leads to', () => {
    const decision = mechanics.answered(
      instance({ attempt: 2 }),
      'fetch',
      'store',
      { state: 'running' },
      'got it',
    )
    expect(decision).toEqual({
      next: instance({ step: 'store', attempt: 1 }),
      deadlineInMs: 100,
      commands: [{ type: 'store', attempt: 1 }],
      log: [
        { step: 'fetch', outcome: 'succeeded', attempt: 2, detail: 'got it' },
        { step: 'store', outcome: 'requested', attempt: 1 },
      ],
    })
  })

  it('when an escalated step answers late, then it goes on and is no longer escalated', () => {
    const decision = mechanics.answered(instance({ escalated: true }), 'fetch', 'store')
    expect(decision.next).toEqual(instance({ step: 'store', attempt: 1, escalated: false }))
  })

  it('when a step that is not awaited answers, or the forward steps are over, then only a line is logged', () => {
    for (const before of [instance({ step: 'store' }), instance({ state: 'failed' })]) {
      const decision = mechanics.answered(before, 'fetch', 'store')
      expect(decision).toEqual({
        next: before,
        deadlineInMs: 'keep',
        commands: [],
        log: [{ step: 'fetch', outcome: 'succeeded', detail: 'answered (not awaited)' }],
      })
    }
  })
})

describe('timedOut', () => {
  it('when an attempt times out and attempts remain, then the step is asked again with the next attempt and wait', () => {
    const decision = mechanics.timedOut(instance({ step: 'store', attempt: 1 }))
    expect(decision.next).toEqual(instance({ step: 'store', attempt: 2 }))
    expect(decision.deadlineInMs).toBe(200)
    expect(decision.commands).toEqual([{ type: 'store', attempt: 2 }])
    expect(decision.log).toEqual([
      { step: 'store', outcome: 'timed_out', attempt: 1 },
      { step: 'store', outcome: 'requested', attempt: 2 },
    ])
    expect(decision.escalation).toBeUndefined()
  })

  it('when a forward step times out after its last attempt, then it is escalated where it stands', () => {
    const decision = mechanics.timedOut(instance({ step: 'fetch', attempt: 3 }))
    expect(decision.next).toEqual(instance({ step: 'fetch', attempt: 3, escalated: true }))
    expect(decision.deadlineInMs).toBeNull()
    expect(decision.commands).toEqual([])
    expect(decision.log.map((line) => line.outcome)).toEqual(['timed_out', 'escalated'])
    expect(decision.escalation).toBe('the fetch step did not answer after 3 attempts')
  })

  it('when a compensation times out after its last attempt, then its compensation is escalated', () => {
    const decision = mechanics.timedOut(
      instance({ state: 'failed', step: 'unfetch', attempt: 2, compensation: 'running' }),
    )
    expect(decision.next.compensation).toBe('escalated')
    expect(decision.next.escalated).toBeUndefined()
    expect(decision.deadlineInMs).toBeNull()
    expect(decision.escalation).toBe('the unfetch compensation did not answer after 2 attempts')
  })

  it('when a forward step declared to fail is exhausted, then the process fails as it says and its compensations start, after the timeout line', () => {
    const failing = stepMechanics(
      { ...steps, fetch: { ...steps.fetch, exhausted: 'fail' } } as Steps<Instance, Command>,
      {
        failed: (each, step, reason) => ({
          next: { ...each, state: 'failed' as const, failedStep: step, failureReason: reason },
          commands: [{ type: 'failed', attempt: 1 }],
        }),
      },
    )
    const decision = failing.timedOut(instance({ step: 'fetch', attempt: 3 }))
    expect(decision.next).toMatchObject({
      state: 'failed',
      failedStep: 'fetch',
      failureReason: 'no answer from the fetch step after 3 attempts',
      step: 'unstore',
      compensation: 'running',
    })
    expect(decision.escalation).toBeUndefined()
    expect(decision.commands).toEqual([
      { type: 'failed', attempt: 1 },
      { type: 'unstore', attempt: 1 },
    ])
    expect(decision.log).toEqual([
      { step: 'fetch', outcome: 'timed_out', attempt: 3 },
      { step: 'fetch', outcome: 'failed', detail: 'no answer from the fetch step after 3 attempts' },
      { step: 'unstore', outcome: 'requested', attempt: 1 },
    ])
  })

  it('when a process with no compensation fails, then the failure is recorded and nothing is awaited', () => {
    const bare = stepMechanics<Instance, Command>({
      fetch: { ...steps.fetch, compensation: undefined },
    } as Steps<Instance, Command>)
    const decision = bare.fail(instance({ step: 'fetch', attempt: 2 }), 'fetch', 'gone')
    expect(decision).toEqual({
      next: instance({ step: null, attempt: 1, failedStep: 'fetch', failureReason: 'gone' }),
      deadlineInMs: null,
      commands: [],
      log: [{ step: 'fetch', outcome: 'failed', detail: 'gone' }],
    })
  })

  it('when the forward steps are over, nothing is awaited or the step is escalated, then a timeout changes nothing', () => {
    for (const over of [
      instance({ state: 'failed', step: 'fetch' }),
      instance({ step: null }),
      instance({ step: 'fetch', attempt: 3, escalated: true }),
      instance({ state: 'failed', step: 'unstore', compensation: 'escalated' }),
    ]) {
      const decision = mechanics.timedOut(over)
      expect(decision.next).toEqual(over)
      expect(decision.commands).toEqual([])
      expect(decision.log).toEqual([])
      expect(decision.deadlineInMs).toBeNull()
    }
  })
})

describe('attemptFailed', () => {
  it('when an attempt fails and attempts remain, then the instance keeps waiting for the clock to ask again', () => {
    const waiting = instance({ step: 'store', attempt: 1 })
    const decision = mechanics.attemptFailed(waiting, 'store', 'declined')
    expect(decision).toEqual({
      next: waiting,
      deadlineInMs: 'keep',
      commands: [],
      log: [{ step: 'store', outcome: 'failed', attempt: 1, detail: 'declined' }],
    })
  })

  it('when the last attempt fails, then the step is escalated with the answer as the reason', () => {
    const decision = mechanics.attemptFailed(instance({ step: 'store', attempt: 2 }), 'store', 'declined')
    expect(decision.next.escalated).toBe(true)
    expect(decision.deadlineInMs).toBeNull()
    expect(decision.log.map((line) => line.outcome)).toEqual(['failed', 'escalated'])
    expect(decision.escalation).toBe('the store step failed after 2 attempts: declined')
  })

  it('when a failure answers a step that is not awaited, then it is only logged', () => {
    for (const notAwaiting of [
      instance({ step: 'fetch' }),
      instance({ step: 'store', attempt: 2, escalated: true }),
      instance({ state: 'failed', step: 'store', attempt: 2 }),
      instance({ state: 'failed', step: 'unstore', attempt: 2, compensation: 'escalated' }),
    ]) {
      const step = notAwaiting.step === 'unstore' ? 'unstore' : 'store'
      const decision = mechanics.attemptFailed(notAwaiting, step, 'late')
      expect(decision.next).toEqual(notAwaiting)
      expect(decision.deadlineInMs).toBe('keep')
      expect(decision.commands).toEqual([])
      expect(decision.escalation).toBeUndefined()
      expect(decision.log).toEqual([{ step, outcome: 'failed', detail: 'late (not awaited)' }])
    }
  })
})

describe('retried', () => {
  it("when an operator retries an awaited step, then it is asked at the next attempt with that attempt's wait", () => {
    const decision = mechanics.retried(instance({ step: 'store', attempt: 1 }))
    expect(decision.next).toEqual(instance({ step: 'store', attempt: 2 }))
    expect(decision.deadlineInMs).toBe(200)
    expect(decision.commands).toEqual([{ type: 'store', attempt: 2 }])
    expect(decision.log).toEqual([
      { step: 'store', outcome: 'operator', attempt: 2, detail: 'retried by an operator' },
    ])
  })

  it('when an operator retries an escalated step, then its attempts start over at 1 and it is no longer escalated', () => {
    const decision = mechanics.retried(instance({ step: 'fetch', attempt: 3, escalated: true }))
    expect(decision.next).toEqual(instance({ step: 'fetch', attempt: 1, escalated: false }))
    expect(decision.commands).toEqual([{ type: 'fetch', attempt: 1 }])
    expect(decision.deadlineInMs).toBe(100)
  })

  it('when an operator retries an escalated compensation, then it runs again from attempt 1', () => {
    const decision = mechanics.retried(
      instance({ state: 'failed', step: 'unstore', attempt: 2, compensation: 'escalated' }),
    )
    expect(decision.next.compensation).toBe('running')
    expect(decision.next.attempt).toBe(1)
    expect(decision.commands).toEqual([{ type: 'unstore', attempt: 1 }])
    expect(decision.deadlineInMs).toBe(50)
  })

  it('when nothing is awaited or the compensations are done, then a retry is refused with ProcessConflict', () => {
    const custom = stepMechanics(steps, { noun: 'the widget' })
    expect(() => custom.retried(instance({ state: 'done', step: null }))).toThrow(
      new ProcessConflict('the widget waits for no step (done)'),
    )
    expect(() =>
      mechanics.retried(instance({ state: 'failed', step: 'unfetch', compensation: 'done' })),
    ).toThrow(ProcessConflict)
  })

  it('when the forward steps are over, then a retry of a forward step is refused with ProcessConflict', () => {
    expect(() => mechanics.retried(instance({ state: 'failed', step: 'store' }))).toThrow(
      new ProcessConflict('the process failed: its forward steps are over'),
    )
  })
})

describe('compensations', () => {
  const failed = instance({ state: 'failed', step: 'store', attempt: 2 })

  it('when the compensations are declared beside the forward steps, then they run in the reverse order of those steps', () => {
    expect(compensationOrderOf(steps)).toEqual(['unstore', 'unfetch'])
  })

  it('when the compensations start, then the first of their order is asked after the commands given', () => {
    const started = mechanics.startCompensations(failed, [{ type: 'failed', attempt: 1 }])
    expect(started).toEqual({
      next: { ...failed, compensation: 'running', step: 'unstore', attempt: 1 },
      deadlineInMs: 50,
      commands: [
        { type: 'failed', attempt: 1 },
        { type: 'unstore', attempt: 1 },
      ],
      log: [{ step: 'unstore', outcome: 'requested', attempt: 1 }],
    })
  })

  it('when the compensations start after a forward step was escalated, then the instance is no longer escalated', () => {
    const started = mechanics.startCompensations({ ...failed, escalated: true })
    expect(started.next).toMatchObject({ step: 'unstore', compensation: 'running', escalated: false })
  })

  it('when no compensation is declared, then starting them throws', () => {
    const bare = stepMechanics<Instance, Command>({
      fetch: { ...steps.fetch, compensation: undefined },
    } as Steps<Instance, Command>)
    expect(() => bare.startCompensations(failed)).toThrow('no compensation to start')
  })

  it('when the awaited compensation answers, then the next of the order is asked', () => {
    const running = instance({ state: 'failed', step: 'unstore', attempt: 2, compensation: 'running' })
    const decision = mechanics.compensated(running, 'unstore', 'unstored')
    expect(decision.next).toEqual({ ...running, step: 'unfetch', attempt: 1 })
    expect(decision.deadlineInMs).toBe(50)
    expect(decision.commands).toEqual([{ type: 'unfetch', attempt: 1 }])
    expect(decision.log).toEqual([
      { step: 'unstore', outcome: 'succeeded', attempt: 2, detail: 'unstored' },
      { step: 'unfetch', outcome: 'requested', attempt: 1 },
    ])
  })

  it('when the last compensation answers, then the compensations are done and nothing is awaited', () => {
    const running = instance({ state: 'failed', step: 'unfetch', attempt: 1, compensation: 'running' })
    const decision = mechanics.compensated(running, 'unfetch', 'unfetched')
    expect(decision.next).toEqual({ ...running, step: null, attempt: 1, compensation: 'done' })
    expect(decision.deadlineInMs).toBeNull()
    expect(decision.commands).toEqual([])
  })

  it('when a forward step succeeds after the process failed and its compensation is still to come, then it is only logged', () => {
    const running = instance({ state: 'failed', step: 'unstore', attempt: 2, compensation: 'running' })
    // fetch's compensation (unfetch) comes after unstore: it covers the late fetch
    expect(mechanics.lateSucceeded(running, 'fetch', 'fetched late')).toEqual({
      next: running,
      deadlineInMs: 'keep',
      commands: [],
      log: [{ step: 'fetch', outcome: 'late', detail: 'fetched late' }],
    })
  })

  it('when a forward step succeeds late and its compensation ran already (or none ran), then the compensations run again from the first', () => {
    for (const late of [
      instance({ state: 'failed', step: 'unfetch', compensation: 'running' }),
      instance({ state: 'failed', step: null, compensation: 'done' }),
    ]) {
      const decision = mechanics.lateSucceeded(late, 'store', 'stored late')
      expect(decision.next).toMatchObject({ step: 'unstore', attempt: 1, compensation: 'running' })
      expect(decision.commands).toEqual([{ type: 'unstore', attempt: 1 }])
      expect(decision.log).toEqual([
        { step: 'store', outcome: 'late', detail: 'stored late' },
        { step: 'unstore', outcome: 'requested', attempt: 1, detail: 'compensations run again' },
      ])
    }
  })

  it('when a forward step that no compensation undoes succeeds late, then it is escalated with what operators must do', () => {
    const bare = stepMechanics<Instance, Command>({
      ...steps,
      fetch: { ...steps.fetch, compensation: undefined },
    } as Steps<Instance, Command>)
    const failed = instance({ state: 'failed', step: null, compensation: 'done' })
    const decision = bare.lateSucceeded(failed, 'fetch', 'fetched late', 'take it back by hand')
    expect(decision).toMatchObject({
      next: { compensation: 'escalated' },
      deadlineInMs: null,
      commands: [],
      escalation: 'take it back by hand',
    })
    expect(bare.lateSucceeded(failed, 'fetch', 'x').escalation).toBe(
      'the fetch step succeeded after the process failed: no compensation undoes it',
    )
  })

  it('when an answer is not the awaited compensation, then nothing changes but a line in the log', () => {
    for (const other of [
      instance({ state: 'failed', step: 'unstore', compensation: 'running' }),
      instance({ state: 'failed', step: null, compensation: 'done' }),
      instance({ step: 'fetch' }),
    ]) {
      const decision = mechanics.compensated(other, 'unfetch', 'unfetched')
      expect(decision.next).toEqual(other)
      expect(decision.deadlineInMs).toBe('keep')
      expect(decision.commands).toEqual([])
      expect(decision.log).toEqual([
        { step: 'unfetch', outcome: 'succeeded', detail: 'unfetched (not awaited)' },
      ])
    }
  })
})
