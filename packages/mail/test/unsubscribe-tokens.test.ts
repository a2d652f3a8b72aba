// Signed one-click unsubscribe tokens: what one signs verifies; any change of payload or signature, another secret, or
// a malformed token does not; a rotated list (`new,old`) accepts both and signs with the new one.
import { describe, expect, it } from 'vitest'
import { maximumTokenLength, unsubscribeTokens } from '../src/index.ts'

const oldSecret = 'old-unsubscribe-secret-0123456789abcdef'
const newSecret = 'new-unsubscribe-secret-0123456789abcdef'
const claim = {
  userId: '6c3b2d5e-0000-4000-8000-000000000001',
  type: 'order_placed',
  address: 'ada@example.com',
}

const swapCharacter = (text: string, at: number) =>
  `${text.slice(0, at)}${text[at] === 'A' ? 'B' : 'A'}${text.slice(at + 1)}`

describe('unsubscribe tokens', () => {
  it('when a token is signed, then it is base64url in two parts and verifies to its claim', () => {
    const tokens = unsubscribeTokens(newSecret)
    const token = tokens.sign(claim)
    expect(token).toMatch(/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{43}$/)
    expect(tokens.verify(token)).toEqual(claim)
    expect(tokens.sign(claim)).toBe(token)
  })

  it('when the payload or the signature is changed, then the token does not verify', () => {
    const tokens = unsubscribeTokens(newSecret)
    const token = tokens.sign(claim)
    const [payload = '', signature = ''] = token.split('.')
    const otherUser = Buffer.from(
      JSON.stringify(['6c3b2d5e-0000-4000-8000-000000000002', claim.type, claim.address]),
    ).toString('base64url')
    const otherType = Buffer.from(JSON.stringify([claim.userId, 'welcome', claim.address])).toString(
      'base64url',
    )
    expect(tokens.verify(`${otherUser}.${signature}`)).toBeUndefined()
    expect(tokens.verify(`${otherType}.${signature}`)).toBeUndefined()
    expect(tokens.verify(`${payload}.${swapCharacter(signature, 5)}`)).toBeUndefined()
    expect(tokens.verify(`${payload}.${signature.slice(0, -2)}`)).toBeUndefined()
    expect(tokens.verify(`${swapCharacter(payload, 3)}.${signature}`)).toBeUndefined()
  })

  it('when a token is malformed, then it is refused without an error', () => {
    const tokens = unsubscribeTokens(newSecret)
    const signature = tokens.sign(claim).split('.')[1]
    for (const bad of [
      '',
      '.',
      'abc',
      'a.b.c',
      `${Buffer.from('not json').toString('base64url')}.${signature}`,
      `${Buffer.from('[1,2,3]').toString('base64url')}.${signature}`,
      `${Buffer.from('["a","b"]').toString('base64url')}.${signature}`,
      `a+b/.${signature}`,
      `${'a'.repeat(maximumTokenLength)}.${signature}`,
    ])
      expect(tokens.verify(bad), bad.slice(0, 40)).toBeUndefined()
  })

  it('when signed under another secret, then it does not verify', () => {
    expect(unsubscribeTokens(newSecret).verify(unsubscribeTokens(oldSecret).sign(claim))).toBeUndefined()
  })

  it('when the secret is rotated (new,old), then tokens of both verify and new ones are signed with the new secret', () => {
    const rotated = unsubscribeTokens(`${newSecret},${oldSecret}`)
    const underOld = unsubscribeTokens(oldSecret).sign(claim)
    expect(rotated.verify(underOld)).toEqual(claim)
    const fresh = rotated.sign(claim)
    expect(unsubscribeTokens(newSecret).verify(fresh)).toEqual(claim)
    expect(unsubscribeTokens(oldSecret).verify(fresh)).toBeUndefined()
  })

  it('when the secret list is empty, then no tokens can be made', () => {
    expect(() => unsubscribeTokens(',')).toThrow(/no secret/)
  })
})
