// The third-party licence list: what the lockfile installs for production (the services, the console and the realtime
// client, with the workspace packages they depend on, without dev tooling), each package's licence checked against an
// allow-list, rendered as THIRD-PARTY-LICENSES.md. Pure functions over `pnpm licenses list --json` output, so the
// rules are tested on fixtures (infra/test/licences.test.ts); main.ts runs pnpm and reads the files.

/** One entry of `pnpm licenses list --json`, grouped there by licence. */
export interface PnpmLicenceEntry {
  name: string
  versions: string[]
  license: string
  homepage?: string
  /** where each version is installed (node_modules/.pnpm/...) */
  paths: string[]
}

export type PnpmLicences = Record<string, PnpmLicenceEntry[]>

export interface ThirdPartyPackage {
  name: string
  version: string
  /** the SPDX expression its package.json declares, or the exception's */
  licence: string
  homepage: string | undefined
  /** where it is installed; not rendered (it differs between checkouts) */
  path: string | undefined
}

/**
 * Licences that allow redistribution in the images and the published client without conditions beyond keeping their
 * notices. Copyleft (GPL, LGPL, AGPL), SSPL and anything unknown are not on it: such a package needs an exception.
 */
export const allowedLicences: ReadonlySet<string> = new Set([
  '0BSD',
  'Apache-2.0',
  'BlueOak-1.0.0',
  'BSD-2-Clause',
  'BSD-3-Clause',
  'CC0-1.0',
  'ISC',
  'MIT',
  'MIT-0',
  'Python-2.0',
  'Unlicense',
  'Zlib',
])

export interface LicenceException {
  /** the licence the package is distributed under, as found by hand */
  licence: string
  /** why it is accepted: where the licence was found, or why a licence off the list is acceptable */
  reason: string
}

/** `name@version` -> the exception. Each one is read by a person first; a new version of the package needs a new look. */
export const licenceExceptions: Readonly<Record<string, LicenceException>> = {
  // koa's dependency (oidc-provider -> koa, in auth)
  'only@0.0.2': {
    licence: 'MIT',
    reason:
      'its package.json has no license field; its Readme ends with "(The MIT License)" and the licence text',
  },
}

// A native package's binary comes as one optional package per platform (`@node-rs/argon2-linux-x64-gnu`), and pnpm
// installs only the one of the machine: named by its platform, the list would differ between a developer's laptop and
// CI. Each such package is listed once, as `<platform>`, with its version and licence (the same for every platform).
// (Read by splitting on '-', not by a pattern searched from every '-': a name is untrusted text like any other.)
const platforms = new Set(['linux', 'darwin', 'win32', 'freebsd', 'android', 'openharmony'])
const platformTail = /^[a-z0-9-]+$/

/** `name` with a platform package's suffix (`-<platform>-<arch…>`, the leftmost that ends it) as `-<platform>`. */
export function platformNeutralName(name: string): string {
  const parts = name.split('-')
  for (let at = 1; at < parts.length - 1; at++) {
    if (platforms.has(parts[at] as string) && platformTail.test(parts.slice(at + 1).join('-')))
      return `${parts.slice(0, at).join('-')}-<platform>`
  }
  return name
}

export function thirdPartyPackages(listed: PnpmLicences): ThirdPartyPackage[] {
  const packages: ThirdPartyPackage[] = []
  for (const entries of Object.values(listed)) {
    for (const entry of entries) {
      entry.versions.forEach((version, index) => {
        packages.push({
          name: platformNeutralName(entry.name),
          version,
          licence: entry.license,
          homepage: entry.homepage,
          path: entry.paths[index],
        })
      })
    }
  }
  return packages.sort((a, b) =>
    a.name === b.name ? a.version.localeCompare(b.version) : a.name < b.name ? -1 : 1,
  )
}

/**
 * Whether an SPDX expression is allowed: `A OR B` when either is, `A AND B` when both are; parentheses and a `WITH`
 * exception are read through. Unknown words (`Unknown`, `SEE LICENSE IN ...`, `UNLICENSED`) are not allowed.
 */
export function licenceAllowed(expression: string, allowed: ReadonlySet<string> = allowedLicences): boolean {
  const words = expression.replace(/[()]/g, ' ').split(/\s/).filter(Boolean)
  if (words.length === 0) return false
  // words, not patterns searched from every space: OR binds loosest, then AND; a WITH exception is read through
  const split = (list: string[], operator: string): string[][] =>
    list.reduce<string[][]>(
      (groups, word) => {
        if (word === operator) groups.push([])
        else groups.at(-1)?.push(word)
        return groups
      },
      [[]],
    )
  return split(words, 'OR').some((either) =>
    split(either, 'AND').every((both) => {
      const withAt = both.indexOf('WITH')
      const licence = (withAt < 0 ? both : both.slice(0, withAt)).join(' ')
      return licence !== '' && allowed.has(licence)
    }),
  )
}

