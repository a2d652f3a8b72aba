// The step mechanics every process shares, as pure functions over its declared steps: how long an attempt waits, a
// step asked (again) when its deadline passes, what happens once its attempts are spent (a compensation escalates;
// a forward step escalates, or fails the process, as it is declared), an operator's retry, and the compensations
// declared beside the forward steps run one after the other in the reverse order of those steps, each retried and
// escalated on its own. A process's decide() composes these with its own
// moves; the clock's timeouts, operators' retries and failure answers never reach it: decideOn() answers them with the mechanics of the
// process's declared steps, for every process alike.
import type {
  AnyProcessDefinition,
  Decision,
  InstanceBase,
  LogLine,
  MechanicsOptions,
  ProcessDefinition,
  StandardFact,
  StepDeclaration,
  StepFailedFact,
  StepMoves,
  Steps,
} from './definition.ts'
import { ProcessConflict } from './definition.ts'

/** A decision that changes nothing but the log: the instance as it is, its deadline kept, nothing sent. */
export const unchanged = <Instance, Command>(
  instance: Instance,
  ...log: LogLine[]
): Decision<Instance, Command> => ({
  next: instance,
  deadlineInMs: 'keep',
  commands: [],
  log,
})

/** A new instance: its own fields over the module's (no step awaited, attempt 1, nothing compensated or failed). */
export function newInstance<Instance extends InstanceBase>(
  fields: Omit<Instance, keyof InstanceBase> & Pick<Instance, 'state'> & Partial<InstanceBase>,
): Instance {
  return {
    step: null,
    attempt: 1,
    compensation: 'none',
    failedStep: null,
    failureReason: null,
    ...fields,
  } as Instance
}

/** The declaration of `step`; a step the process did not declare is a programming error. */
function declaredIn<Instance, Command>(
  steps: Steps<Instance, Command>,
  step: string,
): StepDeclaration<Instance, Command> {
  const declaration = steps[step]
  if (!declaration) throw new Error(`no step '${step}' is declared`)
  return declaration
}

/** An attempt's wait for its answer: the deadline, doubled for each further attempt with backoff `doubling`. */
function waitIn<Instance, Command>(steps: Steps<Instance, Command>, step: string, attempt: number): number {
  const { deadlineMs, backoff } = declaredIn(steps, step)
  return backoff === 'doubling' ? deadlineMs * 2 ** (attempt - 1) : deadlineMs
}

