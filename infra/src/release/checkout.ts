// A released version's tree, to run beside the current one: the files of its tag (v<version>) unpacked into the cache
// folder (releases/<version>) and its dependencies installed there from its own lockfile, so that its services start
// as that release started them. An upgrade test starts the system from it and moves one service at a time to the
// current tree (infra/src/system, `release`). Made once per tag and kept: a tag does not move.
import { spawnSync } from 'node:child_process'
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { layoutFromEnv, repoRoot } from '../layout.ts'
import { isSemver } from './release.ts'

export interface ReleaseCheckout {
  version: string
  /** the commit the tag names */
  commit: string
  /** the release's tree, its dependencies installed */
  root: string
}

/** What a finished checkout records: the tag's commit. A folder without it (an interrupted checkout) is made again. */
const markerName = '.meridian-release-checkout'

function run(command: string, args: string[], cwd: string, what: string): string {
  const result = spawnSync(command, args, { cwd, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 })
  if (result.error) throw new Error(`${what}: ${result.error.message}`)
  if (result.status !== 0)
    throw new Error(
      `${what} failed (exit ${result.status}): ${(result.stderr || result.stdout).trim().slice(-2000)}`,
    )
  return result.stdout
}

/** The commit of tag v<version> in `root`'s repository; an error naming the tag when it is not there. */
export function releaseCommit(version: string, root = repoRoot): string {
  if (!isSemver(version)) throw new Error(`not a version: ${JSON.stringify(version)}`)
  const found = spawnSync('git', ['rev-parse', '--verify', '--quiet', `refs/tags/v${version}^{commit}`], {
    cwd: root,
    encoding: 'utf8',
  })
  const commit = found.stdout.trim()
  if (found.status !== 0 || !/^[0-9a-f]{40}$/.test(commit))
    throw new Error(`the tag v${version} is not in the repository at ${root} (git fetch --tags brings it)`)
  return commit
}

/**
 * The tree of release `version`, made when missing: `git archive` of its tag unpacked into <cache>/releases/<version>,
 * then `pnpm install --frozen-lockfile --prefer-offline` there (the store of the current tree's install holds nearly
 * all of it). `pnpm` must be on PATH (./scripts/test puts the pinned one there).
 */
export function releaseCheckout(
  version: string,
  options: { root?: string; env?: NodeJS.ProcessEnv; progress?: (line: string) => void } = {},
): ReleaseCheckout {
  const root = options.root ?? repoRoot
  const commit = releaseCommit(version, root)
  const dir = join(layoutFromEnv(options.env).componentDir('releases'), version)
  const marker = join(dir, markerName)
  if (existsSync(marker) && readFileSync(marker, 'utf8').trim() === commit)
    return { version, commit, root: dir }

  const progress = options.progress ?? (() => {})
  progress(`release ${version}: unpacking v${version} (${commit.slice(0, 12)}) into ${dir}`)
  rmSync(dir, { recursive: true, force: true })
  mkdirSync(dir, { recursive: true })
  const archive = join(dirname(dir), `${version}.tar`)
  try {
    run('git', ['archive', '--format=tar', '-o', archive, commit], root, `git archive v${version}`)
    run('tar', ['-xf', archive, '-C', dir], root, `unpacking v${version}`)
  } finally {
    rmSync(archive, { force: true })
  }
  progress(`release ${version}: pnpm install --frozen-lockfile --prefer-offline`)
  run('pnpm', ['install', '--frozen-lockfile', '--prefer-offline'], dir, `pnpm install in release ${version}`)
  writeFileSync(marker, `${commit}\n`)
  return { version, commit, root: dir }
}
