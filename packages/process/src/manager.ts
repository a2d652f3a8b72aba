// The process manager: applies the declared processes' decisions (definition.ts) to what happens — an event, the
// clock, an operator — each in one transaction with its instance, its owner's row, its step log and its commands in
// the outbox; fires the deadlines of steps that did not answer; and composes the operators' view (operators.ts).
import { AppError, type EventType } from '@meridian/contracts'
import { type Queryable, type Sql, transaction } from '@meridian/db'
import { appendToOutbox, type EventHandler, type ProcessStamp } from '@meridian/events'
import type { AnyProcessDefinition, Decision, FactSource, InstanceBase, StandardFact } from './definition.ts'
import { decideOn } from './mechanics.ts'
import { type AnswerSource, type ApplyDecision, operatorsView } from './operators.ts'
import { ownerOf, persistedData, restoredInstance } from './restore.ts'
import { createProcessStore, type NewLogLine, type ProcessStore } from './store.ts'

/** Where escalations go besides the instance's row: an error log line and a counter. */
export interface ProcessAlerts {
  escalated(details: { type: string; key: string; step: string | null; reason: string }): void
}

export interface ProcessManagerOptions {
  sql: Sql
  processes: readonly AnyProcessDefinition[]
  alerts?: ProcessAlerts
  /** the store (tests and services may wrap it, e.g. traced); default: over `sql` */
  store?: ProcessStore
}

/**
 * The commands' events, built before anything is written (a schema refusal throws, the transaction rolls back). The
 * command that asks the step the instance awaits next carries that step's stamp (the `process` header), which its
 * answers carry back; the others (the process's own news) carry none.
 */
function eventsOf(
  definition: AnyProcessDefinition,
  key: string,
  decision: Decision<InstanceBase, unknown>,
  owner: unknown,
) {
  const context = { key, instance: decision.next, owner }
  const aggregateId = definition.aggregateId ? definition.aggregateId(context) : key
  const { step, attempt } = decision.next
  // the command the awaited step is asked with, to know it among the commands (only when there are some)
  const asked =
    step === null || decision.commands.length === 0
      ? undefined
      : (definition.steps[step]?.ask(decision.next, attempt) as { type: string } | undefined)
  const stamp: ProcessStamp | undefined =
    step === null ? undefined : { type: definition.type, key, step, attempt }
  return decision.commands.map((command) => ({
    event: definition.commandEvent(command, context),
    aggregateId,
    ...(stamp && asked && (command as { type: string }).type === asked.type ? { command: stamp } : {}),
  }))
}

/**
 * An answer that says the awaited step failed, but for an earlier attempt than the awaited one (asked again since):
 * logged, nothing counted. Undefined for every other answer: the process decides.
 */
function earlierAttemptsFailure(
  instance: InstanceBase,
  answer: AnswerSource | undefined,
  eventType: string | undefined,
): Decision<InstanceBase, unknown> | undefined {
  if (!answer?.failure || answer.stamp.step !== instance.step || answer.stamp.attempt === instance.attempt) {
    return undefined
  }
  return {
    next: instance,
    deadlineInMs: 'keep',
    commands: [],
    log: [
      {
        step: answer.stamp.step,
        outcome: 'failed',
        attempt: answer.stamp.attempt,
        detail: `${eventType ?? 'a failure'} (an earlier attempt's answer)`,
      },
    ],
  }
}

/** What a decision's next instance writes of its row (the escalation and the deadline are the caller's). */
const rowOf = (definition: AnyProcessDefinition, next: InstanceBase) => ({
  state: next.state,
  step: next.step,
  attempt: next.attempt,
  compensation: next.compensation,
  failedStep: next.failedStep,
  failureReason: next.failureReason,
  data: persistedData(definition, next),
})

const logLinesOf = (decision: Decision<InstanceBase, unknown>, source?: FactSource) =>
  decision.log.map((line): NewLogLine => ({ ...line, ...(source ?? {}) }))

