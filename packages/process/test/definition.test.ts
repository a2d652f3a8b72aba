// What defineProcess and the manager refuse in a declaration, before any instance exists.
import type { Sql } from '@meridian/db'
import { describe, expect, it } from 'vitest'
import { defineProcess } from '../src/definition.ts'
import { createProcessManager } from '../src/manager.ts'
import { renewalProcess } from './support/renewal.ts'

const declaredAs = (changes: Partial<typeof renewalProcess>) => () =>
  defineProcess({ ...renewalProcess, ...changes })

describe('defineProcess', () => {
  it('when a declaration is sound, then it is returned as it is', () => {
    expect(declaredAs({})()).toEqual(renewalProcess)
  })

  it('when the type is not lower case letters, digits and _ (at most 40), then it throws naming it', () => {
    for (const type of ['Renewal', 'renewal-2', '2renewal', '', 'r'.repeat(41)]) {
      expect(declaredAs({ type }), type).toThrow(`process type '${type}' must be lower case`)
    }
  })

  it('when a final state is not one of the states, then it throws naming it', () => {
    expect(declaredAs({ finalStates: ['renewed', 'expired' as 'renewed'] })).toThrow(
      "final state 'expired' is not one of the states",
    )
  })

  it('when a step has no attempt or a negative deadline, then it throws naming it', () => {
    const { charge } = renewalProcess.steps
    if (!charge) throw new Error('the renewal declares charge')
    expect(declaredAs({ steps: { ...renewalProcess.steps, charge: { ...charge, attempts: 0 } } })).toThrow(
      "step 'charge' needs attempts ≥ 1",
    )
    expect(declaredAs({ steps: { ...renewalProcess.steps, charge: { ...charge, deadlineMs: -1 } } })).toThrow(
      "step 'charge' needs attempts ≥ 1, deadline ≥ 0",
    )
  })

  it('when a forward step names a compensation that is not a compensation step, then it throws naming both', () => {
    const { charge } = renewalProcess.steps
    if (!charge) throw new Error('the renewal declares charge')
    expect(
      declaredAs({ steps: { ...renewalProcess.steps, charge: { ...charge, compensation: 'extend' } } }),
    ).toThrow("step 'charge' names 'extend' as its compensation: no such compensation step")
  })

  it('when an event is routed by its key alone and the process has no answer route for it, then it throws naming it', () => {
    const byKey = { key: ({ orderId }: { orderId: string }) => orderId }
    expect(declaredAs({ events: { 'shipment.created': byKey } })).toThrow(
      "event 'shipment.created' is routed by its key alone: it needs an answer route for its fact",
    )
  })
})

describe('createProcessManager', () => {
  it('when two processes declare the same type, then it throws naming it', () => {
    expect(() =>
      createProcessManager({ sql: {} as Sql, processes: [renewalProcess, { ...renewalProcess }] }),
    ).toThrow("process type 'renewal' is declared twice")
  })
})
