// The operators' API over the process manager's core, for every declared type: the types, the instances (filtered,
// paginated), one with its step log, and the two actions — retry the awaited step, run the compensations — each a
// decision applied in a transaction of its own (404 without the instance, 409 when its state refuses).
import {
  AppError,
  type ProcessInstance,
  type ProcessListQuery,
  type ProcessLogEntry,
  type ProcessType,
} from '@meridian/contracts'
import { type ListEnvelope, listEnvelope, type Queryable, type Sql, transaction } from '@meridian/db'
import {
  type AnyProcessDefinition,
  type Decision,
  type InstanceBase,
  ProcessConflict,
  type StandardFact,
  type StoredInstance,
} from './definition.ts'
import type { ProcessStore } from './store.ts'

/** What the operators' API needs of the manager's core (manager.ts). */
export interface ProcessCoreParts {
  store: ProcessStore
  processes: readonly AnyProcessDefinition[]
  definitionOf(type: string): AnyProcessDefinition
  apply(
    type: string,
    key: string,
    fact: { kind: string },
    tx: Queryable,
    source?: { eventType: string; eventId: string },
  ): Promise<Decision<InstanceBase, unknown> | undefined>
}

export const processHref = (type: string, key: string) =>
  `/api/v1/admin/processes/${type}/${encodeURIComponent(key)}`

/** An instance as operators read it: where it stands, whether it is escalated, its links (and its log). */
export function presentInstance(
  definition: AnyProcessDefinition | undefined,
  stored: StoredInstance,
  log?: ProcessLogEntry[],
): ProcessInstance {
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

/** The declared types, their states and steps (for filters and views). */
export const processTypes = (processes: readonly AnyProcessDefinition[]): ProcessType[] =>
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
  }))

export function processOperators(core: ProcessCoreParts, sql: Sql) {
  const { store, processes, definitionOf, apply } = core

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
    const definition = definitionOf(type)
    const stored = await store.find(type, key)
    if (!stored) throw AppError.notFound(`No ${type} process ${key}`)
    return presentInstance(definition, stored, await logOf(type, key))
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
    logOf,
    get,
    present: (stored: StoredInstance, log?: ProcessLogEntry[]) =>
      presentInstance(
        processes.find((each) => each.type === stored.type),
        stored,
        log,
      ),
    types: (): ProcessType[] => processTypes(processes),

    async list(query: ProcessListQuery, path: string): Promise<ListEnvelope<ProcessInstance>> {
      if (query.type !== undefined) definitionOf(query.type)
      const request = store.listRequest(query)
      const { rows, total } = await store.list(request)
      const present = (row: StoredInstance) =>
        presentInstance(
          processes.find((each) => each.type === row.type),
          row,
        )
      return listEnvelope(path, query, request, rows.map(present), total)
    },

    retry: (type: string, key: string) => operatorAction(type, key, { kind: 'operator.retry' }),

    compensate: (type: string, key: string, reason = 'compensated by an operator') =>
      operatorAction(type, key, { kind: 'operator.compensate', reason }),
  }
}
