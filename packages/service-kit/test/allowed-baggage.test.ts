// W3C baggage passes only with the keys a deployment names (TRACING_BAGGAGE_KEYS): the propagator's own behaviour,
// on a plain carrier. (tracing.test.ts shows a caller's baggage not reaching the next service by default.)
import { context, defaultTextMapGetter, defaultTextMapSetter, propagation } from '@opentelemetry/api'
import { describe, expect, it } from 'vitest'
import { AllowedBaggagePropagator } from '../src/tracing/allowed-baggage.ts'
import { baggageKeysOf } from '../src/tracing/tracing-env.ts'

const carried = (propagator: AllowedBaggagePropagator, baggage: string): Record<string, string> => {
  const extracted = propagator.extract(context.active(), { baggage }, defaultTextMapGetter)
  const outgoing: Record<string, string> = {}
  propagator.inject(extracted, outgoing, defaultTextMapSetter)
  return outgoing
}

describe('allowed baggage', () => {
  it('when no key is allowed, then nothing is extracted and nothing is injected', () => {
    const propagator = new AllowedBaggagePropagator([])
    const extracted = propagator.extract(context.active(), { baggage: 'tenant=acme' }, defaultTextMapGetter)
    expect(propagation.getBaggage(extracted)).toBeUndefined()
    expect(carried(propagator, 'tenant=acme')).toEqual({})
    expect(propagator.fields()).toEqual([])
  })

  it('when tenant is allowed, then only tenant passes on; with no allowed entry, no baggage at all', () => {
    const propagator = new AllowedBaggagePropagator(['tenant'])
    expect(carried(propagator, 'tenant=acme,secret=s3cr3t,other=1')).toEqual({ baggage: 'tenant=acme' })
    expect(carried(propagator, 'secret=s3cr3t')).toEqual({})
  })

  it('when TRACING_BAGGAGE_KEYS is read, then it is a list of keys, empty when unset', () => {
    expect(baggageKeysOf({})).toEqual([])
    expect(baggageKeysOf({ TRACING_BAGGAGE_KEYS: 'tenant,region' })).toEqual(['tenant', 'region'])
  })
})