export function stepMechanics<Instance extends InstanceBase, Command>(
  steps: Steps<Instance, Command>,
  options: MechanicsOptions<Instance, Command> = {},
): StepMoves<Instance, Command> {
  const noun = options.noun ?? 'the process'
  const declared = (step: string): StepDeclaration<Instance, Command> => declaredIn(steps, step)
  const isForward = (step: string | null): step is string =>
    step !== null && declared(step).kind === 'forward'
  const forwardActive = (instance: Instance) => options.forwardActive?.(instance) ?? true
  /**
   * Whether the instance waits for `step`'s answer now: it is the step awaited, and (forward) the forward steps still
   * run and it is not escalated, or (compensation) the compensations are running.
   */
  const awaits = (instance: Instance, step: string): boolean =>
    instance.step === step &&
    (isForward(step)
      ? forwardActive(instance) && instance.escalated !== true
      : instance.compensation === 'running')
  /** A step asked anew is not escalated (an instance that never says whether it is keeps not saying so). */
  const notEscalated = (instance: Instance): Instance =>
    instance.escalated === undefined ? instance : { ...instance, escalated: false }
  const nothing = (instance: Instance): Decision<Instance, Command> => ({
    next: instance,
    deadlineInMs: null,
    commands: [],
    log: [],
  })

  const waitMs = (step: string, attempt: number): number => waitIn(steps, step, attempt)

  /** The step asked (its first attempt): awaited from now until its deadline. */
  function ask(instance: Instance, step: string, detail?: string): Decision<Instance, Command> {
    const next = { ...notEscalated(instance), step, attempt: 1 }
    return {
      next,
      deadlineInMs: waitMs(step, 1),
      commands: [declared(step).ask(next, 1)],
      log: [{ step, outcome: 'requested', attempt: 1, ...(detail ? { detail } : {}) }],
    }
  }

  /** The awaited step's attempts are spent: escalated to operators, the instance staying where it is. */
  function escalate(instance: Instance, lines: LogLine[], reason: string): Decision<Instance, Command> {
    const step = instance.step ?? 'none'
    const compensation = instance.step !== null && !isForward(instance.step)
    return {
      next: compensation ? { ...instance, compensation: 'escalated' } : { ...instance, escalated: true },
      deadlineInMs: null,
      commands: [],
      log: [
        ...lines,
        { step, outcome: 'escalated', attempt: instance.attempt, detail: 'no answer after the last attempt' },
      ],
      escalation: reason,
    }
  }

  /** The awaited step timed out: asked again while attempts remain; then exhausted. */
  function timedOut(instance: Instance): Decision<Instance, Command> {
    const { step, attempt } = instance
    if (step === null) return nothing(instance)
    const declaration = declared(step)
    const timeout: LogLine = { step, outcome: 'timed_out', attempt }
    const forward = declaration.kind === 'forward'
    if (!awaits(instance, step)) return nothing(instance)
    if (attempt < declaration.attempts) {
      const next = { ...instance, attempt: attempt + 1 }
      return {
        next,
        deadlineInMs: waitMs(step, attempt + 1),
        commands: [declaration.ask(next, attempt + 1)],
        log: [timeout, { step, outcome: 'requested', attempt: attempt + 1 }],
      }
    }
    if (forward && declaration.exhausted === 'fail') {
      const decision = fail(instance, step, `no answer from the ${step} step after ${attempt} attempts`)
      return { ...decision, log: [timeout, ...decision.log] }
    }
    return escalate(
      instance,
      [timeout],
      forward
        ? `the ${step} step did not answer after ${attempt} attempts`
        : `the ${step} compensation did not answer after ${attempt} attempts`,
    )
  }

  /**
   * An answer that says the awaited step failed this attempt (e.g. the provider declined): asked again after its
   * wait while attempts remain, escalated after the last. The instance keeps waiting; the clock asks again. An answer
   * the instance does not wait for (another step's, a late one after the process failed, or after the step was
   * escalated already) is only logged: it escalates nothing a second time.
   */
  function attemptFailed(instance: Instance, step: string, detail: string): Decision<Instance, Command> {
    if (!awaits(instance, step)) {
      return {
        next: instance,
        deadlineInMs: 'keep',
        commands: [],
        log: [{ step, outcome: 'failed', detail: `${detail} (not awaited)` }],
      }
    }
    const failed: LogLine = { step, outcome: 'failed', attempt: instance.attempt, detail }
    if (instance.attempt < declared(step).attempts) {
      // the next attempt comes when this one's wait is over (the clock asks again): a decline is not hammered
      return { next: instance, deadlineInMs: 'keep', commands: [], log: [failed] }
    }
    if (isForward(step) && declared(step).exhausted === 'fail') {
      const decision = fail(
        instance,
        step,
        `the ${step} step failed after ${instance.attempt} attempts: ${detail}`,
      )
      return { ...decision, log: [failed, ...decision.log.slice(1)] }
    }
    return escalate(
      instance,
      [failed],
      `the ${step} step failed after ${instance.attempt} attempts: ${detail}`,
    )
  }

  /** An operator asks the awaited step again; an escalated step starts its attempts over. */
  function retried(instance: Instance): Decision<Instance, Command> {
    const { step } = instance
    if (step === null || (!isForward(step) && instance.compensation === 'done')) {
      throw new ProcessConflict(`${noun} waits for no step (${instance.state})`)
    }
    const forward = isForward(step)
    if (forward && !forwardActive(instance)) {
      throw new ProcessConflict(`${noun} ${instance.state}: its forward steps are over`)
    }
    const restart = instance.compensation === 'escalated' || instance.escalated === true
    const attempt = restart ? 1 : instance.attempt + 1
    const next = {
      ...notEscalated(instance),
      attempt,
      compensation: forward ? instance.compensation : 'running',
    }
    return {
      next,
      deadlineInMs: waitMs(step, attempt),
      commands: [declared(step).ask(next, attempt)],
      log: [{ step, outcome: 'operator', attempt, detail: 'retried by an operator' }],
    }
  }

  const answered = answeredIn(ask, forwardActive)
  const { startCompensations, compensated, fail, lateSucceeded } = compensationMechanics(steps, options, {
    declared,
    waitMs,
    ask,
    notEscalated,
  })

  return {
    waitMs,
    isForward,
    ask,
    answered,
    escalate,
    timedOut,
    attemptFailed,
    retried,
    fail,
    startCompensations,
    compensated,
    lateSucceeded,
  }
}

