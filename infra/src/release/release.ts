// Cutting a release (docs/how-to/releasing.md): the version written everywhere it lives, the released AsyncAPI and OpenAPI
// documents under releases/<version>/, the changelog's [Unreleased] section dated under the version, one commit and
// the tag v<version>. Refused on a dirty tree, an existing tag, or without a green suite. The steps are functions over
// a repository root, so the test runs them on a temporary git repository shaped like this one.
import { execFile } from 'node:child_process'
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises'
import { join, relative } from 'node:path'
import { promisify } from 'node:util'

const run = promisify(execFile)

/** SemVer 2.0.0's own grammar (semver.org), without build metadata: a release is named by its precedence alone. */
const semverPattern =
  /^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-((?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(?:\.(?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?$/

export function isSemver(version: string): boolean {
  return semverPattern.test(version)
}

export class ReleaseError extends Error {
  override name = 'ReleaseError'
}

/**
 * A place the version is written, other than the package.json files: a file and a pattern whose first group is the
 * version. Each must match exactly once (infra/test/release.test.ts checks this repository's), so a moved line fails
 * the test rather than leaving an old version behind in a release.
 */
export interface VersionSite {
  file: string
  pattern: RegExp
  /** how many times the pattern occurs: a number, or 'some' for one or more (a line per service); default 1 */
  count?: number | 'some'
}

export const versionSites: readonly VersionSite[] = [
  // the chart's own version and the services' (the images' default tag)
  { file: 'deploy/helm/meridian/Chart.yaml', pattern: /^version: (\S+)$/m },
  { file: 'deploy/helm/meridian/Chart.yaml', pattern: /^appVersion: "([^"]+)"$/m },
  // the images' default tag when MERIDIAN_TAG is unset (./scripts/images sets it from the root package.json)
  {
    file: 'docker-compose.yml',
    pattern: /image: meridian\/[a-z-]+:\$\{MERIDIAN_TAG:-([^}\s]+)\}/g,
    count: 'some',
  },
  // the version an instance registers in Consul and reports in its traces when SERVICE_VERSION is unset
  {
    file: 'packages/service-kit/src/config.ts',
    pattern: /SERVICE_VERSION: Type\.String\(\{ default: '([^']+)' \}\)/,
  },
  // the payment simulator's build/package.json, which has no workspace package.json of its own to read
  { file: 'infra/src/build/build.ts', pattern: /const simulatorVersion = '([^']+)'/ },
  // docs that name the version
  {
    file: 'packages/realtime-client/README.md',
    pattern: /realtime-client-(\d+\.\d+\.\d+(?:-[0-9A-Za-z.]+)?)\.tgz/g,
  },
  { file: 'docs/reference/configuration.md', pattern: /the instance's Consul metadata \| `([^`]+)`/ },
  {
    file: 'docs/reference/realtime-client.md',
    pattern: /realtime-client-(\d+\.\d+\.\d+(?:-[0-9A-Za-z.]+)?)\.tgz/g,
    count: 2,
  },
  { file: 'deploy/helm/meridian/README.md', pattern: /\(the services' version, `([^`]+)`\)/ },
]

/** Every package.json of the workspace (the root's and each workspace's), from the root, without node_modules. */
export async function packageJsonFiles(root: string): Promise<string[]> {
  const workspace = await readFile(join(root, 'pnpm-workspace.yaml'), 'utf8').catch(() => '')
  // the `packages:` list alone: the lists after it (onlyBuiltDependencies ...) name dependencies, not folders
  const block = /^packages:\n((?:[ \t]+-.*\n?)+)/m.exec(workspace)?.[1] ?? ''
  const globs = [...block.matchAll(/^[ \t]+-[ \t]+["']?([^"'\s]+)["']?[ \t]*$/gm)].map((match) => match[1]!)
  const files = ['package.json']
  for (const glob of globs) {
    if (glob.endsWith('/*')) {
      const parent = glob.slice(0, -2)
      const entries = await readdir(join(root, parent), { withFileTypes: true }).catch(() => [])
      for (const entry of entries) {
        const file = join(parent, entry.name, 'package.json')
        if (
          entry.isDirectory() &&
          (await readFile(join(root, file)).then(
            () => true,
            () => false,
          ))
        )
          files.push(file)
      }
    } else if (
      await readFile(join(root, glob, 'package.json')).then(
        () => true,
        () => false,
      )
    ) {
      files.push(join(glob, 'package.json'))
    }
  }
  return files.sort()
}

function globalPattern(site: VersionSite): RegExp {
  const flags = site.pattern.flags.includes('g') ? site.pattern.flags : `${site.pattern.flags}g`
  return new RegExp(site.pattern.source, flags)
}

/** Each site whose pattern does not match as often as it says, and each site's current versions. */
export async function readVersionSites(
  root: string,
  sites: readonly VersionSite[] = versionSites,
): Promise<{ site: VersionSite; versions: string[]; problem?: string }[]> {
  const read = []
  for (const site of sites) {
    const text = await readFile(join(root, site.file), 'utf8')
    const versions = [...text.matchAll(globalPattern(site))].map((match) => match[1]!)
    const expected = site.count ?? 1
    const matches = expected === 'some' ? versions.length > 0 : versions.length === expected
    read.push({
      site,
      versions,
      ...(matches
        ? {}
        : {
            problem: `${site.file}: ${versions.length} matches of ${site.pattern} where ${expected === 'some' ? 'one or more' : expected} were expected (infra/src/release/release.ts, versionSites)`,
          }),
    })
  }
  return read
}

/** Writes `version` into every package.json and every version site; returns the files it changed. */
export async function writeVersion(
  root: string,
  version: string,
  sites: readonly VersionSite[] = versionSites,
): Promise<string[]> {
  // every site checked before any file is written: a release never stops with half of them changed
  const problem = (await readVersionSites(root, sites)).find((read) => read.problem)?.problem
  if (problem) throw new ReleaseError(problem)
  const changed = new Set<string>()
  for (const file of await packageJsonFiles(root)) {
    const text = await readFile(join(root, file), 'utf8')
    // the "version" line alone is rewritten, so the file keeps its formatting
    const next = text.replace(/^([ \t]*"version":[ \t]*")[^"\n]*(")/m, `$1${version}$2`)
    if (!/^[ \t]*"version":/m.test(text)) throw new ReleaseError(`${file} has no "version" field`)
    if (next !== text) {
      await writeFile(join(root, file), next)
      changed.add(file)
    }
  }
  for (const site of sites) {
    const path = join(root, site.file)
    const text = await readFile(path, 'utf8')
    const next = text.replace(globalPattern(site), (whole: string, old: string) =>
      whole.replace(old, version),
    )
    if (next !== text) {
      await writeFile(path, next)
      changed.add(site.file)
    }
  }
  return [...changed].sort()
}

/**
 * The changelog with its [Unreleased] section's entries moved under `## [version] - date`, and an empty [Unreleased]
 * above it (Keep a Changelog). A section prepared ahead, `## [version] - Unreleased` (0.1.0's, written before the
 * tooling that cuts it), is dated in place, with whatever [Unreleased] holds put at its top. Refused when the version
 * already has a dated section, or when there is nothing to release.
 */
export function moveUnreleased(changelog: string, version: string, date: string): string {
  const escaped = version.replace(/\./g, '\\.')
  const heading = /^## \[Unreleased\][ \t]*$/m.exec(changelog)
  if (!heading) throw new ReleaseError('CHANGELOG.md has no "## [Unreleased]" section')
  const prepared = new RegExp(`^## \\[${escaped}\\] - Unreleased[ \\t]*$`, 'mi').exec(changelog)
  if (!prepared && new RegExp(`^## \\[${escaped}\\]`, 'm').test(changelog)) {
    throw new ReleaseError(`CHANGELOG.md already has a section for ${version}`)
  }
  const sectionEnd = (from: number) => {
    const next = changelog.slice(from).search(/^## \[/m)
    return next === -1 ? changelog.length : from + next
  }
  const unreleasedStart = heading.index + heading[0].length
  const unreleasedEnd = sectionEnd(unreleasedStart)
  const unreleased = changelog.slice(unreleasedStart, unreleasedEnd).trim()
  const lists = (text: string) => /^[ \t]*[-*] /m.test(text)
  const dated = `## [${version}] - ${date}`
  const tidy = (text: string) => `${text.replace(/\n{3,}/g, '\n\n').trimEnd()}\n`
  if (prepared) {
    const preparedStart = prepared.index + prepared[0].length
    const preparedEnd = sectionEnd(preparedStart)
    const body = [unreleased, changelog.slice(preparedStart, preparedEnd).trim()].filter(Boolean).join('\n\n')
    if (!lists(body)) throw new ReleaseError(`CHANGELOG.md: the ${version} section lists no change`)
    return tidy(
      `${changelog.slice(0, heading.index)}## [Unreleased]\n\n${changelog.slice(unreleasedEnd, prepared.index)}` +
        `${dated}\n\n${body}\n\n${changelog.slice(preparedEnd)}`,
    )
  }
  if (!lists(unreleased)) {
    throw new ReleaseError('CHANGELOG.md: [Unreleased] lists no change; say what the release brings first')
  }
  return tidy(
    `${changelog.slice(0, heading.index)}## [Unreleased]\n\n${dated}\n\n${unreleased}\n\n${changelog.slice(unreleasedEnd)}`,
  )
}

// the escape (ESC, 0x1b) that starts a terminal colour code, and its parameters
const colourCode = new RegExp(`${String.fromCharCode(27)}\\[[0-9;]*m`, 'g')

/**
 * Whether a ./scripts/test log proves a green suite: its last line is `tests: N passed, 0 failed` (a `, N skipped`
 * may follow) with N above zero. Colour codes are ignored.
 */
export function suiteLogIsGreen(log: string): boolean {
  const lines = log.replace(colourCode, '').trimEnd().split('\n')
  const match = /^tests: (\d+) passed, 0 failed(?:, \d+ skipped)?$/.exec(lines.at(-1)?.trim() ?? '')
  return match !== null && Number(match[1]) > 0
}

async function git(root: string, ...args: string[]): Promise<string> {
  const { stdout } = await run('git', args, { cwd: root, maxBuffer: 16 * 1024 * 1024 })
  return stdout
}

export interface ReleaseDocuments {
  /** the AsyncAPI document of the events and the realtime channel, as text */
  asyncapi: string
  /** the gateway's merged OpenAPI document, as text */
  openapi: string
}

export interface ReleaseOptions {
  root: string
  version: string
  /** the day the changelog gives the release, YYYY-MM-DD */
  date: string
  /** a ./scripts/test log of this tree whose last line says the suite passed */
  suiteLog: string
  /** the released documents, produced for this tree */
  documents(): Promise<ReleaseDocuments>
  /** after writing the released AsyncAPI document: what else the repo derives from it (docs/asyncapi.released.json) */
  afterDocuments?(documents: ReleaseDocuments): Promise<string[]>
  sites?: readonly VersionSite[]
}

export interface ReleaseResult {
  commit: string
  tag: string
  changed: string[]
}

/** Refusals that need nothing written: a version that is not SemVer, a dirty tree, an existing tag, a red suite. */
export async function releaseRefusal(
  root: string,
  version: string,
  suiteLog: string,
): Promise<string | undefined> {
  if (!isSemver(version))
    return `${version} is not a SemVer version (MAJOR.MINOR.PATCH, an optional -pre-release)`
  const dirty = (await git(root, 'status', '--porcelain')).trim()
  if (dirty) return `the work tree is not clean; commit or stash first:\n${dirty}`
  const tags = (await git(root, 'tag', '--list', `v${version}`)).trim()
  if (tags) return `the tag v${version} exists already`
  if (!suiteLogIsGreen(suiteLog)) {
    return "the suite's log does not end with 'tests: N passed, 0 failed': a release needs a green ./scripts/test"
  }
  return undefined
}

/** The whole release: refusals first, then the version, the documents, the changelog, one commit and the tag. */
export async function release(options: ReleaseOptions): Promise<ReleaseResult> {
  const { root, version } = options
  const refusal = await releaseRefusal(root, version, options.suiteLog)
  if (refusal) throw new ReleaseError(refusal)

  const changed = await writeVersion(root, version, options.sites)

  const documents = await options.documents()
  const folder = join(root, 'releases', version)
  await mkdir(folder, { recursive: true })
  await writeFile(join(folder, 'asyncapi.json'), documents.asyncapi)
  await writeFile(join(folder, 'openapi.json'), documents.openapi)
  changed.push(relative(root, join(folder, 'asyncapi.json')), relative(root, join(folder, 'openapi.json')))
  if (options.afterDocuments) changed.push(...(await options.afterDocuments(documents)))

  const changelogPath = join(root, 'CHANGELOG.md')
  await writeFile(changelogPath, moveUnreleased(await readFile(changelogPath, 'utf8'), version, options.date))
  changed.push('CHANGELOG.md')

  await git(root, 'add', '--', ...changed)
  await git(
    root,
    'commit',
    '--quiet',
    '-m',
    `Release ${version}: the version everywhere it lives, the released AsyncAPI and OpenAPI documents (releases/${version}/), the changelog's section`,
  )
  await git(root, 'tag', '--annotate', `v${version}`, '--message', `Meridian ${version}`)
  const commit = (await git(root, 'rev-parse', 'HEAD')).trim()
  return { commit, tag: `v${version}`, changed: [...new Set(changed)].sort() }
}

/**
 * After a release: the next version (a pre-release such as 0.2.0-dev) written everywhere, committed, not tagged, so
 * what is built from main is never mistaken for the release.
 */
export async function openNext(
  root: string,
  version: string,
  sites?: readonly VersionSite[],
): Promise<string> {
  if (!isSemver(version) || !version.includes('-')) {
    throw new ReleaseError(`${version}: the version after a release is a pre-release (e.g. 0.2.0-dev)`)
  }
  const dirty = (await git(root, 'status', '--porcelain')).trim()
  if (dirty) throw new ReleaseError(`the work tree is not clean; commit or stash first:\n${dirty}`)
  const changed = await writeVersion(root, version, sites)
  await git(root, 'add', '--', ...changed)
  await git(
    root,
    'commit',
    '--quiet',
    '-m',
    `Open ${version}: the version after the release, everywhere it lives`,
  )
  return (await git(root, 'rev-parse', 'HEAD')).trim()
}
