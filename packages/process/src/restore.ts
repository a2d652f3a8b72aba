// An instance from its row and its owner's, as a decision and the operators' view both see it.
import type { AnyProcessDefinition, InstanceBase, StoredInstance } from './definition.ts'

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

/** The owner a process's row was read with (as to_jsonb gave it), when the process has one. */
export const ownerOf = (
  definition: AnyProcessDefinition,
  ownerRow: Record<string, unknown> | null | undefined,
) => (definition.owner && ownerRow ? definition.owner.read(ownerRow) : undefined)

/** The instance of `stored` with its owner (ownerOf). */
export function restoredInstance(
  definition: AnyProcessDefinition,
  stored: StoredInstance,
  owner: unknown,
): InstanceBase {
  return escalatedFromRow(definition.restore(stored, owner), stored)
}
