// What one build target is made of, and its digest: the lockfile and workspace settings, the patches, the builder,
// the target's own folder and the folders of the workspace packages it depends on in production (transitively, from
// their package.json files), and the console's for the gateway. Its build/<name> is kept while the digest is the same,
// and scripts/images names an image by it, so that a change to one package rebuilds only what uses it. The bundle
// proves the list whole: a workspace file it reads outside these folders stops the build (checkInputsCovered).
import { createHash } from 'node:crypto'
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs'
import { dirname, isAbsolute, join, relative, resolve, sep } from 'node:path'
import type { Metafile } from 'esbuild'
import { repoRoot } from '../layout.ts'
import type { BuildTarget } from './targets.ts'

/**
 * Read by every build whatever its target: the dependencies' pins and settings, the patches, the builder itself
 * (scripts/build and the modules of infra/src it runs).
 */
const sharedInputs = [
  'package.json',
  'pnpm-lock.yaml',
  'pnpm-workspace.yaml',
  '.npmrc',
  'tsconfig.base.json',
  'patches',
  'scripts/build',
  'scripts/lib.sh',
  'infra/src/build',
  'infra/src/layout.ts',
  'infra/src/system/services.ts',
]
/** The console's folder: the gateway's build carries its Vite build. */
const consoleDir = 'apps/console'

interface WorkspacePackage {
  dir: string
  dependencies: string[]
}

/** Every workspace package by name, with the workspace packages among its production dependencies. */
function workspacePackages(): Map<string, WorkspacePackage> {
  const globs = readFileSync(join(repoRoot, 'pnpm-workspace.yaml'), 'utf8')
    .split('\n\n')[0]!
    .split('\n')
    .flatMap((line) => /^\s+-\s+(\S+)/.exec(line)?.[1] ?? [])
  const dirs = globs.flatMap((glob) => {
    if (!glob.endsWith('/*')) return [glob]
    const parent = glob.slice(0, -2)
    if (!existsSync(join(repoRoot, parent))) return []
    return readdirSync(join(repoRoot, parent), { withFileTypes: true })
      .filter((entry) => entry.isDirectory())
      .map((entry) => `${parent}/${entry.name}`)
  })
  const found = new Map<string, WorkspacePackage>()
  for (const dir of dirs) {
    const manifestFile = join(repoRoot, dir, 'package.json')
    if (!existsSync(manifestFile)) continue
    const manifest = JSON.parse(readFileSync(manifestFile, 'utf8')) as {
      name: string
      dependencies?: Record<string, string>
    }
    const dependencies = Object.entries(manifest.dependencies ?? {})
      .filter(([, version]) => version.startsWith('workspace:'))
      .map(([name]) => name)
    found.set(manifest.name, { dir, dependencies })
  }
  return found
}

/** The folders of a workspace package's folder and of every workspace package it needs in production. */
function closureDirs(dir: string, packages: Map<string, WorkspacePackage>): string[] {
  const byDir = [...packages.values()].find((entry) => entry.dir === dir)
  const seen = new Set<string>([dir])
  const pending = [...(byDir?.dependencies ?? [])]
  for (let name = pending.pop(); name !== undefined; name = pending.pop()) {
    const found = packages.get(name)
    if (!found || seen.has(found.dir)) continue
    seen.add(found.dir)
    pending.push(...found.dependencies)
  }
  return [...seen]
}

/** The folders and files, from the repository's root, that a target's build reads. */
export function inputRoots(target: BuildTarget): string[] {
  const packages = workspacePackages()
  // the workspace package whose folder holds an entry or the preload (infra for the simulator's)
  const ownerOf = (file: string) =>
    [...packages.values()].find((found) => file.startsWith(`${found.dir}/`))?.dir ?? dirname(file)
  const ownDirs = [...Object.values(target.entries), ...(target.preload ? [target.preload] : [])].map(ownerOf)
  if (target.withConsole) ownDirs.push(consoleDir)
  const roots = new Set<string>(sharedInputs)
  for (const dir of ownDirs) for (const found of closureDirs(dir, packages)) roots.add(found)
  return [...roots].sort()
}

/** The digest of every file under the target's input roots (tests, builds and installed folders left out). */
export function inputsDigest(target: BuildTarget): string {
  const hash = createHash('sha256')
  for (const root of inputRoots(target)) {
    for (const file of filesUnder(join(repoRoot, root))) {
      hash.update(relative(repoRoot, file)).update('\0').update(readFileSync(file)).update('\0')
    }
  }
  return hash.digest('hex')
}

const skipped = new Set(['node_modules', 'dist', '.turbo', 'test', 'coverage'])

function filesUnder(path: string): string[] {
  if (!existsSync(path)) return []
  if (!statSync(path).isDirectory()) return [path]
  return readdirSync(path, { withFileTypes: true })
    .filter((entry) => !skipped.has(entry.name))
    .sort((a, b) => a.name.localeCompare(b.name))
    .flatMap((entry) => filesUnder(join(path, entry.name)))
}

/**
 * Stops the build when the bundle read a file of the repository outside the target's input roots (an import of a
 * workspace package the target does not declare among its production dependencies, or a file one finds by its own
 * URL): its digest would not see a change there, and an unchanged digest keeps the old build and image.
 */
export function checkInputsCovered(target: BuildTarget, metafile: Metafile, assets: string[]): void {
  const roots = inputRoots(target).map((root) => join(repoRoot, root))
  const outside = [...Object.keys(metafile.inputs), ...assets]
    // esbuild names its inputs from its working directory (bundle() sets it: the repository's root)
    .map((input) => (isAbsolute(input) ? input : resolve(repoRoot, input)))
    .filter((file) => file.startsWith(repoRoot + sep) && !file.includes(`${sep}node_modules${sep}`))
    .filter((file) => !roots.some((root) => file === root || file.startsWith(root + sep)))
  if (outside.length > 0) {
    throw new Error(
      `${target.name}: the bundle reads ${outside.map((file) => relative(repoRoot, file)).join(', ')}, outside its ` +
        `inputs (declare the workspace package among its production dependencies)`,
    )
  }
}
