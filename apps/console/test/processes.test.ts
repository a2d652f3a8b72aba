// The Processes view's rules (src/processes.ts): the states a type filter offers, the list's query from the filters,
// where an instance is read, and the names the view shows.
import type { ProcessType } from '@meridian/contracts'
import { describe, expect, it } from 'vitest'
import {
  compensateLabel,
  filterInWords,
  filterKey,
  instancePath,
  type ProcessFilter,
  processListQuery,
  stateKept,
  statesOf,
  typeTitle,
} from '../src/processes.ts'

const step = (name: string, kind: 'forward' | 'compensation') => ({
  name,
  kind,
  attempts: 3,
  deadlineMs: 5000,
})

/** The two types the order service declares, as GET /admin/processes/types answers them. */
const types: ProcessType[] = [
  {
    type: 'order',
    description: 'The order saga',
    states: ['created', 'payment_processed', 'inventory_reserved', 'shipped', 'failed'],
    finalStates: ['shipped'],
    steps: [
      step('payment', 'forward'),
      step('inventory', 'forward'),
      step('shipment', 'forward'),
      step('release', 'compensation'),
      step('refund', 'compensation'),
    ],
  },
  {
    type: 'return',
    description: 'A return',
    states: ['requested', 'received', 'completed', 'rejected'],
    finalStates: ['completed', 'rejected'],
    steps: [step('restock', 'forward'), step('refund', 'forward')],
  },
]

const every: ProcessFilter = { type: '', state: '', escalatedOnly: false }

describe('statesOf', () => {
  it('when a type is chosen, then its own states are offered in the order it declares them', () => {
    expect(statesOf(types, 'return')).toEqual(['requested', 'received', 'completed', 'rejected'])
  })

  it('when every type is chosen, then each state of any type is offered once, in the types’ order', () => {
    expect(statesOf(types, '')).toEqual([
      'created',
      'payment_processed',
      'inventory_reserved',
      'shipped',
      'failed',
      'requested',
      'received',
      'completed',
      'rejected',
    ])
  })

  it('when the chosen type is not declared (any more), then the states of every type are offered', () => {
    expect(statesOf(types, 'subscription')).toEqual(statesOf(types, ''))
  })

  it('when no type is declared yet, then no state is offered', () => {
    expect(statesOf([], '')).toEqual([])
  })
})

describe('stateKept', () => {
  it('when the new type has the chosen state, then it stays chosen; else every state is', () => {
    expect(stateKept(statesOf(types, 'return'), 'requested')).toBe('requested')
    expect(stateKept(statesOf(types, 'return'), 'failed')).toBe('')
    expect(stateKept(statesOf(types, 'order'), '')).toBe('')
  })
})

describe('processListQuery', () => {
  it('when nothing narrows the list, then it asks for the 50 most recently updated instances of every type', () => {
    expect(Object.fromEntries(processListQuery(every))).toEqual({ limit: '50', sort: 'updatedAt:desc' })
  })

  it('when a type, a state and escalated only are chosen, then each is a parameter of the query', () => {
    const query = processListQuery({ type: 'return', state: 'received', escalatedOnly: true })
    expect(query.toString()).toBe('limit=50&sort=updatedAt%3Adesc&type=return&state=received&escalated=true')
  })

  it('when only a state is chosen, then the query has no type and no escalated parameter', () => {
    const query = processListQuery({ ...every, state: 'failed' })
    expect(query.has('type')).toBe(false)
    expect(query.has('escalated')).toBe(false)
    expect(query.get('state')).toBe('failed')
  })
})

describe('instancePath', () => {
  it('when an instance is opened, then it is read under its type and id', () => {
    expect(instancePath('return', '0b9c6f0e-3c1d-4d52-9a55-6f0f3d1c2b7a')).toBe(
      '/api/v1/admin/processes/return/0b9c6f0e-3c1d-4d52-9a55-6f0f3d1c2b7a',
    )
  })

  it('when a type or an id holds characters of a path or a query, then they are encoded, not followed', () => {
    expect(instancePath('order', '../../sagas?x=1#y')).toBe(
      '/api/v1/admin/processes/order/..%2F..%2Fsagas%3Fx%3D1%23y',
    )
  })
})

describe('filterKey', () => {
  it('when two filters differ in any choice, then their keys differ; the same choices give the same key', () => {
    const filters: ProcessFilter[] = [
      every,
      { ...every, type: 'order' },
      { ...every, state: 'failed' },
      { ...every, escalatedOnly: true },
      { type: 'order', state: 'failed', escalatedOnly: true },
    ]
    expect(new Set(filters.map(filterKey)).size).toBe(filters.length)
    expect(filterKey({ type: 'order', state: 'failed', escalatedOnly: true })).toBe(
      filterKey(filters[4] as ProcessFilter),
    )
  })
})

describe('names the view shows', () => {
  it('when a filter is said in words, then it names what narrows the list', () => {
    expect(filterInWords(every)).toBe('processes')
    expect(filterInWords({ type: 'order', state: 'payment_processed', escalatedOnly: true })).toBe(
      'escalated payment processed order processes',
    )
  })

  it('when a type declares compensations, then Compensate names them; when it declares none, it is bare', () => {
    expect(compensateLabel(types, 'order')).toBe('Compensate (release, refund)')
    expect(compensateLabel(types, 'return')).toBe('Compensate')
    expect(compensateLabel([], 'order')).toBe('Compensate')
  })

  it('when a type heads an instance, then it starts with a capital and reads as words', () => {
    expect(typeTitle('order')).toBe('Order')
    expect(typeTitle('multi_shipment')).toBe('Multi shipment')
  })
})
