// What operators see of the declared processes and may do to them, for every type alike: the types, the instances
// (listed, or one with its step log and the links of what applies to it), and the two actions — ask the awaited step
// again, or compensate — each decided on by the instance's own process (a refusal is 409).
import {
  AppError,
  type ProcessInstance,
  type ProcessListQuery,
  type ProcessLogEntry,
  type ProcessType,
} from '@meridian/contracts'
import { type ListEnvelope, listEnvelope, type Queryable, type Sql, transaction } from '@meridian/db'
import type { ProcessStamp } from '@meridian/events'
import { type AuditSource, appendAudit } from '@meridian/service-kit'
import {
  type AnyProcessDefinition,
  type Decision,
  type FactSource,
  type InstanceBase,
  ProcessConflict,
  type StandardFact,
  type StoredInstance,
} from './definition.ts'
import { decideOn } from './mechanics.ts'
import { ownerOf, restoredInstance } from './restore.ts'
import type { ProcessStore, StoredLogLine } from './store.ts'

/**
 * The manager's decision on a fact for one instance in `tx` (manager.ts): the decision applied, or undefined when there
 * is no such instance (or, with `onlyIfDue`, it is not due or another transaction holds it).
 */
/** An answer to one of the process's commands: the stamp it carried back, and whether it says the step failed. */
export interface AnswerSource {
  stamp: ProcessStamp
  failure: boolean
}

export type ApplyDecision = (
  type: string,
  key: string,
  fact: { kind: string },
  tx: Queryable,
  source?: FactSource,
  options?: { onlyIfDue?: boolean; answer?: AnswerSource },
) => Promise<Decision<InstanceBase, unknown> | undefined>

export const processHref = (type: string, key: string) =>
  `/api/v1/admin/processes/${type}/${encodeURIComponent(key)}`

/**
 * Whether the instance's decision takes an operator's `fact` now. A refusal (409) is no action to offer, nor is a
 * decision that fails (an instance at a step its process no longer declares): the view still shows the instance.
 */
function accepts(definition: AnyProcessDefinition, instance: InstanceBase, fact: StandardFact): boolean {
  try {
    decideOn(definition, instance, fact)
    return true
  } catch {
    return false
  }
}

/** What an operator's request would say (its reason only ends up in a log line the dry run never writes). */
const offeredFacts = {
  retry: { kind: 'operator.retry' },
  compensate: { kind: 'operator.compensate', reason: 'offered to operators' },
} as const satisfies Record<string, StandardFact>

/**
 * An instance as operators read it: its row, its log if given, and its links — retry and compensate only where its
 * decision would take them (a dry run on `instance`, restored with its owner: no link answers 409).
 */
