// What a long-running process is, declared: its states, the steps that move it (forward steps and compensations,
// each with its deadline and attempts), the events that feed it and the commands it sends, the owner row it locks
// first, and its decision — a pure function from an instance and a fact to the next instance, the commands, the log
// lines and any escalation. The manager (manager.ts) persists and applies it; nothing here does I/O.
import type { CompensationState, EventData, EventType, StepOutcome } from '@meridian/contracts'
import type { Fragment, Queryable } from '@meridian/db'
import type { CatalogueEvent } from '@meridian/events'
import type { TObject } from 'typebox'

/** Where every instance stands; a process's own fields come beside these. */
export interface InstanceBase {
  state: string
  /** the step awaited now; null: none */
  step: string | null
  /** the awaited step's attempt */
  attempt: number
  compensation: CompensationState
  failedStep: string | null
  failureReason: string | null
  /** a forward step that failed after its last attempt is escalated (compensations: compensation `escalated`) */
  escalated?: boolean | undefined
}

/** The event (or the clock, or an operator) a fact arrived with, for the step log. */
export interface FactSource {
  eventType: string
  /** absent when no event brought it (a request began the instance) */
  eventId?: string
}

export interface LogLine {
  step: string
  outcome: StepOutcome
  attempt?: number
  detail?: string
}

export interface Decision<Instance, Command> {
  next: Instance
  /** when the awaited step times out, in ms from now; null: nothing awaited; 'keep': unchanged */
  deadlineInMs: number | null | 'keep'
  commands: Command[]
  log: LogLine[]
  /** why operators must act (logged as an error, counted, listed with `escalated=true`) */
  escalation?: string
}

/** The facts every process understands besides its own: its clock and its operators. */
export type ClockFact = { kind: 'timeout' }
export type OperatorFact = { kind: 'operator.retry' } | { kind: 'operator.compensate'; reason: string }
/**
 * An answer that says a step failed this attempt (a decline: its answer route's `failed`): the module counts it
 * against the step's attempts; `step` is the one its stamp names (absent for an unstamped answer: the awaited one).
 */
export type StepFailedFact = { kind: 'step.failed'; step?: string; reason: string }
export type StandardFact = ClockFact | OperatorFact | StepFailedFact
/** What a process's own decide is given: its facts and an operator's compensate (the module answers the rest). */
export type OwnFact<Fact> = Fact | Extract<OperatorFact, { kind: 'operator.compensate' }>

/** A request of a customer or an operator that the instance's state refuses (HTTP 409). */
export class ProcessConflict extends Error {
  override readonly name: string = 'ProcessConflict'
}

export interface MechanicsOptions<Instance extends InstanceBase, Command> {
  /**
   * Whether the instance's forward steps still run (false once it failed, was cancelled or finished): a forward
   * step's timeout or retry then does nothing / is refused. Default: always.
   */
  forwardActive?(instance: Instance): boolean
  /**
   * How the process records that it failed at `step` (its state, its status) and what it announces, before its
   * compensations start (a step declared `exhausted: 'fail'`, or its own decision calling `fail`). Default: the failed
   * step and the reason recorded, nothing announced.
   */
  failed?(instance: Instance, step: string, reason: string): { next: Instance; commands: Command[] }
  /** how refusals name the instance, e.g. "the saga of this order" (default "the process") */
  noun?: string
}

/**
 * The moves the module makes for a process's declared steps (mechanics.ts' stepMechanics), which its `decide` is
 * given to compose with its own: each a pure decision.
 */
export interface StepMoves<Instance extends InstanceBase, Command> {
  /** an attempt's wait for its answer */
  waitMs(step: string, attempt: number): number
  isForward(step: string | null): step is string
  /** the step asked (its first attempt), awaited until its deadline */
  ask(instance: Instance, step: string, detail?: string): Decision<Instance, Command>
  /** the awaited forward `step` answered: `then` asked in the instance `moved` leads to; not awaited, only logged */
  answered(
    instance: Instance,
    step: string,
    then: string,
    moved?: Partial<Instance>,
    detail?: string,
  ): Decision<Instance, Command>
  /** the awaited step's attempts are spent: escalated to operators, the instance staying where it is */
  escalate(instance: Instance, lines: LogLine[], reason: string): Decision<Instance, Command>
  timedOut(instance: Instance): Decision<Instance, Command>
  attemptFailed(instance: Instance, step: string, detail: string): Decision<Instance, Command>
  retried(instance: Instance): Decision<Instance, Command>
  /** the process fails at `step`: recorded as `mechanics.failed` says, then its compensations start */
  fail(instance: Instance, step: string, reason: string): Decision<Instance, Command>
  startCompensations(instance: Instance, before?: Command[], detail?: string): Decision<Instance, Command>
  /** the awaited compensation `step` answered: the next asked, or done after the last */
  compensated(instance: Instance, step: string, detail: string): Decision<Instance, Command>
  /** a forward step's success after the process failed: undone (again), or escalated when nothing undoes it */
  lateSucceeded(
    instance: Instance,
    step: string,
    detail: string,
    escalation?: string,
  ): Decision<Instance, Command>
}

