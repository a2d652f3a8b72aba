// An instance from its row and its owner's, as a decision and the operators' view both see it, and what its row keeps
// of it: the row's own fields, the process's declared data (definition.data) and its owner's fields (fromOwner).
import { Value } from 'typebox/value'
import type { AnyProcessDefinition, InstanceBase, Scalar, StoredInstance } from './definition.ts'

/**
 * A forward step's escalation lives in the row's `escalation` (a compensation's in `compensation`): the instance is
 * restored with `escalated: true` from there, so the mechanics see what the operators see (a retry starts its
 * attempts over, a late failure escalates nothing again).
 */
const escalatedIn = (stored: StoredInstance): boolean =>
  stored.escalation !== null && stored.compensation !== 'escalated'

/** The owner a process's row was read with (as to_jsonb gave it), when the process has one. */
export const ownerOf = (
  definition: AnyProcessDefinition,
  ownerRow: Record<string, unknown> | null | undefined,
) => (definition.owner && ownerRow ? definition.owner.read(ownerRow) : undefined)

/** The instance of `stored` with its owner (ownerOf): its row's fields, its declared data, its owner's fields. */
export function restoredInstance(
  definition: AnyProcessDefinition,
  stored: StoredInstance,
  owner: unknown,
): InstanceBase {
  const own: Record<string, Scalar> = {}
  for (const field of Object.keys(definition.data.properties)) own[field] = stored.data[field] ?? null
  if (!Value.Check(definition.data, own)) {
    const [first] = Value.Errors(definition.data, own)
    throw new Error(
      `the ${definition.type} instance ${stored.key} keeps data its declaration refuses: ${first?.instancePath ?? ''} ${first?.message ?? ''}`,
    )
  }
  return {
    state: stored.state,
    step: stored.step,
    attempt: stored.attempt,
    compensation: stored.compensation,
    failedStep: stored.failedStep,
    failureReason: stored.failureReason,
    ...own,
    ...(owner === undefined ? {} : (definition.fromOwner?.(owner) ?? {})),
    ...(escalatedIn(stored) ? { escalated: true } : {}),
  }
}

/** What the row's `data` keeps of an instance: its declared fields that are not null. */
export function persistedData(
  definition: AnyProcessDefinition,
  instance: InstanceBase,
): Record<string, Scalar> {
  const fields = instance as unknown as Record<string, Scalar | undefined>
  const data: Record<string, Scalar> = {}
  for (const field of Object.keys(definition.data.properties)) {
    const value = fields[field]
    if (value !== null && value !== undefined) data[field] = value
  }
  return data
}
