// ./scripts/release's steps on a temporary git repository shaped like this one (a root and a workspace package.json,
// a chart, a changelog): the refusals, the version everywhere, the released documents, the commit and the tag; and
// this repository's own version sites, which must each match as the release expects.
import { execFileSync } from 'node:child_process'
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterEach, describe, expect, it } from 'vitest'
import {
  isSemver,
  moveUnreleased,
  openNext,
  readVersionSites,
  release,
  releaseRefusal,
  suiteLogIsGreen,
  type VersionSite,
  versionSites,
} from '../src/release/release.ts'

const repoRoot = fileURLToPath(new URL('../..', import.meta.url))
const green = 'lint ok\n\u001b[1mtests: 1234 passed, 0 failed, 3 skipped\u001b[0m\n'
const sites: VersionSite[] = [
  { file: 'chart/Chart.yaml', pattern: /^version: (\S+)$/m },
  { file: 'chart/Chart.yaml', pattern: /^appVersion: "([^"]+)"$/m },
]
const changelog = `# Changelog

All notable changes to this project are documented in this file.

## [Unreleased]

### Added

- The first thing.
`
const folders: string[] = []

afterEach(async () => {
  await Promise.all(folders.splice(0).map((folder) => rm(folder, { recursive: true, force: true })))
})

function git(root: string, ...args: string[]): string {
  return execFileSync('git', args, { cwd: root, encoding: 'utf8' })
}

async function fixtureRepo(): Promise<string> {
  const root = await mkdtemp(join(tmpdir(), 'meridian-release-'))
  folders.push(root)
  await mkdir(join(root, 'packages/sdk'), { recursive: true })
  await mkdir(join(root, 'chart'))
  await writeFile(
    join(root, 'package.json'),
    '{\n  "name": "platform",\n  "version": "0.0.9",\n  "private": true\n}\n',
  )
  await writeFile(
    join(root, 'pnpm-workspace.yaml'),
    'packages:\n  - packages/*\n\ncatalog:\n  typebox: 1.4.3\n',
  )
  await writeFile(join(root, 'packages/sdk/package.json'), '{\n  "name": "sdk",\n  "version": "0.0.9"\n}\n')
  await writeFile(join(root, 'chart/Chart.yaml'), 'apiVersion: v2\nversion: 0.0.9\nappVersion: "0.0.9"\n')
  await writeFile(join(root, 'CHANGELOG.md'), changelog)
  git(root, 'init', '--quiet', '--initial-branch=main')
  git(root, 'config', 'user.email', 'release-test@example.com')
  git(root, 'config', 'user.name', 'Release test')
  git(root, 'add', '.')
  git(root, 'commit', '--quiet', '-m', 'fixture')
  return root
}

const documents = async () => ({ asyncapi: '{"asyncapi":"3.1.0"}\n', openapi: '{"openapi":"3.1.0"}\n' })

describe('release: rules', () => {
  it('when a version is SemVer, then it is accepted; a v prefix, a missing part or a leading zero is not', () => {
    expect(['0.1.0', '1.2.3', '0.2.0-dev', '1.0.0-rc.1'].every(isSemver)).toBe(true)
    expect(['v0.1.0', '0.1', '01.2.3', '1.2.3+build', '1.2.3-'].some(isSemver)).toBe(false)
  })

  it("when a suite's log ends with 0 failed and some passed, then it is green; anything else is not", () => {
    expect(suiteLogIsGreen(green)).toBe(true)
    expect(suiteLogIsGreen('tests: 1234 passed, 2 failed\n')).toBe(false)
    expect(suiteLogIsGreen('tests: 0 passed, 0 failed\n')).toBe(false)
    expect(suiteLogIsGreen('tests: 9 passed, 0 failed\nthen something else\n')).toBe(false)
  })

  it('when the changelog is released, then [Unreleased] is empty above the dated version holding its entries', () => {
    const released = moveUnreleased(changelog, '0.1.0', '2026-11-30')

    expect(released).toContain(
      '## [Unreleased]\n\n## [0.1.0] - 2026-11-30\n\n### Added\n\n- The first thing.\n',
    )
    expect(() => moveUnreleased(released, '0.1.0', '2026-11-30')).toThrow('already has a section')
    expect(() => moveUnreleased(released, '0.2.0', '2026-12-01')).toThrow('lists no change')
  })

  it('when the version has a section prepared ahead, then it is dated in place with [Unreleased] on its top', () => {
    const prepared = `# Changelog\n\n## [Unreleased]\n\n- Late.\n\n## [0.1.0] - Unreleased\n\n### Added\n\n- Early.\n`

    const released = moveUnreleased(prepared, '0.1.0', '2026-11-30')

    expect(released).toBe(
      '# Changelog\n\n## [Unreleased]\n\n## [0.1.0] - 2026-11-30\n\n- Late.\n\n### Added\n\n- Early.\n',
    )
  })
})

