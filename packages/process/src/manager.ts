// The process manager: applies the declared processes' decisions (definition.ts) to what happens — an event, the
// clock, an operator — each in one transaction with its instance, its owner's row, its step log and its commands in
// the outbox; fires the deadlines of steps that did not answer; and answers the operators' API for every type.
import { AppError, type EventType } from '@meridian/contracts'
import { type Queryable, type Sql, transaction } from '@meridian/db'
import { appendToOutbox, type EventHandler } from '@meridian/events'
import type { AnyProcessDefinition, Decision, InstanceBase, StandardFact } from './definition.ts'
import { processOperators } from './operators.ts'
import { createProcessStore, type NewLogLine, type ProcessStore } from './store.ts'

/** Where escalations go besides the instance's row: an error log line and a counter. */
export interface ProcessAlerts {
  escalated(details: { type: string; key: string; step: string | null; reason: string }): void
}

/** The event (or the clock, or an operator) a fact arrived with, for the step log. */
export interface FactSource {
  eventType: string
  eventId: string
}

export interface ProcessManagerOptions {
  sql: Sql
  processes: readonly AnyProcessDefinition[]
  alerts?: ProcessAlerts
  /** the store (tests and services may wrap it, e.g. traced); default: over `sql` */
  store?: ProcessStore
}

const escalatedOf = (instance: InstanceBase) =>
  instance.escalated === true || instance.compensation === 'escalated'

/** Starts, applies, routes and times the declared processes' instances. */
export function createProcessCore({ sql, processes, alerts, store: given }: ProcessManagerOptions) {
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

  /** The commands' events, built before anything is written (a schema refusal throws, the transaction rolls back). */
  function eventsOf(
    definition: AnyProcessDefinition,
    key: string,
    decision: Decision<InstanceBase, unknown>,
    owner: unknown,
  ) {
    const context = { key, instance: decision.next, owner }
    const aggregateId = definition.aggregateId ? definition.aggregateId(context) : key
    return decision.commands.map((command) => ({
      event: definition.commandEvent(command, context),
      aggregateId,
    }))
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
    { owner, source }: { owner?: unknown; source?: { eventType: string; eventId?: string } } = {},
  ): Promise<void> {
    const definition = definitionOf(type)
    const events = eventsOf(definition, key, decision, owner)
    const { next } = decision
    await Promise.all([
      store.start(
        type,
        key,
        {
          state: next.state,
          step: next.step,
          attempt: next.attempt,
          compensation: next.compensation,
          failedStep: next.failedStep,
          failureReason: next.failureReason,
          data: definition.persist(next),
          deadlineInMs: decision.deadlineInMs === 'keep' ? null : decision.deadlineInMs,
        },
        decision.log.map((line): NewLogLine => ({ ...line, ...(source ?? {}) })),
        tx,
      ),
      ...events.map(({ event, aggregateId }) => appendToOutbox(tx, event, { aggregateId })),
    ])
  }

  /**
   * Decides on `fact` for the instance and applies the decision in `tx`: its owner's row locked first, then the
   * instance (one statement); then the instance, the owner's change and the log in one statement, with the
   * commands' outbox rows sent beside it. Undefined: no such instance (or, with `onlyIfDue`, not due / held).
   */
  async function apply(
    type: string,
    key: string,
    fact: { kind: string },
    tx: Queryable,
    source?: FactSource,
    { onlyIfDue = false }: { onlyIfDue?: boolean } = {},
  ): Promise<Decision<InstanceBase, unknown> | undefined> {
    const definition = definitionOf(type)
    const locked = await store.lock(type, key, definition.owner?.lock(key, tx), { onlyIfDue }, tx)
    if (!locked) return undefined
    const { owner: ownerRow, ...stored } = locked
    const owner = definition.owner && ownerRow ? definition.owner.read(ownerRow) : undefined
    const before: InstanceBase = definition.restore(stored, owner)
    const decision: Decision<InstanceBase, unknown> = definition.decide(before, fact)
    const { next } = decision
    const events = eventsOf(definition, key, decision, owner)
    // the escalation stays while the instance is escalated; a move on (an answer, an operator) clears it
    const escalation = decision.escalation ?? (escalatedOf(next) ? stored.escalation : null)
    await Promise.all([
      store.record(
        type,
        key,
        {
          state: next.state,
          step: next.step,
          attempt: next.attempt,
          compensation: next.compensation,
          failedStep: next.failedStep,
          failureReason: next.failureReason,
          escalation,
          data: definition.persist(next),
          deadlineInMs: decision.deadlineInMs,
        },
        definition.owner?.write?.(key, owner, next, tx) ?? null,
        decision.log.map((line): NewLogLine => ({ ...line, ...(source ?? {}) })),
        tx,
      ),
      ...events.map(({ event, aggregateId }) => appendToOutbox(tx, event, { aggregateId })),
    ])
    if (decision.escalation) {
      alerts?.escalated({ type, key, step: next.step, reason: decision.escalation })
    }
    return decision
  }

  /** The event handlers of every event type a declared process follows: each routed to the instance it names. */
  function handlers(): Partial<Record<EventType, EventHandler<EventType>>> {
    const routed = new Map<EventType, AnyProcessDefinition[]>()
    for (const definition of processes) {
      for (const type of Object.keys(definition.events) as EventType[]) {
        routed.set(type, [...(routed.get(type) ?? []), definition])
      }
    }
    const result: Partial<Record<EventType, EventHandler<EventType>>> = {}
    for (const [type, definitions] of routed) {
      result[type] = async (event, tx) => {
        for (const definition of definitions) {
          const route = definition.events[type] as
            | ((data: unknown) => { key: string; fact: { kind: string } } | undefined)
            | undefined
          const target = route?.(event.data)
          if (target)
            await apply(definition.type, target.key, target.fact, tx, {
              eventType: event.type,
              eventId: event.id,
            })
        }
      }
    }
    return result
  }

  /** Fires the deadlines that have passed: each due instance decided on in a transaction of its own. */
  async function fireDeadlines(limit = 50): Promise<number> {
    let fired = 0
    for (const { type, key } of await store.due([...byType.keys()], limit)) {
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
    }
    return fired
  }

  return { store, processes, definitionOf, start, apply, handlers, fireDeadlines }
}

/** The process manager: its core (core.ts' moves) and the operators' API over it (operators.ts). */
export function createProcessManager(options: ProcessManagerOptions) {
  const core = createProcessCore(options)
  return { ...core, ...processOperators(core, options.sql) }
}

export type ProcessManager = ReturnType<typeof createProcessManager>
