// The scope catalogue: what a key can be made with, and the security page's table of it (docs/explanation/security.md), which must
// say the same; and the realtime channel's scopes, each of the catalogue, with that page's table of them.
import { readFileSync } from 'node:fs'
import { Value } from 'typebox/value'
import { describe, expect, it } from 'vitest'
import { CreateApiKeyBody } from '../src/auth.ts'
import { realtimeScopes } from '../src/realtime.ts'
import { ApiKeyScope, apiScopeNames, apiScopes, isApiScope } from '../src/scopes.ts'

/** The cells of each row of docs/explanation/security.md's table that starts with `header` after `heading`, backquotes removed. */
function readmeTable(heading: string, header: string): string[][] {
  const readme = readFileSync(new URL('../../../docs/explanation/security.md', import.meta.url), 'utf8')
  const section = readme.slice(readme.indexOf(heading))
  const table = section.slice(section.indexOf(header))
  const rows = table.split('\n').slice(2)
  const end = rows.findIndex((row) => !row.startsWith('|'))
  return rows.slice(0, end).map((row) =>
    row
      .split('|')
      .slice(1, -1)
      .map((cell) => cell.trim()),
  )
}

/** The rows of the security page's "API scopes" table: scope -> what it allows. */
const readmeScopeTable = () =>
  readmeTable('## API scopes', '| scope | allows |').map(([scope = '', allows = '']) => [
    scope.replaceAll('`', ''),
    allows,
  ])

/** the security page's realtime table as realtimeScopes.namespaces says it: `events: scope` groups, `none` for null. */
const readmeRealtimeTable = () =>
  readmeTable("### The realtime channel's scopes", '| namespace | to connect | to send |').map(
    ([namespace = '', connect = '', send = '']) => {
      const scopeOf = (cell: string) => (cell === 'none' ? null : cell)
      const events: Record<string, string | null> = {}
      for (const group of send.replaceAll('`', '').split(' · ')) {
        const [names = '', scope = ''] = group.split(': ')
        for (const name of names.split(', ')) events[name] = scopeOf(scope)
      }
      return [namespace.replaceAll('`', ''), { connect: scopeOf(connect.replaceAll('`', '')), events }]
    },
  )

describe('contracts: the scope catalogue', () => {
  it("when the security page's table of scopes is read, then it lists the catalogue in order, each with its description", () => {
    expect(readmeScopeTable()).toEqual(Object.entries(apiScopes))
  })

  it("when the security page's table of the realtime channel's scopes is read, then it says what realtimeScopes says of each namespace and event", () => {
    expect(Object.fromEntries(readmeRealtimeTable())).toEqual(realtimeScopes.namespaces)
  })

  it('when the realtime channel names scopes, then each is of the catalogue', () => {
    const named = Object.values(realtimeScopes.namespaces).flatMap(({ connect, events }) => [
      connect,
      ...Object.values(events),
    ])
    for (const scope of named) if (scope !== null) expect(isApiScope(scope), scope).toBe(true)
    // what a namespace carries is read: each connects with a read scope
    for (const { connect } of Object.values(realtimeScopes.namespaces)) expect(connect).toMatch(/:read$/)
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
