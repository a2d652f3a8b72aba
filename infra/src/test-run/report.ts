// What ./scripts/test's closing table is made of: the phases it recorded, the preparation's report, the typecheck's
// record (each program's time), turbo's run summaries (each workspace's test task) and vitest's JSON reports (each suite's counts and time).
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs'
import { join, relative } from 'node:path'
import { lastReportFile, type PrepareReport } from '../prepare/index.ts'

export interface Phase {
  name: string
  seconds: number
  status: number
  /** the machine's busy CPU time during the phase, in seconds (every core's) */
  busySeconds: number
}

/** The phases file: one `name<TAB>seconds<TAB>exit status<TAB>busy CPU seconds` line per phase. */
export function readPhases(text: string): Phase[] {
  return text
    .split('\n')
    .filter(Boolean)
    .map((line) => {
      const [name = '', seconds = '0', status = '0', ticks = '0'] = line.split('\t')
      return { name, seconds: Number(seconds), status: Number(status), busySeconds: Number(ticks) }
    })
}

/** What share of the machine's cores a phase kept busy. */
export function coreShare(phase: Phase, cores: number): number | undefined {
  if (phase.seconds <= 0 || cores <= 0) return undefined
  return phase.busySeconds / (phase.seconds * cores)
}

export function readPrepareReport(): PrepareReport | undefined {
  const file = lastReportFile()
  return existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as PrepareReport) : undefined
}

export interface TaskTime {
  workspace: string
  seconds: number
  cached: boolean
  exitCode: number | undefined
}

interface TurboSummary {
  tasks?: {
    task?: string
    package?: string
    cache?: { status?: string }
    execution?: { startTime?: number; endTime?: number; exitCode?: number }
  }[]
}

/**
 * Each workspace's time in turbo's run summaries (--summarize) of `task`: every summary that ran it (./scripts/test
 * runs its workspaces' suites as two turbo runs side by side, and clears the summaries first); a workspace found in
 * more than one, from the newest.
 */
export function readTurboTasks(root: string, task: string): TaskTime[] {
  const dir = join(root, '.turbo', 'runs')
  if (!existsSync(dir)) return []
  const summaries = readdirSync(dir)
    .filter((name) => name.endsWith('.json'))
    .map((name) => join(dir, name))
    .sort((a, b) => statSync(a).mtimeMs - statSync(b).mtimeMs)
  const byWorkspace = new Map<string, TaskTime>()
  for (const file of summaries) {
    const summary = JSON.parse(readFileSync(file, 'utf8')) as TurboSummary
    for (const entry of (summary.tasks ?? []).filter((each) => each.task === task)) {
      const workspace = entry.package ?? '?'
      byWorkspace.delete(workspace)
      byWorkspace.set(workspace, {
        workspace,
        seconds: ((entry.execution?.endTime ?? 0) - (entry.execution?.startTime ?? 0)) / 1000,
        cached: entry.cache?.status === 'HIT',
        exitCode: entry.execution?.exitCode,
      })
    }
  }
  return [...byWorkspace.values()]
}

/** Each program's time in the typecheck's record (infra/src/test-run/typecheck.ts). */
export function readTypecheckTimes(root: string): TaskTime[] {
  const file = join(root, '.turbo', 'typecheck', 'times.json')
  return existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as TaskTime[]) : []
}

export interface SuiteReport {
  /** the report's path from the repository's root */
  file: string
  passed: number
  failed: number
  skipped: number
  seconds: number
  /** each failed test (or file that failed outside its tests: a hook, an import), with the start of its error */
  failures: Failure[]
}

export interface Failure {
  /** the test file, from the repository's root */
  file: string
  /** the test's describe blocks and title; the file's own failure has none */
  test: string
  /** the error's first line, at most 300 characters */
  message: string
}

interface VitestReport {
  numPassedTests: number
  numFailedTests: number
  numPendingTests: number
  numTodoTests: number
  startTime?: number
  testResults?: {
    endTime?: number
    name?: string
    status?: string
    message?: string
    assertionResults?: { fullName?: string; status?: string; failureMessages?: string[] }[]
  }[]
}

