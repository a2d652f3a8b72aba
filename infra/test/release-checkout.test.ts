// A released version's tree for the upgrade campaign (src/release/checkout.ts): the release commit's files with their
// own dependencies, made once and kept; the release commit found by its tag, or in a clone without tags (as CI's) by
// the commit that added releases/<version>/; a release that is not there, or no version, is refused by name.
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { repoRoot } from '../src/layout.ts'
import { run } from '../src/processes.ts'
import { checkoutTree, releaseCheckout, releaseCommit } from '../src/release/checkout.ts'
import { releasedVersions } from '../src/release/openapi-compat.ts'
import { scaledMs } from '../src/test-time.ts'

describe('a release checkout', () => {
  it('when the version has no tag and no release folder, or is no version, then it is refused by name', async () => {
    await expect(releaseCommit('99.0.0')).rejects.toThrow(
      /neither the tag v99\.0\.0 nor a commit adding releases\/99\.0\.0\/ .*git fetch --tags/,
    )
    await expect(releaseCommit('main')).rejects.toThrow(/not a version: "main"/)
  })

  it(
    'when the clone brought no tags, then the release commit is the one that added its folder, which carries its version',
    async () => {
      const [newest] = releasedVersions(repoRoot)
      if (newest === undefined) throw new Error('no release under releases/')
      const dir = mkdtempSync(join(tmpdir(), 'meridian-tagless-'))
      try {
        await run('git', ['clone', '--quiet', '--no-tags', repoRoot, dir])
        expect(await run('git', ['tag', '--list'], { cwd: dir })).toBe('')
        const commit = await releaseCommit(newest, dir)
        const manifest = await run('git', ['show', `${commit}:package.json`], { cwd: dir })
        expect(JSON.parse(manifest).version).toBe(newest)
        // where the tag is there, it names the same commit
        const tagged = await run('git', ['tag', '--list', `v${newest}`], { cwd: repoRoot })
        if (tagged.trim() !== '') expect(await releaseCommit(newest)).toBe(commit)
      } finally {
        rmSync(dir, { recursive: true, force: true })
      }
    },
    scaledMs(120_000),
  )

  it(
    "when the newest release is checked out, then its tree holds its services' entries, its own install and its release commit, and a second call finds it made",
    async () => {
      const [newest] = releasedVersions(repoRoot)
      if (newest === undefined) throw new Error('no release under releases/')
      const checkout = await releaseCheckout(newest)
      expect(checkout.commit).toBe(await releaseCommit(newest))
      expect(JSON.parse(readFileSync(join(checkout.root, 'package.json'), 'utf8')).version).toBe(newest)
      expect(existsSync(join(checkout.root, 'services', 'order', 'src', 'main.ts'))).toBe(true)
      expect(existsSync(join(checkout.root, 'services', 'order', 'node_modules', 'fastify'))).toBe(true)
      const lines: string[] = []
      expect(await releaseCheckout(newest, { progress: (line) => lines.push(line) })).toEqual(checkout)
      expect(lines).toEqual([])
    },
    scaledMs(300_000),
  )

  it('when a tree is given extra files outside it, then they are refused before anything is installed', async () => {
    const [newest] = releasedVersions(repoRoot)
    if (newest === undefined) throw new Error('no release under releases/')
    const parent = mkdtempSync(join(tmpdir(), 'meridian-tree-'))
    try {
      const dir = join(parent, 'tree')
      const outside = checkoutTree({
        commit: await releaseCommit(newest),
        dir,
        extraFiles: { '../outside.sql': 'x' },
      })
      await expect(outside).rejects.toThrow('../outside.sql: not a path inside the tree')
      expect(existsSync(join(parent, 'outside.sql'))).toBe(false)
      expect(existsSync(join(dir, 'node_modules'))).toBe(false)
    } finally {
      rmSync(parent, { recursive: true, force: true })
    }
  })
})