type LooseEventRoute =
  | ((data: unknown) => { key: string; fact: { kind: string } } | undefined)
  | { key(data: unknown): string | undefined }
type LooseAnswerRoute =
  | 'fact'
  | { fact(data: unknown): { kind: string } | undefined }
  | { failed(data: unknown): string }

/**
 * The fact an answer of `type` gives by its route: the event's data as a fact of that kind (`'fact'`), the route's
 * own, or the module's `step.failed` for a failure answer.
 */
function answerFact(type: EventType, route: LooseAnswerRoute | undefined, data: unknown, step?: string) {
  if (route === undefined) return undefined
  if (route === 'fact') return { ...(data as object), kind: type }
  if ('failed' in route) return { kind: 'step.failed', ...(step ? { step } : {}), reason: route.failed(data) }
  return route.fact(data)
}

/** The instance an event's data names for `definition`, with its fact (a keyed route's fact is its answer's). */
function eventTarget(definition: AnyProcessDefinition, type: EventType, data: unknown) {
  const route = definition.events[type] as LooseEventRoute | undefined
  if (route === undefined) return undefined
  if (typeof route === 'function') return route(data)
  const key = route.key(data)
  // defineProcess refuses a keyed route without an answer route for its type
  const answer = definition.answers?.[type] as LooseAnswerRoute | undefined
  const fact = key === undefined ? undefined : answerFact(type, answer, data)
  return key === undefined || fact === undefined ? undefined : { key, fact }
}

/** The event types the declared processes follow: those their data routes and those they are answered with. */
export function followedTypes(processes: readonly AnyProcessDefinition[]): EventType[] {
  const types = new Set<EventType>()
  for (const definition of processes) {
    for (const type of Object.keys(definition.events)) types.add(type as EventType)
    for (const type of Object.keys(definition.answers ?? {})) types.add(type as EventType)
  }
  return [...types]
}

/**
 * The event handlers of every event type a declared process follows. An answer stamped for one of them goes to the
 * instance and step its stamp names, and to no other process; any other event (unstamped, or an answer to another
 * service's process) to the instances its data names.
 */
function routedHandlers(
  processes: readonly AnyProcessDefinition[],
  apply: ApplyDecision,
): Partial<Record<EventType, EventHandler<EventType>>> {
  const byType = new Map(processes.map((definition) => [definition.type, definition]))
  const result: Partial<Record<EventType, EventHandler<EventType>>> = {}
  for (const type of followedTypes(processes)) {
    result[type] = async (event, tx, consumed) => {
      const source = { eventType: event.type, eventId: event.id }
      const stamp = consumed?.answerTo
      const answered = stamp ? byType.get(stamp.type) : undefined
      if (stamp && answered) {
        const route = answered.answers?.[type] as LooseAnswerRoute | undefined
        const fact = answerFact(type, route, event.data, stamp.step)
        if (fact) {
          await apply(answered.type, stamp.key, fact, tx, source, {
            answer: { stamp, failure: fact.kind === 'step.failed' },
          })
        }
        return
      }
      for (const definition of processes) {
        const target = eventTarget(definition, type, event.data)
        if (target) await apply(definition.type, target.key, target.fact, tx, source)
      }
    }
  }
  return result
}

