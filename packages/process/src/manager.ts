// The process manager: applies the declared processes' decisions (definition.ts) to what happens — an event, the
// clock, an operator — each in one transaction with its instance, its owner's row, its step log and its commands in
// the outbox; fires the deadlines of steps that did not answer; and answers the operators' API for every type.
import {
  AppError,
  type EventType,
  type ProcessInstance,
  type ProcessListQuery,
  type ProcessLogEntry,
  type ProcessType,
} from '@meridian/contracts'
import { type ListEnvelope, listEnvelope, type Queryable, type Sql, transaction } from '@meridian/db'
import { appendToOutbox, type EventHandler } from '@meridian/events'
import {
  type AnyProcessDefinition,
  type Decision,
  type InstanceBase,
  ProcessConflict,
  type StandardFact,
  type StoredInstance,
} from './definition.ts'
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

export const processHref = (type: string, key: string) =>
  `/api/v1/admin/processes/${type}/${encodeURIComponent(key)}`

/**
 * A forward step's escalation lives in the row's `escalation` (a compensation's in `compensation`): a restored
 * instance that does not say whether it is escalated gets it from there, so the mechanics see what the operators see
 * (a retry starts its attempts over, a late failure escalates nothing again) whether or not `restore` maps it.
 */
function escalatedFromRow(restored: InstanceBase, stored: StoredInstance): InstanceBase {
  if (restored.escalated !== undefined) return restored
  if (stored.escalation === null || stored.compensation === 'escalated') return restored
  return { ...restored, escalated: true }
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
    const before = escalatedFromRow(definition.restore(stored, owner), stored)
    const decision: Decision<InstanceBase, unknown> = definition.decide(before, fact)
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

  function present(stored: StoredInstance, log?: ProcessLogEntry[]): ProcessInstance {
    const definition = byType.get(stored.type)
    const self = processHref(stored.type, stored.key)
    const escalated = stored.escalation !== null || stored.compensation === 'escalated'
    const links: ProcessInstance['_links'] = {
      self: { href: self, method: 'GET' },
      ...(definition?.links?.(stored.key, stored) ?? {}),
    }
    if (stored.step !== null && stored.compensation !== 'done')
      links.retry = { href: `${self}/retry`, method: 'POST' }
    if (!definition?.finalStates.includes(stored.state) || escalated) {
      links.compensate = { href: `${self}/compensate`, method: 'POST' }
    }
    return {
      type: stored.type,
      id: stored.key,
      state: stored.state,
      step: stored.step,
      attempt: stored.attempt,
      deadline: stored.deadline ? stored.deadline.toISOString() : null,
      compensation: stored.compensation,
      failedStep: stored.failedStep,
      failureReason: stored.failureReason,
      escalated,
      ...(stored.escalation === null ? {} : { escalation: stored.escalation }),
      data: stored.data,
      createdAt: stored.createdAt.toISOString(),
      updatedAt: stored.updatedAt.toISOString(),
      ...(log ? { log } : {}),
      _links: links,
    }
  }

  async function logOf(type: string, key: string): Promise<ProcessLogEntry[]> {
    return (await store.logOf(type, key)).map(
      (line): ProcessLogEntry => ({
        step: line.step,
        outcome: line.outcome,
        ...(line.attempt === null ? {} : { attempt: line.attempt }),
        ...(line.eventType === null ? {} : { eventType: line.eventType }),
        ...(line.eventId === null ? {} : { eventId: line.eventId }),
        ...(line.detail === null ? {} : { detail: line.detail }),
        at: line.at.toISOString(),
      }),
    )
  }

  async function get(type: string, key: string): Promise<ProcessInstance> {
    definitionOf(type)
    const stored = await store.find(type, key)
    if (!stored) throw AppError.notFound(`No ${type} process ${key}`)
    return present(stored, await logOf(type, key))
  }

  /** An operator's action on one instance: 404 without one, 409 when its state refuses it; the instance after. */
  async function operatorAction(type: string, key: string, fact: StandardFact): Promise<ProcessInstance> {
    definitionOf(type)
    try {
      await transaction(sql, async (tx) => {
        const applied = await apply(type, key, fact, tx, { eventType: 'operator', eventId: fact.kind })
        if (!applied) throw AppError.notFound(`No ${type} process ${key}`)
      })
    } catch (error) {
      if (error instanceof ProcessConflict) throw AppError.conflict(error.message)
      throw error
    }
    return get(type, key)
  }

  return {
    store,
    start,
    apply,
    handlers,
    fireDeadlines,
    present,
    logOf,
    get,

    /** The declared types, their states and steps (for filters and views). */
    types: (): ProcessType[] =>
      processes.map((definition) => ({
        type: definition.type,
        description: definition.description,
        states: [...definition.states],
        finalStates: [...definition.finalStates],
        steps: Object.entries(definition.steps).map(([name, step]) => ({
          name,
          kind: step.kind,
          attempts: step.attempts,
          deadlineMs: step.deadlineMs,
        })),
      })),

    async list(query: ProcessListQuery, path: string): Promise<ListEnvelope<ProcessInstance>> {
      if (query.type !== undefined) definitionOf(query.type)
      const request = store.listRequest(query)
      const { rows, total } = await store.list(request)
      return listEnvelope(
        path,
        query,
        request,
        rows.map((row) => present(row)),
        total,
      )
    },

    retry: (type: string, key: string) => operatorAction(type, key, { kind: 'operator.retry' }),

    compensate: (type: string, key: string, reason = 'compensated by an operator') =>
      operatorAction(type, key, { kind: 'operator.compensate', reason }),
  }
}

export type ProcessManager = ReturnType<typeof createProcessManager>
