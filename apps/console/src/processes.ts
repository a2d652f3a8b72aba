// The Processes view's rules as plain data (no DOM): which states a type filter offers, what a filter asks
// /api/v1/admin/processes for, where one instance is read, and how its actions are named. The view draws them; the
// unit tests read them.
import type { ProcessType } from '@meridian/contracts'

/** What the operator chose: a type ('' for every type), a state ('' for every state), only escalated instances. */
export interface ProcessFilter {
  type: string
  state: string
  escalatedOnly: boolean
}

export const processesPath = '/api/v1/admin/processes'

/** How many instances one read shows: the most recently updated. */
export const listLimit = 50

/**
 * The states the state filter offers for `type`: its own, in the order it declares them; for every type ('' or a
 * type the service no longer declares), each state of any type once, in the order the types declare them.
 */
export function statesOf(types: readonly ProcessType[], type: string): string[] {
  const chosen = types.find((each) => each.type === type)
  if (chosen) return [...chosen.states]
  return [...new Set(types.flatMap((each) => each.states))]
}

/** The state kept when the type changes: the chosen one while the new type has it, else every state (''). */
export const stateKept = (states: readonly string[], state: string): string =>
  states.includes(state) ? state : ''

/** The query of GET /admin/processes for a filter: newest updates first, and only the filters that narrow. */
export function processListQuery(filter: ProcessFilter): URLSearchParams {
  const query = new URLSearchParams({ limit: String(listLimit), sort: 'updatedAt:desc' })
  if (filter.type) query.set('type', filter.type)
  if (filter.state) query.set('state', filter.state)
  if (filter.escalatedOnly) query.set('escalated', 'true')
  return query
}

/** GET /admin/processes/{type}/{id}: where one instance is read with its step log. */
export const instancePath = (type: string, id: string): string =>
  `${processesPath}/${encodeURIComponent(type)}/${encodeURIComponent(id)}`

/** One filter as one string: a list read for one filter is never taken for another's. */
export const filterKey = (filter: ProcessFilter): string =>
  `${filter.type}|${filter.state}|${filter.escalatedOnly ? 'escalated' : 'any'}`

/** A name as the page shows it ('payment_processed' → 'payment processed'). */
export const spaced = (name: string): string => name.replaceAll('_', ' ')

/** What a filter lists, in words ('escalated failed order processes'): the list's loading and empty states say it. */
export function filterInWords(filter: ProcessFilter): string {
  const words = [
    filter.escalatedOnly ? 'escalated' : '',
    filter.state ? spaced(filter.state) : '',
    filter.type ? spaced(filter.type) : '',
    'processes',
  ]
  return words.filter((word) => word !== '').join(' ')
}

/** The Compensate button's label: what the type's compensations undo, when it declares any. */
export function compensateLabel(types: readonly ProcessType[], type: string): string {
  const undo = (types.find((each) => each.type === type)?.steps ?? [])
    .filter((step) => step.kind === 'compensation')
    .map((step) => spaced(step.name))
  return undo.length > 0 ? `Compensate (${undo.join(', ')})` : 'Compensate'
}

/** A type's name as a heading starts ('order' → 'Order', 'return' → 'Return'). */
export const typeTitle = (type: string): string => {
  const words = spaced(type)
  return words.charAt(0).toUpperCase() + words.slice(1)
}