/**
 * The awaited forward `step` answered (an escalated one too: its answer came late): `then` is asked, in the instance
 * `moved` leads to. An answer of a step not awaited now (an earlier attempt's again, or after the process failed)
 * changes nothing but the log.
 */
function answeredIn<Instance extends InstanceBase, Command>(
  ask: (instance: Instance, step: string) => Decision<Instance, Command>,
  forwardActive: (instance: Instance) => boolean,
) {
  return function answered(
    instance: Instance,
    step: string,
    then: string,
    moved: Partial<Instance> = {},
    detail?: string,
  ): Decision<Instance, Command> {
    if (instance.step !== step || !forwardActive(instance)) {
      return {
        next: instance,
        deadlineInMs: 'keep',
        commands: [],
        log: [{ step, outcome: 'succeeded', detail: `${detail ?? 'answered'} (not awaited)` }],
      }
    }
    const asked = ask({ ...instance, ...moved }, then)
    const done: LogLine = {
      step,
      outcome: 'succeeded',
      attempt: instance.attempt,
      ...(detail ? { detail } : {}),
    }
    return { ...asked, log: [done, ...asked.log] }
  }
}

/**
 * The compensations of a process's steps, in the order they run: those declared beside its forward steps, in the
 * reverse order of the forward steps (the last done is the first undone).
 */
export function compensationOrderOf<Instance, Command>(steps: Steps<Instance, Command>): string[] {
  const order: string[] = []
  for (const declaration of Object.values(steps).reverse()) {
    const { compensation } = declaration
    if (declaration.kind === 'forward' && compensation !== undefined && !order.includes(compensation))
      order.push(compensation)
  }
  return order
}

/** What the compensations need of a process's step mechanics. */
interface StepBasics<Instance extends InstanceBase, Command> {
  declared(step: string): StepDeclaration<Instance, Command>
  waitMs(step: string, attempt: number): number
  ask(instance: Instance, step: string, detail?: string): Decision<Instance, Command>
  notEscalated(instance: Instance): Instance
}

/**
 * Compensations run one after the other in their order (compensationOrderOf), each asked, answered, then the next;
 * and a process that fails starts them.
 */
function compensationMechanics<Instance extends InstanceBase, Command>(
  steps: Steps<Instance, Command>,
  options: MechanicsOptions<Instance, Command>,
  { declared, waitMs, ask, notEscalated }: StepBasics<Instance, Command>,
) {
  const order = compensationOrderOf(steps)

  /** The compensations start from the first (each asked, answered, then the next), after the commands `before`. */
  function startCompensations(
    instance: Instance,
    before: Command[] = [],
    detail?: string,
  ): Decision<Instance, Command> {
    const [first] = order
    if (first === undefined) throw new Error('no compensation to start')
    const next = { ...notEscalated(instance), compensation: 'running' as const, step: first, attempt: 1 }
    return {
      next,
      deadlineInMs: waitMs(first, 1),
      commands: [...before, declared(first).ask(next, 1)],
      log: [{ step: first, outcome: 'requested', attempt: 1, ...(detail ? { detail } : {}) }],
    }
  }

  /** The awaited compensation `step` answered: the next is asked, or after the last the compensations are done. */
  const compensated = (instance: Instance, step: string, detail: string) =>
    compensatedIn(instance, order, step, detail, ask)

  /**
   * The process fails at `step` for `reason`: recorded as the process says (options.failed), what it announces goes
   * out, and its compensations start (none declared: nothing is awaited any more).
   */
  function fail(instance: Instance, step: string, reason: string): Decision<Instance, Command> {
    const failed = options.failed?.(instance, step, reason) ?? {
      next: { ...instance, failedStep: step, failureReason: reason },
      commands: [],
    }
    const line: LogLine = { step, outcome: 'failed', detail: reason }
    if (order.length === 0) {
      return {
        next: { ...failed.next, step: null, attempt: 1 },
        deadlineInMs: null,
        commands: failed.commands,
        log: [line],
      }
    }
    const started = startCompensations(failed.next, failed.commands)
    return { ...started, log: [line, ...started.log] }
  }

  /**
   * A forward step's success that arrives after the process failed or was cancelled: what it did must be undone too.
   * Covered (only logged) while the compensations run and its compensation is still to come; else they run again from
   * the first. A step that no compensation undoes is escalated: `escalation` tells operators what to do by hand.
   */
  function lateSucceeded(
    instance: Instance,
    step: string,
    detail: string,
    escalation?: string,
  ): Decision<Instance, Command> {
    const late: LogLine = { step, outcome: 'late', detail }
    const { compensation } = declared(step)
    if (compensation === undefined) {
      return {
        next: { ...instance, compensation: 'escalated' },
        deadlineInMs: null,
        commands: [],
        log: [late, { step, outcome: 'escalated', detail: 'no compensation undoes it' }],
        escalation:
          escalation ??
          `the ${step} step succeeded after the process ${instance.state}: no compensation undoes it`,
      }
    }
    const current = instance.step === null ? -1 : order.indexOf(instance.step)
    if (instance.compensation === 'running' && current !== -1 && order.indexOf(compensation) >= current)
      return unchanged(instance, late)
    const again = startCompensations(instance, [], 'compensations run again')
    return { ...again, log: [late, ...again.log] }
  }

  return { startCompensations, compensated, fail, lateSucceeded }
}

