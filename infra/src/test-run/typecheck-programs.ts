// Which TypeScript programs ./scripts/test checks. Each workspace's own typecheck (`pnpm typecheck`) builds one
// program per workspace, and each of them parses and checks the kit, the contracts and every package it imports
// again: 21 programs read the same sources 21 times (105 s of a run on two cores). One program over the workspaces
// that share the base options checks each file once (18 s). A workspace stays a program of its own when joining
// would change its verdict: other compiler options (the console's DOM), or a module augmentation of its own
// (`declare module 'fastify'` in a service, `declare module 'vitest'` in a suite), which one shared program would
// lend every other workspace. An augmentation in a package's src is part of what the package exports, seen by every
// workspace that imports it, so it does not keep the package apart; one in a package's tests does.

import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { run } from '../processes.ts'

/** A workspace with a typecheck script, as read from its tsconfig.json and its sources. */
export interface TypecheckWorkspace {
  /** from the repository's root, e.g. services/order */
  dir: string
  name: string
  compilerOptions: Record<string, unknown>
  include: string[]
  exclude: string[]
  /** its own .ts files (not .d.ts shims) that augment a module or the global scope, from the root */
  augmentations: string[]
}

export interface TypecheckPrograms {
  /** checked as one program */
  together: TypecheckWorkspace[]
  /** each checked as its own program, with its own tsconfig.json */
  alone: TypecheckWorkspace[]
}

/** Options whose value only concerns where output would go: with noEmit, a program's verdict does not depend on them. */
const outputOnlyOptions = new Set(['noEmit', 'rootDir', 'outDir'])

/** `declare module '…' {` or `declare global {`, at the start of a line (its indentation removed first). */
const augmentation = /^declare\s{1,8}(?:module\s{1,8}['"][^'"\n]{1,200}['"]\s{0,8}\{|global\s{0,8}\{)/

/** A module augmentation or global declaration at the start of a line of a .ts source. */
export function declaresAugmentation(source: string): boolean {
  return source.split('\n').some((line) => augmentation.test(line.trimStart()))
}

function isExported(workspace: TypecheckWorkspace, file: string): boolean {
  return workspace.dir.startsWith('packages/') && file.startsWith(`${workspace.dir}/src/`)
}

export function partitionPrograms(workspaces: TypecheckWorkspace[]): TypecheckPrograms {
  const together: TypecheckWorkspace[] = []
  const alone: TypecheckWorkspace[] = []
  for (const workspace of workspaces) {
    const ownOptions = Object.keys(workspace.compilerOptions).filter((key) => !outputOnlyOptions.has(key))
    const joins =
      ownOptions.length === 0 && workspace.augmentations.every((file) => isExported(workspace, file))
    ;(joins ? together : alone).push(workspace)
  }
  return { together, alone }
}

/** The tsconfig.json of the one program, written in `configDir` (a folder `depth` levels below the root). */
export function togetherConfig(together: TypecheckWorkspace[], depth: number): Record<string, unknown> {
  const up = '../'.repeat(depth)
  const fromConfig = (workspace: TypecheckWorkspace, path: string) => `${up}${workspace.dir}/${path}`
  return {
    extends: `${up}tsconfig.base.json`,
    compilerOptions: { noEmit: true, rootDir: up.slice(0, -1) || '.' },
    include: together.flatMap((workspace) => workspace.include.map((path) => fromConfig(workspace, path))),
    exclude: [
      `${up}**/node_modules`,
      ...together.flatMap((workspace) => workspace.exclude.map((path) => fromConfig(workspace, path))),
    ],
  }
}

interface TsconfigFile {
  compilerOptions?: Record<string, unknown>
  include?: string[]
  exclude?: string[]
}

async function trackedFiles(root: string, ...patterns: string[]): Promise<string[]> {
  const listed = await run('git', ['ls-files', '--', ...patterns], { cwd: root })
  return listed.split('\n').filter(Boolean)
}

/** Every workspace of the repository at `root` whose typecheck script runs tsc. */
export async function readWorkspaces(root: string): Promise<TypecheckWorkspace[]> {
  // two listings of the whole tree, not one per workspace: each git call reads the index
  const [manifests, typescript] = await Promise.all([
    trackedFiles(root, '*package.json'),
    trackedFiles(root, '*.ts'),
  ])
  const workspaces: TypecheckWorkspace[] = []
  for (const manifest of manifests) {
    const pkg = JSON.parse(readFileSync(join(root, manifest), 'utf8')) as {
      name?: string
      scripts?: Record<string, string>
    }
    if (!pkg.scripts?.typecheck?.startsWith('tsc ')) continue
    const dir = manifest.replace(/\/?package\.json$/, '')
    const config = JSON.parse(readFileSync(join(root, dir, 'tsconfig.json'), 'utf8')) as TsconfigFile
    const sources = typescript.filter(
      (file) => (dir === '' || file.startsWith(`${dir}/`)) && !file.endsWith('.d.ts'),
    )
    workspaces.push({
      dir,
      name: pkg.name ?? dir,
      compilerOptions: config.compilerOptions ?? {},
      include: config.include ?? [],
      exclude: config.exclude ?? [],
      augmentations: sources.filter((file) => declaresAugmentation(readFileSync(join(root, file), 'utf8'))),
    })
  }
  return workspaces
}