export interface StepDeclaration<Instance, Command> {
  kind: 'forward' | 'compensation'
  /** how long an attempt may go unanswered; with backoff `doubling`, doubled for each further attempt */
  deadlineMs: number
  /** attempts before the step is exhausted (a forward step fails or escalates; a compensation escalates) */
  attempts: number
  /**
   * a forward step's attempts spent (no answer, or a failure answer to the last): `escalate` to operators, the
   * instance staying where it is (default), or `fail` the process and start its compensations
   */
  exhausted?: 'escalate' | 'fail'
  /**
   * the compensation step that undoes this forward step: when the process fails, the module runs the declared
   * compensations one after the other, in the reverse order of their forward steps
   */
  compensation?: string
  backoff?: 'fixed' | 'doubling'
  /** the command that asks the step (again) */
  ask(instance: Instance, attempt: number): Command
}

export type Steps<Instance, Command> = Readonly<Record<string, StepDeclaration<Instance, Command>>>

/** A JSON scalar: what a process keeps of its own fields. */
export type Scalar = string | number | boolean | null

/** An instance's row as the store reads it. */
export interface StoredInstance {
  type: string
  key: string
  state: string
  step: string | null
  attempt: number
  deadline: Date | null
  compensation: CompensationState
  failedStep: string | null
  failureReason: string | null
  escalation: string | null
  data: Record<string, Scalar>
  createdAt: Date
  updatedAt: Date
}

/**
 * The row an instance belongs to (an order), locked before the instance by every decision as the owner's own writes
 * lock it, so the two never wait on each other in opposite orders; read with the instance in one statement.
 */
export interface OwnerDeclaration<Instance, Owner> {
  /**
   * a select of the owner's one row for the key, its table the only one in its FROM and no locking clause: the module
   * adds `for update` for a decision, and reads it as it is for the operators' view; its columns are what `read` gets
   */
  select(key: string, sql: Queryable): Fragment
  /** the owner from the selected row (as to_jsonb gives it: numbers, strings, arrays) */
  read(row: Record<string, unknown>): Owner
  /** a data-modifying statement (no trailing semicolon) writing what `next` changed of `owner`; null: nothing */
  write?(key: string, owner: Owner, next: Instance, sql: Queryable): Fragment | null
}

/** Which instance an event moves, and with what fact; undefined: the event is not this process's. */
export type EventRoute<Type extends EventType, Fact> = (
  data: EventData<Type>,
) => { key: string; fact: Fact } | undefined

/**
 * A choreographed event that the process is also answered with: which instance its data names (undefined: none of
 * its own); its fact is the one its answer route gives.
 */
export interface KeyedEventRoute<Type extends EventType> {
  key(data: EventData<Type>): string | undefined
}

export type EventRoutes<Fact> = { [Type in EventType]?: EventRoute<Type, Fact> | KeyedEventRoute<Type> }

/**
 * What an answer to one of the process's commands tells it: a fact of its own, or that the step failed this attempt
 * (a decline), and why — which the module handles for every process: counted against the awaited attempt, escalated
 * or failed after the last as the step is declared, and only logged when it answers an earlier attempt than the
 * awaited one. The answer finds its instance by itself: it carries the command's process stamp back
 * (@meridian/events' process-stamp), so the answering service never names the instance.
 */
export type AnswerRoute<Type extends EventType, Fact> =
  /** the event's data is the fact, its kind the event's type (a fact of the process's of that shape) */
  | (AnswerFact<Type> extends Fact ? 'fact' : never)
  | {
      /** the fact; undefined: the answer means nothing to the process */
      fact(data: EventData<Type>): Fact | undefined
    }
  | {
      /** the step failed this attempt: why */
      failed(data: EventData<Type>): string
    }