/** The first non-empty line of an error, colour codes removed, at most 300 characters. */
function firstLine(text: string | undefined): string {
  const line = (text ?? '')
    // biome-ignore lint/suspicious/noControlCharactersInRegex: the terminal's colour codes in vitest's messages
    .replace(/\u001b\[[0-9;]*m/g, '')
    .split('\n')
    .map((each) => each.trim())
    .find(Boolean)
  if (!line) return '(no message)'
  return line.length > 300 ? `${line.slice(0, 299)}…` : line
}

/** The failed tests of one report: each failed assertion result, and a file that failed with none of its own. */
function failuresOf(root: string, report: VitestReport): Failure[] {
  const failures: Failure[] = []
  for (const result of report.testResults ?? []) {
    const file = result.name ? relative(root, result.name) : '?'
    const failed = (result.assertionResults ?? []).filter((assertion) => assertion.status === 'failed')
    for (const assertion of failed)
      failures.push({
        file,
        test: assertion.fullName ?? '?',
        message: firstLine(assertion.failureMessages?.[0]),
      })
    if (failed.length === 0 && result.status === 'failed')
      failures.push({ file, test: '', message: firstLine(result.message) })
  }
  return failures
}

/** Every vitest-report.json under a .turbo folder of the repository (node_modules aside). */
export function readVitestReports(root: string): SuiteReport[] {
  const found: string[] = []
  const walk = (dir: string, insideTurbo: boolean) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      if (entry.name === 'node_modules' || entry.name === '.git') continue
      const path = join(dir, entry.name)
      if (entry.isDirectory()) walk(path, insideTurbo || entry.name === '.turbo')
      else if (insideTurbo && entry.name === 'vitest-report.json') found.push(path)
    }
  }
  walk(root, false)
  return found.sort().map((file) => {
    const report = JSON.parse(readFileSync(file, 'utf8')) as VitestReport
    const ends = (report.testResults ?? []).map((result) => result.endTime ?? 0)
    const end = ends.length > 0 ? Math.max(...ends) : (report.startTime ?? 0)
    return {
      file: relative(root, file),
      passed: report.numPassedTests,
      failed: report.numFailedTests,
      skipped: report.numPendingTests + report.numTodoTests,
      seconds: report.startTime === undefined ? 0 : (end - report.startTime) / 1000,
      failures: failuresOf(root, report),
    }
  })
}

/**
 * The failed tests, each with the start of its error, for the end of the output: what CI keeps of a run is its tail,
 * and a count of failures alone does not say which test to look at.
 */
export function failureLines(reports: SuiteReport[]): string[] {
  const failures = reports.flatMap((report) => report.failures)
  if (failures.length === 0) return []
  return [
    `the failed tests (${failures.length})`,
    ...failures.flatMap((failure) => [
      `  ${failure.file}${failure.test ? ` › ${failure.test}` : ' (the file itself)'}`,
      `    ${failure.message}`,
    ]),
  ]
}

/** The suite a report belongs to, as a reader names it: `services/order`, `packages/db (containers)`. */
export function suiteName(file: string): string {
  const [workspace, kind] = file.split(/\/\.turbo\/?/)
  const form = kind?.replace(/\/?vitest-report\.json$/, '')
  return form ? `${workspace} (${form})` : (workspace ?? file)
}

const row = (label: string, seconds: number, note = '') =>
  `  ${label.padEnd(58)} ${seconds.toFixed(0).padStart(6)} s  ${note}`.trimEnd()

interface Latency {
  n: number
  p50?: number
  p99?: number
}

/** The cluster campaign's latencies (placed → shipped, before, during and after its fault), from its results' JSON. */
export function clusterLines(json: string): string[] {
  const parsed = JSON.parse(json) as {
    replicas?: number
    ratePerSecond?: number
    secure?: boolean
    results?: {
      reconciliation?: { fault?: string }
      latency?: Partial<Record<'before' | 'during' | 'after', Latency>> & {
        firstShippedAfterStartMs?: number
      }
    }[]
  }
  const show = (latency: Latency | undefined) =>
    latency?.p50 === undefined
      ? '–'
      : `p50 ${(latency.p50 / 1000).toFixed(2)} s, p99 ${((latency.p99 ?? 0) / 1000).toFixed(2)} s (${latency.n})`
  const firstShipped = (ms: number | undefined) =>
    ms === undefined ? '–' : `${(ms / 1000).toFixed(1)} s after`
  return (parsed.results ?? []).map(
    (result) =>
      `  cluster campaign ${result.reconciliation?.fault ?? '?'} (${parsed.replicas ?? '?'} instance(s) of each service, ${parsed.ratePerSecond ?? '?'} orders/s${parsed.secure ? ', every engine secure: Kafka SASL_SSL, PostgreSQL and Redis TLS, Consul ACLs and HTTPS' : ''}): placed → shipped before the fault ${show(result.latency?.before)}; during ${show(result.latency?.during)}; after ${show(result.latency?.after)}; the first order sent after it struck shipped ${firstShipped(result.latency?.firstShippedAfterStartMs)}`,
  )
}