/**
 * The awaited compensation answered: the next of `order` is asked, or, after the last, the compensations are done.
 * An answer that is not the awaited one changes nothing.
 */
function compensatedIn<Instance extends InstanceBase, Command>(
  instance: Instance,
  order: readonly string[],
  step: string,
  detail: string,
  ask: (instance: Instance, step: string) => Decision<Instance, Command>,
): Decision<Instance, Command> {
  if (instance.compensation !== 'running' || instance.step !== step) {
    return {
      next: instance,
      deadlineInMs: 'keep',
      commands: [],
      log: [{ step, outcome: 'succeeded', detail: `${detail} (not awaited)` }],
    }
  }
  const succeeded: LogLine = { step, outcome: 'succeeded', attempt: instance.attempt, detail }
  const following = order[order.indexOf(step) + 1]
  if (following !== undefined) {
    const asked = ask(instance, following)
    return { ...asked, log: [succeeded, ...asked.log] }
  }
  return {
    next: { ...instance, step: null, attempt: 1, compensation: 'done' },
    deadlineInMs: null,
    commands: [],
    log: [succeeded],
  }
}

export type StepMechanics<Instance extends InstanceBase, Command> = StepMoves<Instance, Command>

const mechanicsByDefinition = new WeakMap<AnyProcessDefinition, StepMechanics<InstanceBase, unknown>>()

/** The step mechanics of a declared process: its steps, with what its declaration says of them (made once each). */
function mechanicsOf(definition: AnyProcessDefinition): StepMechanics<InstanceBase, unknown> {
  let mechanics = mechanicsByDefinition.get(definition)
  if (!mechanics) {
    mechanics = stepMechanics(definition.steps, definition.mechanics ?? {})
    mechanicsByDefinition.set(definition, mechanics)
  }
  return mechanics
}

/**
 * The decision on any fact for an instance of `definition`: pure. The clock's timeout and an operator's retry are the
 * module's (the awaited step asked again, exhausted, escalated or restarted by its declaration); every other fact is
 * the process's own `decide`.
 */
export function decideOn<
  Instance extends InstanceBase,
  Fact extends { kind: string },
  Command extends { type: string },
  Owner,
>(
  definition: ProcessDefinition<Instance, Fact, Command, Owner>,
  instance: Instance,
  fact: Fact | StandardFact,
): Decision<Instance, Command> {
  const mechanics = mechanicsOf(definition) as unknown as StepMechanics<Instance, Command>
  if (fact.kind === 'timeout') return mechanics.timedOut(instance)
  if (fact.kind === 'operator.retry') return mechanics.retried(instance)
  if (fact.kind === 'step.failed') {
    // a process's own fact kinds never start with `step.` (nor with `operator.`): this is the module's
    const { step, reason } = fact as StepFailedFact
    return mechanics.attemptFailed(instance, step ?? instance.step ?? 'none', reason)
  }
  return definition.decide(
    instance,
    fact as Exclude<Fact | StandardFact, { kind: 'timeout' | 'operator.retry' | 'step.failed' }>,
    mechanics,
  )
}
