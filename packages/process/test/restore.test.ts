// An instance restored from its row by the module, and what the row keeps of it: the row's own fields, the process's
// declared data (a TypeBox object of nullable scalars) and its owner's fields; escalated from the row's escalation;
// a row whose data its declaration refuses is refused, never guessed at.
import { describe, expect, it } from 'vitest'
import type { StoredInstance } from '../src/index.ts'
import { persistedData, restoredInstance } from '../src/restore.ts'
import { renewalProcess } from './support/renewal.ts'

const stored = (changes: Partial<StoredInstance> = {}): StoredInstance => ({
  type: 'renewal',
  key: 'sub-1',
  state: 'charged',
  step: 'extend',
  attempt: 2,
  deadline: null,
  compensation: 'none',
  failedStep: null,
  failureReason: null,
  escalation: null,
  data: { paymentId: 'pay-1' },
  createdAt: new Date(0),
  updatedAt: new Date(0),
  ...changes,
})

describe('an instance from its row', () => {
  it('when a row is restored, then it has the row’s fields, its declared data and its owner’s fields', () => {
    expect(restoredInstance(renewalProcess, stored(), { periods: 3 })).toEqual({
      state: 'charged',
      step: 'extend',
      attempt: 2,
      compensation: 'none',
      failedStep: null,
      failureReason: null,
      paymentId: 'pay-1',
      periods: 3,
    })
  })

  it('when a declared field is absent from the row, then it is null; when the row was escalated on a forward step, then escalated', () => {
    const restored = restoredInstance(renewalProcess, stored({ data: {}, escalation: 'no answer' }), {
      periods: 0,
    })
    expect(restored).toMatchObject({ paymentId: null, escalated: true })
  })

  it('when the row keeps data its declaration refuses, then restoring it throws naming the instance', () => {
    expect(() =>
      restoredInstance(renewalProcess, stored({ data: { paymentId: 42 } }), { periods: 0 }),
    ).toThrow(/renewal instance sub-1 keeps data its declaration refuses: \/paymentId/)
  })

  it('when an instance is persisted, then its declared fields that are not null are kept, and nothing else', () => {
    const instance = restoredInstance(renewalProcess, stored(), { periods: 3 })
    expect(persistedData(renewalProcess, instance)).toEqual({ paymentId: 'pay-1' })
    expect(persistedData(renewalProcess, { ...instance, paymentId: null } as typeof instance)).toEqual({})
  })
})