export interface LicenceProblem {
  package: string
  problem: string
}

/** The packages as they are distributed: an exception's licence in place of what the package declares. */
export function withExceptions(
  packages: ThirdPartyPackage[],
  exceptions: Readonly<Record<string, LicenceException>> = licenceExceptions,
): ThirdPartyPackage[] {
  return packages.map((pkg) => {
    const exception = exceptions[`${pkg.name}@${pkg.version}`]
    return exception ? { ...pkg, licence: exception.licence } : pkg
  })
}

/** Every package whose licence (after exceptions) is not allowed; every exception no installed package uses. */
export function licenceProblems(
  packages: ThirdPartyPackage[],
  exceptions: Readonly<Record<string, LicenceException>> = licenceExceptions,
  allowed: ReadonlySet<string> = allowedLicences,
): LicenceProblem[] {
  const problems: LicenceProblem[] = []
  const installed = new Set(packages.map((pkg) => `${pkg.name}@${pkg.version}`))
  for (const pkg of packages) {
    const exception = exceptions[`${pkg.name}@${pkg.version}`]
    if (exception) continue
    if (!licenceAllowed(pkg.licence, allowed)) {
      problems.push({
        package: `${pkg.name}@${pkg.version}`,
        problem: `licence '${pkg.licence}' is not on the allow-list (infra/src/licences/licences.ts): replace the package, or add a commented exception once its licence is read`,
      })
    }
  }
  for (const key of Object.keys(exceptions)) {
    if (!installed.has(key)) {
      problems.push({ package: key, problem: 'an exception for a package no longer installed: remove it' })
    }
  }
  return problems
}

/** Apache-2.0 section 4(d): a NOTICE a dependency ships goes along with it; the project's NOTICE names each one. */
export function noticeProblems(notice: string, packagesWithNotice: string[]): LicenceProblem[] {
  return packagesWithNotice
    .filter((name) => !notice.includes(name))
    .map((name) => ({
      package: name,
      problem: 'ships a NOTICE file that the NOTICE at the repository root does not carry',
    }))
}

export function renderList(packages: ThirdPartyPackage[]): string {
  const counts = new Map<string, number>()
  for (const pkg of packages) counts.set(pkg.licence, (counts.get(pkg.licence) ?? 0) + 1)
  const summary = [...counts.entries()]
    .sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))
    .map(([licence, count]) => `${licence}: ${count}`)
    .join(', ')
  const rows = packages.map(
    (pkg) => `| ${pkg.name} | ${pkg.version} | ${pkg.licence} | ${pkg.homepage ? `<${pkg.homepage}>` : ''} |`,
  )
  return [
    '# Third-party licences',
    '',
    'Generated by `./scripts/licences` from what the lockfile installs for production: the services (services/*),',
    'the console (apps/console) and the realtime client (packages/realtime-client), with the workspace packages they',
    'depend on. Development tooling (tests, builds, engines, the payment simulator) is not distributed and not listed.',
    "A native package's binary, one optional package per platform, is listed once as `<platform>`.",
    '`./scripts/licences --check` fails when this file is not current or a licence is not on the allow-list.',
    '',
    `${packages.length} packages. ${summary}.`,
    '',
    '| package | version | licence | home page |',
    '| --- | --- | --- | --- |',
    ...rows,
    '',
  ].join('\n')
}

export interface LicenceReportInput {
  listed: PnpmLicences
  /** the repository's NOTICE */
  notice: string
  /** names of the installed packages that ship a NOTICE file */
  packagesWithNotice: string[]
  /** the committed list, for --check; undefined when the list is being written */
  committed?: string
  exceptions?: Readonly<Record<string, LicenceException>>
}

/** The list as it should read, and every problem: licences, NOTICE, and (given the committed list) staleness. */
export function licenceReport(input: LicenceReportInput): {
  rendered: string
  packages: ThirdPartyPackage[]
  problems: LicenceProblem[]
} {
  const exceptions = input.exceptions ?? licenceExceptions
  const installed = thirdPartyPackages(input.listed)
  const packages = withExceptions(installed, exceptions)
  const rendered = renderList(packages)
  const problems = [
    ...licenceProblems(installed, exceptions),
    ...noticeProblems(input.notice, input.packagesWithNotice),
  ]
  if (input.committed !== undefined && input.committed !== rendered) {
    problems.push({
      package: 'THIRD-PARTY-LICENSES.md',
      problem: 'not current with the lockfile: run ./scripts/licences and commit the file',
    })
  }
  return { rendered, packages, problems }
}