/**
 * The machine's speed at the run's start and end (speed-reference.ts: a fixed piece of work's CPU seconds) and the
 * run's total in those units, which compares runs on machines, or in hours, of different speed.
 */
export function speedReferenceLines(
  references: ReadonlyMap<string, { cpuSeconds: number; wallSeconds: number }>,
  totalSeconds: number,
): string[] {
  const start = references.get('start')
  const end = references.get('end')
  if (!start) return []
  const at = (label: string, time: { cpuSeconds: number; wallSeconds: number }) =>
    `${time.cpuSeconds.toFixed(2)} CPU-s at the ${label} (${time.wallSeconds.toFixed(2)} s of wall)`
  // the machine's speed during the run: the mean of both ends when both were measured (one run's ends differed by
  // 45%, 0.68 and 0.47 CPU-s), so the total in references is what the run would have taken at that mean
  const reference = end ? (start.cpuSeconds + end.cpuSeconds) / 2 : start.cpuSeconds
  return [
    `speed reference (infra/src/test-run/speed-reference.ts, the same work on every run): ${[
      at('start', start),
      ...(end ? [at('end', end)] : []),
    ].join(
      ', ',
    )}; the run took ${Math.round(totalSeconds / reference)} references${end ? ' (of their mean)' : ''}`,
  ]
}

/** The closing table, as lines. */
export function timeTable(input: {
  phases: Phase[]
  cores: number
  prepare: PrepareReport | undefined
  typecheck: TaskTime[]
  tests: TaskTime[]
  reports: SuiteReport[]
  totalSeconds: number
}): string[] {
  const lines = [`where the time went (seconds; the share of the ${input.cores} cores the machine kept busy)`]
  for (const phase of input.phases) {
    const share = coreShare(phase, input.cores)
    const busy = share === undefined ? '' : `${Math.round(share * 100)}% busy`
    lines.push(
      row(
        phase.name,
        phase.seconds,
        [busy, phase.status === 0 ? '' : `FAILED (exit ${phase.status})`].filter(Boolean).join('  '),
      ),
    )
    if (phase.name.startsWith('preparation') && input.prepare) {
      const obtained = input.prepare.results.filter((result) => result.outcome !== 'present')
      for (const result of obtained) lines.push(row(`  ${result.title}`, result.seconds, result.outcome))
      const present = input.prepare.results.length - obtained.length
      if (present > 0)
        lines.push(`    ${present} of ${input.prepare.results.length} prerequisites already present`)
    }
    if (phase.name.startsWith('typecheck')) {
      for (const task of [...input.typecheck].sort((a, b) => b.seconds - a.seconds))
        lines.push(row(`  ${task.workspace}`, task.seconds, task.exitCode ? `exit ${task.exitCode}` : ''))
    }
    if (phase.name.startsWith('tests (vitest')) {
      for (const task of [...input.tests].sort((a, b) => b.seconds - a.seconds))
        lines.push(row(`  ${task.workspace}`, task.seconds, task.exitCode ? `exit ${task.exitCode}` : ''))
    }
  }
  lines.push(row('total', input.totalSeconds))
  lines.push('the suites (tests run, time from the first file to the last)')
  for (const report of input.reports)
    lines.push(
      row(
        suiteName(report.file),
        report.seconds,
        `${report.passed} passed${report.failed ? `, ${report.failed} FAILED` : ''}${report.skipped ? `, ${report.skipped} skipped` : ''}`,
      ),
    )
  return lines
}
