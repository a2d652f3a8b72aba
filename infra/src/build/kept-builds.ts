// Finished builds kept in the cache folder by the digest of their inputs (inputs.ts), so that a clone that has not built
// a service yet takes the build another checkout made from the same inputs instead of building it again: CI runs every
// commit in a clean clone, where the cluster campaign built eight services from nothing each time (17-22 s of the
// 2-core machine). The digest covers the builder itself, so a change to how a build is made builds anew. The last few
// builds of each target are kept. A build is taken as hard links where the cache folder and the repository share a
// filesystem (a copy of its thousands of small files took as long as building it): nothing writes into a build's
// files, a new build replaces its folder. MERIDIAN_BUILD_CACHE=off leaves the cache alone (an image's build stage sets
// it: its layer is its cache).
import { spawnSync } from 'node:child_process'
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { layoutFromEnv } from '../layout.ts'

/** the builds of one target kept at most, the newest */
const keptPerTarget = 3

const enabled = (env: NodeJS.ProcessEnv) => env.MERIDIAN_BUILD_CACHE !== 'off'

const keptDir = (env: NodeJS.ProcessEnv) => layoutFromEnv(env).componentDir('builds')

const keptName = (name: string, digest: string) => `${name}-${digest.slice(0, 32)}`

/** `to` as a copy of `from`: hard links where one filesystem holds both, a copy elsewhere (cp: Node's cpSync is slower). */
function linkOrCopy(from: string, to: string): void {
  mkdirSync(dirname(to), { recursive: true })
  if (spawnSync('cp', ['-al', from, to]).status === 0) return
  rmSync(to, { recursive: true, force: true })
  const copied = spawnSync('cp', ['-a', from, to], { encoding: 'utf8' })
  if (copied.status !== 0) throw new Error(`cp -a ${from} ${to}: ${copied.stderr || copied.error?.message}`)
}

/**
 * Puts the kept build of these inputs at `dir` (replacing it) when there is one; false when there is none.
 * `stampFile` is the file in a build that holds its digest: a kept build whose stamp differs is not used.
 */
export function restoreKeptBuild(
  name: string,
  digest: string,
  dir: string,
  stampFile: string,
  env: NodeJS.ProcessEnv = process.env,
): boolean {
  if (!enabled(env)) return false
  const kept = join(keptDir(env), keptName(name, digest))
  const stamp = join(kept, stampFile)
  if (!existsSync(stamp) || readFileSync(stamp, 'utf8') !== digest) return false
  const staging = `${dir}.restoring`
  rmSync(staging, { recursive: true, force: true })
  linkOrCopy(kept, staging)
  rmSync(dir, { recursive: true, force: true })
  renameSync(staging, dir)
  return true
}

/** Keeps the finished build in `dir` under its digest, and only the newest few of the target's. */
export function keepBuild(
  name: string,
  digest: string,
  dir: string,
  env: NodeJS.ProcessEnv = process.env,
): void {
  if (!enabled(env)) return
  const root = keptDir(env)
  const kept = join(root, keptName(name, digest))
  const staging = `${kept}.keeping-${process.pid}`
  rmSync(staging, { recursive: true, force: true })
  linkOrCopy(dir, staging)
  rmSync(kept, { recursive: true, force: true })
  renameSync(staging, kept)
  const older = readdirSync(root)
    .filter((entry) => entry.startsWith(`${name}-`) && /^[0-9a-f]{32}$/.test(entry.slice(name.length + 1)))
    .map((entry) => ({ path: join(root, entry), at: statSync(join(root, entry)).mtimeMs }))
    .sort((a, b) => b.at - a.at)
    .slice(keptPerTarget)
  for (const entry of older) rmSync(entry.path, { recursive: true, force: true })
}
