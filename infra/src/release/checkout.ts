// A released version's tree, to run beside the current one: the files of its release commit unpacked into the cache
// folder (releases/<version>) and its dependencies installed there from its own lockfile, so that its services start
// as that release started them. An upgrade test starts the system from it and moves one service at a time to the
// current tree (infra/src/system, `release`). Made once per release and kept: a release commit does not move.
// The release commit is the one its tag (v<version>) names, or, in a clone that brought no tags (CI's), the commit
// that added releases/<version>/ — ./scripts/release writes that folder in the commit it tags.
import { createHash } from 'node:crypto'
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { withDirLock } from '../dir-lock.ts'
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
 * The tree of release `version`, made when missing: its release commit unpacked into <cache>/releases/<version> and
 * installed (checkoutTree). `pnpm` must be on PATH (./scripts/test puts the pinned one there).
 */
export async function releaseCheckout(
  version: string,
  options: { root?: string; env?: NodeJS.ProcessEnv; progress?: (line: string) => void } = {},
): Promise<ReleaseCheckout> {
  const root = options.root ?? repoRoot
  const commit = await releaseCommit(version, root)
  const dir = join(layoutFromEnv(options.env).componentDir('releases'), version)
  await checkoutTree({ commit, dir, root, label: `release ${version}`, progress: options.progress })
  return { version, commit, root: dir }
}

export interface TreeCheckoutOptions {
  /** the commit whose files make the tree */
  commit: string
  /** where the tree is made (replaced when it holds another one) */
  dir: string
  /** the repository the commit is in; default this one */
  root?: string
  /** files written over the commit's before the install, by path in the tree: a deliberate change to try */
  extraFiles?: Readonly<Record<string, string>>
  /** names the tree in progress lines */
  label?: string
  progress?: ((line: string) => void) | undefined
}

/**
 * A commit's tree with its dependencies installed, made when `dir` does not hold it already: `git archive` of the
 * commit unpacked into `dir`, `extraFiles` written, then `pnpm install --frozen-lockfile --prefer-offline` there (the
 * store of the current tree's install holds nearly all of it). A marker records the commit and the extra files: a
 * folder without it (an interrupted checkout) or with another is made again.
 */
export async function checkoutTree(options: TreeCheckoutOptions): Promise<void> {
  // two test files may ask for one tree at once (the upgrade campaign's and the deliberate break's release): the
  // second waits for the first's and finds it made
  const dir = resolve(options.dir)
  await withDirLock(`${dir}.lock`, () => makeTree(dir, options), {
    waiting: (owner) => options.progress?.(`${dir}: being made by pid ${owner ?? '?'}; waiting`),
  })
}

async function makeTree(dir: string, options: TreeCheckoutOptions): Promise<void> {
  const { commit } = options
  const root = options.root ?? repoRoot
  const extra = Object.entries(options.extraFiles ?? {}).sort(([a], [b]) => a.localeCompare(b))
  const stamp = extra.length
    ? `${commit} ${createHash('sha256').update(JSON.stringify(extra)).digest('hex')}`
    : commit
  const marker = join(dir, markerName)
  if (existsSync(marker) && readFileSync(marker, 'utf8').trim() === stamp) return

  const label = options.label ?? commit.slice(0, 12)
  const progress = options.progress ?? (() => {})
  progress(`${label}: unpacking ${commit.slice(0, 12)} into ${dir}`)
  rmSync(dir, { recursive: true, force: true })
  mkdirSync(dir, { recursive: true })
  const archive = `${dir}.tar`
  try {
    await run('git', ['archive', '--format=tar', '-o', archive, commit], { cwd: root })
    await run('tar', ['-xf', archive, '-C', dir], { cwd: root })
  } finally {
    rmSync(archive, { force: true })
  }
  for (const [path, text] of extra) {
    const file = resolve(dir, path)
    if (!file.startsWith(`${dir}/`)) throw new Error(`${path}: not a path inside the tree`)
    mkdirSync(dirname(file), { recursive: true })
    writeFileSync(file, text)
  }
  progress(`${label}: pnpm install --frozen-lockfile --prefer-offline`)
  await run('pnpm', ['install', '--frozen-lockfile', '--prefer-offline'], { cwd: dir })
  writeFileSync(marker, `${stamp}\n`)
}