export function presentInstance(
  definition: AnyProcessDefinition | undefined,
  stored: StoredInstance,
  log?: ProcessLogEntry[],
  instance?: InstanceBase,
): ProcessInstance {
  const self = processHref(stored.type, stored.key)
  const escalated = stored.escalation !== null || stored.compensation === 'escalated'
  const links: ProcessInstance['_links'] = {
    self: { href: self, method: 'GET' },
    ...(definition?.links?.(stored.key, stored) ?? {}),
  }
  if (definition && instance) {
    for (const [action, fact] of Object.entries(offeredFacts)) {
      if (accepts(definition, instance, fact)) links[action] = { href: `${self}/${action}`, method: 'POST' }
    }
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

const logEntryOf = (line: StoredLogLine): ProcessLogEntry => ({
  step: line.step,
  outcome: line.outcome,
  ...(line.attempt === null ? {} : { attempt: line.attempt }),
  ...(line.eventType === null ? {} : { eventType: line.eventType }),
  ...(line.eventId === null ? {} : { eventId: line.eventId }),
  ...(line.detail === null ? {} : { detail: line.detail }),
  at: line.at.toISOString(),
})

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

export interface OperatorsViewOptions {
  sql: Sql
  store: ProcessStore
  processes: readonly AnyProcessDefinition[]
  /** the declaration of a type; 404 for an unknown one */
  definitionOf(type: string): AnyProcessDefinition
  apply: ApplyDecision
}

/** The operators' reads and actions over the manager's store and decisions. */
export function operatorsView({ sql, store, processes, definitionOf, apply }: OperatorsViewOptions) {
  const declared = (type: string) => processes.find((definition) => definition.type === type)

  /** The instances of `rows` presented, each restored with its owner (read in one statement per type). */
  async function presentAll(
    rows: readonly StoredInstance[],
    log?: ProcessLogEntry[],
  ): Promise<ProcessInstance[]> {
    const owners = new Map<string, Map<string, Record<string, unknown>>>()
    for (const type of new Set(rows.map((row) => row.type))) {
      const owner = declared(type)?.owner
      const keys = rows.filter((row) => row.type === type).map((row) => row.key)
      owners.set(type, owner ? await store.ownersOf(owner.select, keys) : new Map())
    }
    return rows.map((stored) => {
      const definition = declared(stored.type)
      const ownerRow = owners.get(stored.type)?.get(stored.key)
      // an instance whose owner row is gone cannot be decided on: no action is offered
      const restorable = definition && (!definition.owner || ownerRow !== undefined)
      const instance = restorable
        ? restoredInstance(definition, stored, ownerOf(definition, ownerRow))
        : undefined
      return presentInstance(definition, stored, log, instance)
    })
  }

  const present = async (stored: StoredInstance, log?: ProcessLogEntry[]): Promise<ProcessInstance> =>
    (await presentAll([stored], log))[0] as ProcessInstance

  const logOf = async (type: string, key: string): Promise<ProcessLogEntry[]> =>
    (await store.logOf(type, key)).map(logEntryOf)

  async function get(type: string, key: string): Promise<ProcessInstance> {
    definitionOf(type)
    const stored = await store.find(type, key)
    if (!stored) throw AppError.notFound(`No ${type} process ${key}`)
    return present(stored, await logOf(type, key))
  }

  /** An operator's action on one instance: 404 without one, 409 when its state refuses it; the instance after. */
  async function operatorAction(
    type: string,
    key: string,
    fact: StandardFact,
    audit?: AuditSource,
  ): Promise<ProcessInstance> {
    definitionOf(type)
    try {
      await transaction(sql, async (tx) => {
        const applied = await apply(type, key, fact, tx, { eventType: 'operator', eventId: fact.kind })
        if (!applied) throw AppError.notFound(`No ${type} process ${key}`)
        // with the decision or not at all (service-kit's audit trail)
        if (audit) {
          await appendAudit(tx, audit, {
            action: `process.${fact.kind === 'operator.retry' ? 'retried' : 'compensated'}`,
            target: `process:${type}:${key}`,
            detail: fact.kind === 'operator.compensate' ? { reason: fact.reason } : {},
          })
        }
      })
    } catch (error) {
      if (error instanceof ProcessConflict) throw AppError.conflict(error.message)
      throw error
    }
    return get(type, key)
  }

  return {
    present,
    logOf,
    get,

    types: (): ProcessType[] => processTypes(processes),

    async list(query: ProcessListQuery, path: string): Promise<ListEnvelope<ProcessInstance>> {
      if (query.type !== undefined) definitionOf(query.type)
      const request = store.listRequest(query)
      const { rows, total } = await store.list(request)
      return listEnvelope(path, query, request, await presentAll(rows), total)
    },

    retry: (type: string, key: string, audit?: AuditSource) =>
      operatorAction(type, key, { kind: 'operator.retry' }, audit),

    compensate: (type: string, key: string, reason = 'compensated by an operator', audit?: AuditSource) =>
      operatorAction(type, key, { kind: 'operator.compensate', reason }, audit),
  }
}
