// Named carriers' keys (RETURNS_CARRIER_KEYS: `name=key` pairs): the variable's shape, the pairs read from it, and
// the carrier a presented key names — the piece that binds a receipt to one carrier.
import { Value } from 'typebox/value'
import { describe, expect, it } from 'vitest'
import { carrierOfKey, namedCarrierKeysIn, namedCarrierKeysVariable } from '../src/index.ts'

const variable = namedCarrierKeysVariable('receive returns')

describe('named carrier keys', () => {
  it('when the value is name=key pairs (white space around separators, a carrier with two keys), then each pair is read once', () => {
    const value =
      ' ups=ups-key-0123456789abcdef , dhl=dhl-key-0123456789abcdef,ups=ups-next-0123456789abcdef,ups=ups-key-0123456789abcdef'
    expect(Value.Check(variable, value)).toBe(true)
    expect(namedCarrierKeysIn(value)).toEqual([
      { carrier: 'ups', key: 'ups-key-0123456789abcdef' },
      { carrier: 'dhl', key: 'dhl-key-0123456789abcdef' },
      { carrier: 'ups', key: 'ups-next-0123456789abcdef' },
    ])
    expect(Value.Check(variable, '')).toBe(true)
    expect(namedCarrierKeysIn('')).toEqual([])
  })

  it('when an entry has no name, a name out of shape or a short key, then the value does not pass', () => {
    for (const value of [
      'a-bare-key-without-a-name-0001',
      '=a-key-without-a-name-00001',
      'UPS=ups-key-0123456789abcdef',
      'my carrier=ups-key-0123456789abcdef',
      `${'x'.repeat(41)}=ups-key-0123456789abcdef`,
      'ups=short',
      'ups=ups-key-0123456789abcdef,',
    ]) {
      expect(Value.Check(variable, value), value).toBe(false)
    }
  })

  it('when a key is presented, then the carrier it names answers; any other key (a prefix, another case) none', () => {
    const carrierOf = carrierOfKey(
      namedCarrierKeysIn(
        'ups=ups-key-0123456789abcdef,dhl=dhl-key-0123456789abcdef,ups=ups-next-0123456789abcdef',
      ),
    )
    expect(carrierOf('ups-key-0123456789abcdef')).toBe('ups')
    expect(carrierOf('ups-next-0123456789abcdef')).toBe('ups')
    expect(carrierOf('dhl-key-0123456789abcdef')).toBe('dhl')
    for (const wrong of [
      'ups-key-0123456789abcde',
      'UPS-KEY-0123456789ABCDEF',
      '',
      'ups=ups-key-0123456789abcdef',
    ]) {
      expect(carrierOf(wrong), wrong).toBeUndefined()
    }
    expect(carrierOfKey([])('anything-at-all-0001')).toBeUndefined()
  })

  it('when one key is given to two carriers, then it is refused at start naming both carriers and never the key', () => {
    const shared = 'shared-key-0123456789abcdef'
    expect(() => carrierOfKey(namedCarrierKeysIn(`ups=${shared},dhl=${shared}`))).toThrow(
      /^(?![\s\S]*shared-key)[\s\S]*two carriers, ups and dhl/,
    )
  })
})
