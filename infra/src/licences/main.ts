// ./scripts/licences [--check]: writes THIRD-PARTY-LICENSES.md from what pnpm installed for production, or with
// --check fails when the committed file is not current, a licence is not allowed, or the NOTICE misses a dependency's.
// Reads node_modules only (pnpm licenses reads each installed package's package.json): no network.
import { execFile } from 'node:child_process'
import { readdir, readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { licenceReport, type PnpmLicences, thirdPartyPackages } from './licences.ts'

const root = fileURLToPath(new URL('../../..', import.meta.url))
const listFile = join(root, 'THIRD-PARTY-LICENSES.md')
const check = process.argv.includes('--check')

// --filter-prod follows only the production dependencies between workspaces: a service's devDependency on testkit
// would otherwise bring the engines' tooling in
const { stdout } = await promisify(execFile)(
  'pnpm',
  [
    'licenses',
    'list',
    '--json',
    '--prod',
    '--filter-prod',
    '{./services/*}...',
    '--filter-prod',
    '{./apps/*}...',
    '--filter-prod',
    './packages/realtime-client',
  ],
  { cwd: root, maxBuffer: 64 * 1024 * 1024 },
)
const listed = JSON.parse(stdout) as PnpmLicences

const packagesWithNotice: string[] = []
for (const pkg of thirdPartyPackages(listed)) {
  if (!pkg.path) continue
  const files = await readdir(pkg.path).catch(() => [] as string[])
  if (files.some((file) => /^notice(\.|$)/i.test(file))) packagesWithNotice.push(pkg.name)
}
const { rendered, packages, problems } = licenceReport({
  listed,
  notice: await readFile(join(root, 'NOTICE'), 'utf8').catch(() => ''),
  packagesWithNotice,
  ...(check ? { committed: await readFile(listFile, 'utf8').catch(() => '') } : {}),
})
if (!check) await writeFile(listFile, rendered)
for (const { package: name, problem } of problems) process.stderr.write(`${name}: ${problem}\n`)
process.stdout.write(
  `licences: ${packages.length} production packages, ${problems.length} problems${check ? ' (checked)' : ', THIRD-PARTY-LICENSES.md written'}\n`,
)
if (problems.length > 0) process.exitCode = 1
