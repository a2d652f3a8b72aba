// The scope catalogue: what a key can be made with, and README's table of it, which must say the same.
import { readFileSync } from 'node:fs'
import { Value } from 'typebox/value'
import { describe, expect, it } from 'vitest'
import { CreateApiKeyBody } from '../src/auth.ts'
import { ApiKeyScope, apiScopeNames, apiScopes, isApiScope } from '../src/scopes.ts'

/** The rows of README's "API scopes" table: scope -> what it allows. */
function readmeScopeTable(): [string, string][] {
  const readme = readFileSync(new URL('../../../README.md', import.meta.url), 'utf8')
  const section = readme.slice(readme.indexOf('### API scopes'))
  const table = section.slice(section.indexOf('| scope | allows |'))
  const rows = table.split('\n').slice(2)
  const end = rows.findIndex((row) => !row.startsWith('|'))
  return rows.slice(0, end).map((row) => {
    const [scope = '', allows = ''] = row
      .split('|')
      .slice(1, -1)
      .map((cell) => cell.trim())
    return [scope.replaceAll('`', ''), allows]
  })
}

describe('contracts: the scope catalogue', () => {
  it("when README's table of scopes is read, then it lists the catalogue in order, each with its description", () => {
    expect(readmeScopeTable()).toEqual(Object.entries(apiScopes))
  })

  it('when scopes are named, then each is a resource or admin with read or write, and both of admin are there', () => {
    for (const scope of apiScopeNames) expect(scope).toMatch(/^[a-z][a-z-]*:(read|write)$/)
    expect(apiScopeNames).toEqual(expect.arrayContaining(['admin:read', 'admin:write']))
    expect(isApiScope('orders:read')).toBe(true)
    expect(isApiScope('toString')).toBe(false)
    expect(isApiScope('widgets:read')).toBe(false)
  })

  it('when a key is created, then it names one or more scopes of the catalogue, each once', () => {
    const body = (scopes: unknown) => ({ name: 'ci', scopes })
    expect(Value.Check(CreateApiKeyBody, body(['orders:read', 'admin:write']))).toBe(true)
    expect(Value.Check(CreateApiKeyBody, body(apiScopeNames))).toBe(true)
    for (const scopes of [[], ['widgets:read'], ['orders:read', 'orders:read'], ['Orders:Read'], undefined]) {
      expect(Value.Check(CreateApiKeyBody, body(scopes)), JSON.stringify(scopes)).toBe(false)
    }
    expect(Value.Check(ApiKeyScope, 'openid')).toBe(false)
  })
})