/** An answer's data as a fact of its type's kind: what an answer route `'fact'` gives. */
export type AnswerFact<Type extends EventType> = { kind: Type } & EventData<Type>

export type AnswerRoutes<Fact> = { [Type in EventType]?: AnswerRoute<Type, Fact> }

export interface ProcessDefinition<
  Instance extends InstanceBase,
  Fact extends { kind: string },
  Command extends { type: string },
  Owner = undefined,
> {
  /** the type's name: lower case, digits and `_`; the key of its instances is unique within it */
  type: string
  description: string
  states: readonly Instance['state'][]
  /** states in which nothing is awaited any more */
  finalStates: readonly Instance['state'][]
  steps: Steps<Instance, Command>
  /** the events that move its instances by what their data names (choreographed events: not answers to it) */
  events: EventRoutes<Fact>
  /**
   * the answers to its commands, routed by the stamp they carry back: an answer stamped for this process goes to it
   * alone, never through `events`
   */
  answers?: AnswerRoutes<Fact>
  /**
   * the decision on its own facts and an operator's compensate: pure, no I/O; throws ProcessConflict for a request
   * the state refuses. The clock's timeouts and operators' retries are the module's (decideOn), by `steps` and
   * `mechanics`; the moves it composes with its own (ask a step, answer one, fail, compensate) are given as
   * `mechanics`, made once for the declaration.
   */
  decide(
    instance: Instance,
    fact: OwnFact<Fact>,
    mechanics: StepMoves<Instance, Command>,
  ): Decision<Instance, Command>
  /** what the module's step mechanics need to know of it: when its forward steps run, what their exhaustion does */
  mechanics?: MechanicsOptions<Instance, Command>
  /**
   * The process's own fields of an instance, kept in its row's `data`: an object of scalars, each nullable (a field
   * absent from the row reads as null, a null is not written). The module restores and persists them with the row's
   * own fields (state, step, attempt, compensation, failure; escalated from its escalation); what the instance takes
   * from its owner comes from `fromOwner`. A row whose data does not match is refused, never guessed at.
   */
  data: TObject
  /** the fields an instance takes from its owner's row (e.g. the order's status), over those of `data` */
  fromOwner?(owner: Owner): Partial<Instance>
  /** the event a command goes out as (built before anything is written: a schema refusal rolls back) */
  commandEvent(command: Command, context: CommandContext<Instance, Owner>): CatalogueEvent<EventType>
  /** the Kafka key of its commands' events; default: the instance's key */
  aggregateId?(context: CommandContext<Instance, Owner>): string
  owner?: OwnerDeclaration<Instance, Owner>
  /** where operators read an instance (its `_links.self`), default /api/v1/admin/processes/{type}/{key} */
  links?(key: string, stored: StoredInstance): Record<string, { href: string; method: string }>
}

export interface CommandContext<Instance, Owner> {
  key: string
  instance: Instance
  owner: Owner
}

// biome-ignore lint/suspicious/noExplicitAny: the manager holds definitions of any instance, fact and command types
export type AnyProcessDefinition = ProcessDefinition<any, any, any, any>

/** Declares a process (an identity: it checks the declaration and keeps its types). */
export function defineProcess<
  Instance extends InstanceBase,
  Fact extends { kind: string },
  Command extends { type: string },
  Owner = undefined,
>(
  definition: ProcessDefinition<Instance, Fact, Command, Owner>,
): ProcessDefinition<Instance, Fact, Command, Owner> {
  if (!/^[a-z][a-z0-9_]{0,39}$/.test(definition.type)) {
    throw new Error(`process type '${definition.type}' must be lower case letters, digits and _ (at most 40)`)
  }
  for (const state of definition.finalStates) {
    if (!definition.states.includes(state)) throw new Error(`final state '${state}' is not one of the states`)
  }
  for (const [type, route] of Object.entries(definition.events)) {
    if (typeof route !== 'function' && !definition.answers?.[type as EventType])
      throw new Error(`event '${type}' is routed by its key alone: it needs an answer route for its fact`)
  }
  for (const [name, step] of Object.entries(definition.steps)) {
    if (step.attempts < 1 || step.deadlineMs < 0)
      throw new Error(`step '${name}' needs attempts ≥ 1, deadline ≥ 0`)
    if (step.compensation !== undefined && definition.steps[step.compensation]?.kind !== 'compensation')
      throw new Error(
        `step '${name}' names '${step.compensation}' as its compensation: no such compensation step`,
      )
  }
  return definition
}
