// No function, method or class of shipped code over 180 lines (STYLE.md, convention 10): every .ts file under
// packages/*/src and services/*/src measured by the compiler's parser. Proved first on made-up sources.
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import { longDefinitions } from './function-length.ts'
import { readRepository } from './import-boundaries.ts'

/** The most lines a function or class may span, its first line to its last. */
const limit = 180

const repositoryRoot = fileURLToPath(new URL('../../../', import.meta.url))
const shippedCode = /^(packages|services)\/[^/]+\/src\/.*\.ts$/

/** A body of `count` statement lines. */
const statements = (count: number): string =>
  Array.from({ length: count }, (_, at) => `  step(${at})`).join('\n')

describe('function length', () => {
  it('when a definition of each kind runs past the limit, then each is named with its file, line and length', () => {
    const text = [
      '// made up',
      `export function declared() {\n${statements(5)}\n}`,
      `export const arrow = () => {\n${statements(5)}\n}`,
      `export const expressed = function () {\n${statements(5)}\n}`,
      `export const useCases = {\n  method() {\n${statements(3)}\n  },\n  property: () => {\n${statements(3)}\n  },\n}`,
      `export class Relay {\n  constructor() {\n${statements(3)}\n  }\n}`,
      `register(() => {\n${statements(5)}\n})`,
    ].join('\n')
    expect(longDefinitions('made/up.ts', text, 4)).toEqual([
      { path: 'made/up.ts', line: 2, name: 'declared', lines: 7 },
      { path: 'made/up.ts', line: 9, name: 'arrow', lines: 7 },
      { path: 'made/up.ts', line: 16, name: 'expressed', lines: 7 },
      { path: 'made/up.ts', line: 24, name: 'method', lines: 5 },
      { path: 'made/up.ts', line: 29, name: 'property', lines: 5 },
      { path: 'made/up.ts', line: 35, name: 'Relay', lines: 7 },
      { path: 'made/up.ts', line: 36, name: 'constructor', lines: 5 },
      { path: 'made/up.ts', line: 42, name: '(anonymous)', lines: 7 },
    ])
  })

  it('when definitions are at the limit, or only comments and signatures are long, then nothing is named', () => {
    const comment = Array.from({ length: 10 }, () => ' * why').join('\n')
    const text = [
      `/**\n${comment}\n */`,
      `export function atTheLimit() {\n${statements(2)}\n}`,
      `export interface Port {\n${Array.from({ length: 10 }, (_, at) => `  call${at}(): void`).join('\n')}\n}`,
      `export function overloaded(a: string): void\nexport function overloaded(a: number): void`,
      `export function overloaded(a: unknown) {\n  step(a)\n}`,
    ].join('\n')
    expect(longDefinitions('made/up.ts', text, 4)).toEqual([])
  })

  it('when every .ts file under packages/*/src and services/*/src is measured, then none is over 180 lines', () => {
    const { files } = readRepository(repositoryRoot)
    const measured = files.filter(({ path }) => shippedCode.test(path))
    expect(measured.length, 'shipped code was read').toBeGreaterThan(100)
    const found = measured.flatMap(({ path, text }) => longDefinitions(path, text, limit))
    const long = found.map(({ path, line, name, lines }) => `${path}:${line} ${name} is ${lines} lines`)
    expect(long, `split these into named pieces (STYLE.md, convention 10): over ${limit} lines`).toEqual([])
  })
})
