// The end of ./scripts/test: where the time went — each phase, what the preparation obtained (on a machine's first
// run), each workspace's typecheck and tests, the failed tests with their errors' first lines — then one closing line over every test, which CI reads as the run's
// last line. Exits 1 when no test ran.
//   tsx infra/src/test-run/main.ts --phases <phases.tsv> --total <seconds> [--cluster <the cluster campaign's JSON>]
//     [--speed-reference <speed-reference.ts's lines>]
import { existsSync, readFileSync } from 'node:fs'
import { availableParallelism } from 'node:os'
import { repoRoot } from '../layout.ts'
import {
  clusterLines,
  failureLines,
  readPhases,
  readPrepareReport,
  readTurboTasks,
  readTypecheckTimes,
  readVitestReports,
  speedReferenceLines,
  timeTable,
} from './report.ts'
import { readReferences } from './speed-reference.ts'

function argument(name: string): string | undefined {
  const index = process.argv.indexOf(name)
  return index >= 0 ? process.argv[index + 1] : undefined
}

const phasesFile = argument('--phases')
if (!phasesFile) throw new Error('usage: main.ts --phases <phases.tsv> --total <seconds>')
const total = Number(argument('--total') ?? Number.NaN)

const reports = readVitestReports(repoRoot)
const lines = timeTable({
  phases: readPhases(readFileSync(phasesFile, 'utf8')),
  cores: availableParallelism(),
  prepare: readPrepareReport(),
  typecheck: readTypecheckTimes(repoRoot),
  tests: readTurboTasks(repoRoot, 'test'),
  reports,
  totalSeconds: total,
})
const cluster = argument('--cluster')
if (cluster && existsSync(cluster)) lines.push(...clusterLines(readFileSync(cluster, 'utf8')))
const reference = argument('--speed-reference')
if (reference && existsSync(reference))
  lines.push(...speedReferenceLines(readReferences(readFileSync(reference, 'utf8')), total))
lines.push(...failureLines(reports))
process.stderr.write(`${lines.join('\n')}\n`)

const passed = reports.reduce((sum, report) => sum + report.passed, 0)
const failed = reports.reduce((sum, report) => sum + report.failed, 0)
const skipped = reports.reduce((sum, report) => sum + report.skipped, 0)
if (passed + failed === 0) {
  process.stderr.write('no test ran\n')
  process.exitCode = 1
}
process.stdout.write(`tests: ${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ''}\n`)
