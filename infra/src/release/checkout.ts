// A released version's tree, to run beside the current one: the files of its release commit unpacked into the cache
// folder (releases/<version>) and its dependencies installed there from its own lockfile, so that its services start
// as that release started them. An upgrade test starts the system from it and moves one service at a time to the
// current tree (infra/src/system, `release`). Made once per release and kept: a release commit does not move.
// The release commit is the one its tag (v<version>) names, or, in a clone that brought no tags (CI's), the commit
// that added releases/<version>/ — ./scripts/release writes that folder in the commit it tags.
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { layoutFromEnv, repoRoot } from '../layout.ts'
import { run } from '../processes.ts'
import { isSemver } from './release.ts'

export interface ReleaseCheckout {
  version: string
  /** the release commit */
  commit: string
  /** the release's tree, its dependencies installed */
  root: string
}

/** What a finished checkout records: the release commit. A folder without it (an interrupted checkout) is made again. */
const markerName = '.meridian-release-checkout'

const isCommit = (text: string) => /^[0-9a-f]{40}$/.test(text)

/** git's answer in `root`, or undefined when git refuses (no such ref, no repository). */
async function gitAnswer(root: string, args: string[]): Promise<string | undefined> {
  try {
    return (await run('git', args, { cwd: root })).trim()
  } catch {
    return undefined
  }
}

/**
 * The release commit of `version` in `root`'s repository: its tag's, or else the commit of the current history that
 * added releases/<version>/; an error naming both when neither is there.
 */
export async function releaseCommit(version: string, root = repoRoot): Promise<string> {
  if (!isSemver(version)) throw new Error(`not a version: ${JSON.stringify(version)}`)
  const tagged = await gitAnswer(root, ['rev-parse', '--verify', '--quiet', `refs/tags/v${version}^{commit}`])
  if (tagged !== undefined && isCommit(tagged)) return tagged
  const added = await gitAnswer(root, [
    'log',
    '--diff-filter=A',
    '--format=%H',
    'HEAD',
    '--',
    `releases/${version}/`,
  ])
  const first = added?.split('\n').filter(isCommit).at(-1)
  if (first !== undefined) return first
  throw new Error(
    `release ${version}: neither the tag v${version} nor a commit adding releases/${version}/ is in the repository at ${root} (git fetch --tags brings the tag)`,
  )
}

/**
 * The tree of release `version`, made when missing: `git archive` of its release commit unpacked into
 * <cache>/releases/<version>,
 * then `pnpm install --frozen-lockfile --prefer-offline` there (the store of the current tree's install holds nearly
 * all of it). `pnpm` must be on PATH (./scripts/test puts the pinned one there).
 */
export async function releaseCheckout(
  version: string,
  options: { root?: string; env?: NodeJS.ProcessEnv; progress?: (line: string) => void } = {},
): Promise<ReleaseCheckout> {
  const root = options.root ?? repoRoot
  const commit = await releaseCommit(version, root)
  const dir = join(layoutFromEnv(options.env).componentDir('releases'), version)
  const marker = join(dir, markerName)
  if (existsSync(marker) && readFileSync(marker, 'utf8').trim() === commit)
    return { version, commit, root: dir }

  const progress = options.progress ?? (() => {})
  progress(`release ${version}: unpacking ${commit.slice(0, 12)} into ${dir}`)
  rmSync(dir, { recursive: true, force: true })
  mkdirSync(dir, { recursive: true })
  const archive = join(dirname(dir), `${version}.tar`)
  try {
    await run('git', ['archive', '--format=tar', '-o', archive, commit], { cwd: root })
    await run('tar', ['-xf', archive, '-C', dir], { cwd: root })
  } finally {
    rmSync(archive, { force: true })
  }
  progress(`release ${version}: pnpm install --frozen-lockfile --prefer-offline`)
  await run('pnpm', ['install', '--frozen-lockfile', '--prefer-offline'], { cwd: dir })
  writeFileSync(marker, `${commit}\n`)
  return { version, commit, root: dir }
}
