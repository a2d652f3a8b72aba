// The licence check's rules on fixtures shaped as `pnpm licenses list --json` prints them: the allow-list, SPDX
// expressions, commented exceptions, a dependency's NOTICE, and a committed list gone stale.
import { describe, expect, it } from 'vitest'
import {
  type LicenceReportInput,
  licenceAllowed,
  type PnpmLicences,
  licenceReport as reportWithRepoExceptions,
} from '../src/licences/licences.ts'

// the fixtures' own exceptions only: the repository's would be reported as unused here
const licenceReport = (input: LicenceReportInput) => reportWithRepoExceptions({ exceptions: {}, ...input })

function listed(...entries: [name: string, version: string, license: string][]): PnpmLicences {
  const grouped: PnpmLicences = {}
  for (const [name, version, license] of entries) {
    const group = grouped[license] ?? []
    group.push({ name, versions: [version], license, paths: [`/nowhere/${name}`] })
    grouped[license] = group
  }
  return grouped
}

const allowed = listed(
  ['fastify', '5.12.8', 'MIT'],
  ['long', '5.3.2', 'Apache-2.0'],
  ['lru-cache', '11.0.0', 'BlueOak-1.0.0'],
)

describe('licenceAllowed', () => {
  it('when an expression offers a choice, then one allowed licence is enough; when it combines, all must be', () => {
    expect(licenceAllowed('(MIT OR GPL-3.0-only)')).toBe(true)
    expect(licenceAllowed('(MIT AND Zlib)')).toBe(true)
    expect(licenceAllowed('MIT AND GPL-2.0-only')).toBe(false)
    expect(licenceAllowed('Apache-2.0 WITH LLVM-exception')).toBe(true)
  })

  it('when a licence is copyleft, source-available or unknown, then it is not allowed', () => {
    for (const licence of ['GPL-3.0-only', 'AGPL-3.0-or-later', 'SSPL-1.0', 'Unknown', 'UNLICENSED', '']) {
      expect(licenceAllowed(licence), licence).toBe(false)
    }
  })
})

describe('licenceReport', () => {
  it('when every licence is allowed and the committed list is the rendered one, then there is no problem', () => {
    const { rendered } = licenceReport({ listed: allowed, notice: '', packagesWithNotice: [] })

    const report = licenceReport({ listed: allowed, notice: '', packagesWithNotice: [], committed: rendered })

    expect(report.problems).toEqual([])
    expect(report.rendered).toContain('| fastify | 5.12.8 | MIT |')
    expect(report.rendered).toContain('3 packages. Apache-2.0: 1, BlueOak-1.0.0: 1, MIT: 1.')
  })

  it('when a package declares no known licence, then it is a problem naming it', () => {
    const report = licenceReport({
      listed: listed(['fastify', '5.12.8', 'MIT'], ['mystery', '1.0.0', 'Unknown']),
      notice: '',
      packagesWithNotice: [],
      exceptions: {},
    })

    expect(report.problems).toEqual([
      {
        package: 'mystery@1.0.0',
        problem: expect.stringContaining("licence 'Unknown' is not on the allow-list"),
      },
    ])
  })

  it('when a GPL package has an exception, then it is accepted under the licence the exception names', () => {
    const report = licenceReport({
      listed: listed(['strict', '2.0.0', 'GPL-3.0-only']),
      notice: '',
      packagesWithNotice: [],
      exceptions: { 'strict@2.0.0': { licence: 'GPL-3.0-only', reason: 'a fixture: accepted for the test' } },
    })

    expect(report.problems).toEqual([])
    expect(report.rendered).toContain('| strict | 2.0.0 | GPL-3.0-only |')
  })

  it('when an exception names a package no longer installed, then it is a problem', () => {
    const report = licenceReport({
      listed: allowed,
      notice: '',
      packagesWithNotice: [],
      exceptions: { 'gone@1.0.0': { licence: 'MIT', reason: 'a fixture' } },
    })

    expect(report.problems.map((problem) => problem.package)).toEqual(['gone@1.0.0'])
  })

  it('when the lockfile brings a package the committed list lacks, then the list is stale', () => {
    const { rendered } = licenceReport({ listed: allowed, notice: '', packagesWithNotice: [] })

    const report = licenceReport({
      listed: { ...allowed, ISC: [{ name: 'semver', versions: ['7.7.0'], license: 'ISC', paths: [] }] },
      notice: '',
      packagesWithNotice: [],
      committed: rendered,
    })

    expect(report.problems).toEqual([
      { package: 'THIRD-PARTY-LICENSES.md', problem: expect.stringContaining('not current') },
    ])
  })

  it("when a native package's binary comes for this machine's platform, then it is listed under <platform>", () => {
    const report = licenceReport({
      listed: listed(['@node-rs/argon2-linux-x64-gnu', '2.2.1', 'MIT']),
      notice: '',
      packagesWithNotice: [],
    })

    expect(report.rendered).toContain('| @node-rs/argon2-<platform> | 2.2.1 | MIT |')
    expect(report.rendered).not.toContain('linux')
  })

  it('when a dependency ships a NOTICE the project NOTICE does not carry, then it is a problem', () => {
    const report = licenceReport({
      listed: allowed,
      notice: 'Meridian\nlong (Apache-2.0), its NOTICE: ...',
      packagesWithNotice: ['long', 'fastify'],
    })

    expect(report.problems.map((problem) => problem.package)).toEqual(['fastify'])
  })
})
