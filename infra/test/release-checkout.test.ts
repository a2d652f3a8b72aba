// A released version's tree for the upgrade campaign (src/release/checkout.ts): the tag's files with their own
// dependencies, made once and kept; a tag that is not there, or no version, is refused by name.
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { repoRoot } from '../src/layout.ts'
import { releaseCheckout, releaseCommit } from '../src/release/checkout.ts'
import { releasedVersions } from '../src/release/openapi-compat.ts'
import { scaledMs } from '../src/test-time.ts'

describe('a release checkout', () => {
  it('when the version has no tag, or is no version, then it is refused and the message names the tag', () => {
    expect(() => releaseCommit('99.0.0')).toThrow(
      /the tag v99\.0\.0 is not in the repository .*git fetch --tags/,
    )
    expect(() => releaseCommit('main')).toThrow(/not a version: "main"/)
  })

  it(
    "when the newest release is checked out, then its tree holds its services' entries, its own install and its tag's commit, and a second call finds it made",
    () => {
      const [newest] = releasedVersions(repoRoot)
      if (newest === undefined) throw new Error('no release under releases/')
      const checkout = releaseCheckout(newest)
      expect(checkout.commit).toBe(releaseCommit(newest))
      expect(JSON.parse(readFileSync(join(checkout.root, 'package.json'), 'utf8')).version).toBe(newest)
      expect(existsSync(join(checkout.root, 'services', 'order', 'src', 'main.ts'))).toBe(true)
      expect(existsSync(join(checkout.root, 'services', 'order', 'node_modules', 'fastify'))).toBe(true)
      const lines: string[] = []
      expect(releaseCheckout(newest, { progress: (line) => lines.push(line) })).toEqual(checkout)
      expect(lines).toEqual([])
    },
    scaledMs(300_000),
  )
})
