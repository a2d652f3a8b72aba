// The SDK runs in browsers and outside the monorepo: its sources import no Node built-ins, use no Node-only globals,
// and take only types from the private @meridian/contracts.
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'

const srcDir = join(import.meta.dirname, '..', 'src')
const sources = readdirSync(srcDir, { recursive: true, encoding: 'utf8' })
  .filter((file) => file.endsWith('.ts'))
  .map((file) => ({ file, text: readFileSync(join(srcDir, file), 'utf8') }))

describe('browser safety', () => {
  it('when the sources are read, then none imports a Node built-in or uses Buffer, process or require', () => {
    expect(sources.length).toBeGreaterThan(0)
    const nodeOnly = /from ['"]node:|import\(['"]node:|\bBuffer\b|\bprocess\.|\brequire\(/
    const offenders = sources.filter(({ text }) => nodeOnly.test(text)).map(({ file }) => file)
    expect(offenders).toEqual([])
  })

  it('when the sources import packages, then only socket.io-client and @meridian/contracts', () => {
    const imported = new Set(
      sources.flatMap(({ text }) => [...text.matchAll(/from '([^.'][^']*)'/g)].map((match) => match[1])),
    )
    expect([...imported].sort()).toEqual(['@meridian/contracts', 'socket.io-client'])
  })

  it('when the sources name @meridian/contracts, then only for types (the packed SDK cannot load it)', () => {
    const statements = sources.flatMap(({ text }) => [
      ...text.matchAll(/\b(?:import|export)\b[^;'"]*?from '@meridian\/contracts'/g),
    ])
    expect(statements.length).toBeGreaterThan(0)
    for (const [statement] of statements) expect(statement).toMatch(/^(?:import|export) type\b/)
  })
})