describe('release: on a git repository', () => {
  it('when the version is not SemVer, the tree is dirty or the suite is red, then it is refused and nothing changes', async () => {
    const root = await fixtureRepo()

    expect(await releaseRefusal(root, 'v1.0.0', green)).toContain('not a SemVer version')
    expect(await releaseRefusal(root, '1.0.0', 'tests: 10 passed, 1 failed\n')).toContain(
      'green ./scripts/test',
    )
    await writeFile(join(root, 'stray.txt'), 'uncommitted\n')
    await expect(
      release({ root, version: '1.0.0', date: '2026-11-30', suiteLog: green, documents, sites }),
    ).rejects.toThrow('not clean')
    expect(git(root, 'tag', '--list')).toBe('')
    expect(git(root, 'status', '--porcelain')).toBe('?? stray.txt\n')
  })

  it('when everything holds, then the version is everywhere, the documents are released, and the commit is tagged', async () => {
    const root = await fixtureRepo()

    const result = await release({
      root,
      version: '0.1.0',
      date: '2026-11-30',
      suiteLog: green,
      documents,
      sites,
    })

    expect(result.tag).toBe('v0.1.0')
    expect(result.changed).toEqual([
      'CHANGELOG.md',
      'chart/Chart.yaml',
      'package.json',
      'packages/sdk/package.json',
      'releases/0.1.0/asyncapi.json',
      'releases/0.1.0/openapi.json',
    ])
    expect(JSON.parse(await readFile(join(root, 'packages/sdk/package.json'), 'utf8')).version).toBe('0.1.0')
    expect(await readFile(join(root, 'chart/Chart.yaml'), 'utf8')).toBe(
      'apiVersion: v2\nversion: 0.1.0\nappVersion: "0.1.0"\n',
    )
    expect(await readFile(join(root, 'releases/0.1.0/openapi.json'), 'utf8')).toBe('{"openapi":"3.1.0"}\n')
    expect(await readFile(join(root, 'CHANGELOG.md'), 'utf8')).toContain('## [0.1.0] - 2026-11-30')
    expect(git(root, 'status', '--porcelain')).toBe('')
    expect(git(root, 'rev-parse', 'v0.1.0^{commit}').trim()).toBe(result.commit)
    expect(await releaseRefusal(root, '0.1.0', green)).toContain('exists already')

    const next = await openNext(root, '0.2.0-dev', sites)

    expect(JSON.parse(await readFile(join(root, 'package.json'), 'utf8')).version).toBe('0.2.0-dev')
    expect(await readFile(join(root, 'chart/Chart.yaml'), 'utf8')).toContain('appVersion: "0.2.0-dev"')
    expect(git(root, 'tag', '--points-at', next)).toBe('')
    expect(git(root, 'status', '--porcelain')).toBe('')
  })

  it('when a version site no longer matches, then nothing is written', async () => {
    const root = await fixtureRepo()
    const moved: VersionSite[] = [...sites, { file: 'chart/Chart.yaml', pattern: /^kubeVersion: (\S+)$/m }]

    await expect(
      release({ root, version: '0.1.0', date: '2026-11-30', suiteLog: green, documents, sites: moved }),
    ).rejects.toThrow('0 matches')
    expect(git(root, 'status', '--porcelain')).toBe('')
  })
})

describe("release: this repository's version sites", () => {
  it('when they are read, then each matches as often as it says and all hold the root package.json version', async () => {
    const { version } = JSON.parse(await readFile(join(repoRoot, 'package.json'), 'utf8')) as {
      version: string
    }

    const read = await readVersionSites(repoRoot)

    expect(read.filter((site) => site.problem).map((site) => site.problem)).toEqual([])
    expect(new Set(read.flatMap((site) => site.versions))).toEqual(new Set([version]))
  })

  it("when a long version is written, then no line of code it lands on grows past the formatter's width", async () => {
    // the version 0.2.0-dev pushed one of build.ts's lines past 110 characters and the next run's biome check failed
    const longVersion = '10.20.30-rc.100'
    const width = 110
    const tooLong: string[] = []
    for (const site of versionSites.filter(({ file }) => /\.(ts|json)$/.test(file))) {
      const text = await readFile(join(repoRoot, site.file), 'utf8')
      const flags = site.pattern.flags.includes('g') ? site.pattern.flags : `${site.pattern.flags}g`
      for (const match of text.matchAll(new RegExp(site.pattern.source, flags))) {
        const start = text.lastIndexOf('\n', match.index) + 1
        const end = text.indexOf('\n', match.index)
        const line = text.slice(start, end < 0 ? undefined : end).replace(match[1] ?? '', longVersion)
        if (line.length > width) tooLong.push(`${site.file}: ${line.trim()}`)
      }
    }
    expect(tooLong).toEqual([])
  })
})
