// ./scripts/test's typecheck programs: which workspaces share one tsc program and which keep their own, and the one
// program's configuration. The partition of this repository is read from the repository itself.
import { describe, expect, it } from 'vitest'
import { repoRoot } from '../src/layout.ts'
import {
  declaresAugmentation,
  partitionPrograms,
  readWorkspaces,
  type TypecheckWorkspace,
  togetherConfig,
} from '../src/test-run/typecheck-programs.ts'

function workspace(overrides: Partial<TypecheckWorkspace> & { dir: string }): TypecheckWorkspace {
  return {
    name: `@meridian/${overrides.dir.split('/').at(-1)}`,
    compilerOptions: { noEmit: true, rootDir: '.' },
    include: ['src', 'test'],
    exclude: [],
    augmentations: [],
    ...overrides,
  }
}

describe('typecheck programs', () => {
  it('when a source augments a module or the global scope, then it is seen; an import or a plain declaration is not', () => {
    expect(declaresAugmentation("import x from 'y'\ndeclare module 'fastify' {\n  interface A {}\n}")).toBe(
      true,
    )
    expect(declaresAugmentation('  declare global {\n  var x: number\n}')).toBe(true)
    expect(declaresAugmentation("declare module 'vitest' { export interface ProvidedContext {} }")).toBe(true)
    expect(declaresAugmentation("declare const x: number\n// declare module 'fastify' {")).toBe(false)
    expect(declaresAugmentation('const text = "declare module \'x\' {"')).toBe(false)
  })

  it('when workspaces are partitioned, then other options or an augmentation outside a package src keep one apart', () => {
    const plain = workspace({ dir: 'services/order' })
    const kit = workspace({
      dir: 'packages/service-kit',
      augmentations: ['packages/service-kit/src/plugin.ts'],
    })
    const service = workspace({ dir: 'services/gateway', augmentations: ['services/gateway/src/app.ts'] })
    const packageTest = workspace({
      dir: 'packages/realtime-client',
      augmentations: ['packages/realtime-client/test/realtime-server.ts'],
    })
    const console = workspace({ dir: 'apps/console', compilerOptions: { noEmit: true, lib: ['DOM'] } })
    const built = workspace({ dir: 'infra', compilerOptions: { noEmit: true, rootDir: '.', outDir: 'dist' } })
    const { together, alone } = partitionPrograms([plain, kit, service, packageTest, console, built])
    expect(together.map((w) => w.dir)).toEqual(['services/order', 'packages/service-kit', 'infra'])
    expect(alone.map((w) => w.dir)).toEqual(['services/gateway', 'packages/realtime-client', 'apps/console'])
  })

  it("when the one program's configuration is written two folders down, then every path leads back to its workspace", () => {
    const config = togetherConfig(
      [
        workspace({ dir: 'services/order' }),
        workspace({ dir: 'packages/client', include: ['src'], exclude: ['test/outside'] }),
      ],
      2,
    )
    expect(config).toEqual({
      extends: '../../tsconfig.base.json',
      compilerOptions: { noEmit: true, rootDir: '../..' },
      include: ['../../services/order/src', '../../services/order/test', '../../packages/client/src'],
      exclude: ['../../**/node_modules', '../../packages/client/test/outside'],
    })
  })

  it('when this repository is read, then every workspace is in exactly one program and each kept apart says why', async () => {
    const workspaces = await readWorkspaces(repoRoot)
    expect(workspaces.length).toBeGreaterThan(10)
    const { together, alone } = partitionPrograms(workspaces)
    expect(together.length + alone.length).toBe(workspaces.length)
    expect(together.length).toBeGreaterThan(alone.length)
    expect(together.map((w) => w.name)).toContain('@meridian/service-kit')
    for (const apart of alone) {
      const ownOptions = Object.keys(apart.compilerOptions).filter(
        (key) => !['noEmit', 'rootDir'].includes(key),
      )
      expect(ownOptions.length + apart.augmentations.length, apart.name).toBeGreaterThan(0)
    }
  })
})