export function createProcessManager({ sql, processes, alerts, store: given }: ProcessManagerOptions) {
  const store = given ?? createProcessStore(sql)
  const byType = new Map<string, AnyProcessDefinition>()
  for (const definition of processes) {
    if (byType.has(definition.type)) throw new Error(`process type '${definition.type}' is declared twice`)
    byType.set(definition.type, definition)
  }
  const definitionOf = (type: string): AnyProcessDefinition => {
    const definition = byType.get(type)
    if (!definition) throw AppError.notFound(`No process type ${type}`)
    return definition
  }

  /**
   * Starts an instance of `type` under `key` in `tx` with its first decision (its state, what it awaits until when,
   * its log lines, its commands in the outbox). One statement, plus one per command, sent as called.
   */
  async function start(
    type: string,
    key: string,
    decision: Decision<InstanceBase, unknown>,
    tx: Queryable,
    { owner, source }: { owner?: unknown; source?: FactSource } = {},
  ): Promise<void> {
    const definition = definitionOf(type)
    const events = eventsOf(definition, key, decision, owner)
    await Promise.all([
      store.start(
        type,
        key,
        {
          ...rowOf(definition, decision.next),
          deadlineInMs: decision.deadlineInMs === 'keep' ? null : decision.deadlineInMs,
        },
        logLinesOf(decision, source),
        tx,
      ),
      ...events.map(({ event, ...options }) => appendToOutbox(tx, event, options)),
    ])
  }

  /**
   * Decides on `fact` for the instance and applies the decision in `tx`: its owner's row locked first, then the
   * instance (one statement); then the instance, the owner's change and the log in one statement, with the
   * commands' outbox rows sent beside it. Undefined: no such instance (or, with `onlyIfDue`, not due / held).
   */
  const apply: ApplyDecision = async (type, key, fact, tx, source, { onlyIfDue = false, answer } = {}) => {
    const definition = definitionOf(type)
    const locked = await store.lock(type, key, definition.owner?.select(key, tx), { onlyIfDue }, tx)
    if (!locked) return undefined
    const { owner: ownerRow, ...stored } = locked
    const owner = ownerOf(definition, ownerRow)
    const before = restoredInstance(definition, stored, owner)
    const decision: Decision<InstanceBase, unknown> =
      earlierAttemptsFailure(before, answer, source?.eventType) ?? decideOn(definition, before, fact)
    const { next } = decision
    const events = eventsOf(definition, key, decision, owner)
    // the escalation stays while the instance is escalated at the same step; a move on (an answer that leads to
    // another step or none, an operator) clears it
    const stillEscalated =
      next.compensation === 'escalated' || (next.escalated === true && next.step === before.step)
    const escalation = decision.escalation ?? (stillEscalated ? stored.escalation : null)
    await Promise.all([
      store.record(
        type,
        key,
        { ...rowOf(definition, next), escalation, deadlineInMs: decision.deadlineInMs },
        definition.owner?.write?.(key, owner, next, tx) ?? null,
        logLinesOf(decision, source),
        tx,
      ),
      ...events.map(({ event, ...options }) => appendToOutbox(tx, event, options)),
    ])
    if (decision.escalation) {
      alerts?.escalated({ type, key, step: next.step, reason: decision.escalation })
    }
    return decision
  }

  /**
   * Fires the deadlines that have passed: each due instance decided on in a transaction of its own. One that cannot be
   * decided on (its decision throws, its command's event is refused) stays due and does not hold up the others: they
   * fire, then the round fails naming it (the clock logs it and tries again next round).
   */
  async function fireDeadlines(limit = 50): Promise<number> {
    let fired = 0
    const failures: Error[] = []
    for (const { type, key } of await store.due([...byType.keys()], limit)) {
      try {
        const applied = await transaction(sql, (tx) =>
          apply(
            type,
            key,
            { kind: 'timeout' } satisfies StandardFact,
            tx,
            { eventType: 'timeout', eventId: 'deadline' },
            { onlyIfDue: true },
          ),
        )
        if (applied) fired += 1
      } catch (error) {
        failures.push(new Error(`the deadline of ${type} process ${key} failed to fire`, { cause: error }))
      }
    }
    if (failures.length > 0) {
      throw new AggregateError(
        failures,
        `${failures.length} due process deadline(s) failed to fire; ${fired} fired`,
      )
    }
    return fired
  }

  return {
    store,
    start,
    apply,
    handlers: () => routedHandlers(processes, apply),
    fireDeadlines,
    ...operatorsView({ sql, store, processes, definitionOf, apply }),
  }
}

export type ProcessManager = ReturnType<typeof createProcessManager>
