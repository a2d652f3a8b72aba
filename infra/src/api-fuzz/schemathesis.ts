// One schemathesis run against one OpenAPI document: the command line (every check, a bounded budget), the run with a
// hard time limit, and what its JSON report says.
import { spawn } from 'node:child_process'
import { createWriteStream, existsSync, readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { stopPid } from '../processes.ts'

/** Settings beside this file: the credentials per security scheme, and each narrowing with its reason. */
export const configFile = fileURLToPath(new URL('./schemathesis.toml', import.meta.url))

export interface FuzzBudget {
  /** test cases per operation and phase (`--max-examples`) */
  maxExamples: number
  /** a seed to repeat a run exactly; a new one each run otherwise (printed in the report) */
  seed?: string
  /** schemathesis is stopped (and the run failed) after this long */
  timeoutMs: number
}

export function schemathesisArguments(
  documentUrl: string,
  budget: FuzzBudget,
  files: { reportFile: string; examplesDatabase: string },
  /** options that narrow the run to a part of the document or to some phases (targets.ts) */
  narrowing: readonly string[] = [],
): string[] {
  return [
    '--config-file',
    configFile,
    'run',
    documentUrl,
    '--checks',
    'all',
    '--max-examples',
    String(budget.maxExamples),
    // One worker. The machine has two cores, shared with the services under test; and schemathesis' workers are
    // threads, which on this machine's CPython 3.11 made hypothesis' source inspection fail now and then ("AST
    // constructor recursion depth mismatch"), ending a run in an error that is not the API's.
    '--workers',
    '1',
    '--no-color',
    '--report',
    'json',
    '--report-json-path',
    files.reportFile,
    // failures found before are tried again first (the file lives in the cache folder, outside the repository)
    '--generation-database',
    files.examplesDatabase,
    ...(budget.seed ? ['--seed', budget.seed] : []),
    ...narrowing,
  ]
}

/** What a run's JSON report (`--report json`) says, as far as the step reports it. */
export interface FuzzReport {
  exitCode: number
  seed: string
  seconds: number
  operations: { selected: number; tested: number; errored: number }
  testCases: { generated: number; withFailures: number; uniqueFailures: number }
  failures: number
  errors: number
  phases: Record<string, string>
  /** operations that only ever got 401/403: the credentials did not reach them */
  missingAuth: string[]
}

export function readFuzzReport(file: string): FuzzReport {
  const text = readFileSync(file, 'utf8')
  const report = JSON.parse(text)
  return {
    exitCode: Number(report.exit_code),
    // read from the text: the seed is a 128-bit integer, which a JavaScript number would round
    seed: /"seed":\s*(\d+)/.exec(text)?.[1] ?? String(report.seed),
    seconds: Number(report.running_time),
    operations: {
      selected: Number(report.operations?.selected ?? 0),
      tested: Number(report.operations?.tested ?? 0),
      errored: Number(report.operations?.errored ?? 0),
    },
    testCases: {
      generated: Number(report.test_cases?.generated ?? 0),
      withFailures: Number(report.test_cases?.with_failures ?? 0),
      uniqueFailures: Number(report.test_cases?.unique_failures ?? 0),
    },
    failures: Array.isArray(report.failures) ? report.failures.length : 0,
    errors: Array.isArray(report.errors) ? report.errors.length : 0,
    phases: Object.fromEntries(
      Object.entries((report.phases ?? {}) as Record<string, { status: string }>).map(([phase, state]) => [
        phase,
        state.status,
      ]),
    ),
    missingAuth: (report.warnings?.missing_auth ?? []) as string[],
  }
}

export interface FuzzOutcome {
  /** schemathesis' exit code; null when it had to be stopped */
  exitCode: number | null
  timedOut: boolean
  report?: FuzzReport
}

/** Runs schemathesis with its output in `logFile`; stopped by its pid when the budget's time is up. */
export async function runSchemathesis(options: {
  executable: string
  args: string[]
  env: NodeJS.ProcessEnv
  cwd: string
  logFile: string
  reportFile: string
  timeoutMs: number
  /** told the pid once it runs, so that an interrupted run can stop it */
  onStart?: (pid: number) => void
}): Promise<FuzzOutcome> {
  const log = createWriteStream(options.logFile)
  const child = spawn(options.executable, options.args, {
    cwd: options.cwd,
    env: options.env,
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  if (child.pid !== undefined) options.onStart?.(child.pid)
  child.stdout.pipe(log, { end: false })
  child.stderr.pipe(log, { end: false })
  let timedOut = false
  const timer = setTimeout(() => {
    timedOut = true
    if (child.pid !== undefined) void stopPid(child.pid, 'SIGTERM', 5000)
  }, options.timeoutMs)
  const exitCode = await new Promise<number | null>((resolve, reject) => {
    child.once('error', reject)
    child.once('close', (code) => resolve(code))
  }).finally(() => clearTimeout(timer))
  await new Promise<void>((resolve) => log.end(resolve))
  let report: FuzzReport | undefined
  try {
    // a run that was stopped may have left no report, or half of one
    if (existsSync(options.reportFile)) report = readFuzzReport(options.reportFile)
  } catch {
    report = undefined
  }
  return { exitCode, timedOut, ...(report ? { report } : {}) }
}

/** The part of schemathesis' output to show: everything when the run failed, else its closing summary. */
export function outputToShow(output: string, failed: boolean): string {
  if (failed) return output
  const summaryAt = output.search(/^=+ SUMMARY =+$/m)
  const summary = summaryAt === -1 ? output : output.slice(summaryAt)
  // schemathesis closes with pytest's banner ('==== 3 warnings in 8.64s ===='), which a CI that reads a run's
  // closing lines takes for a pytest run that executed no test; the banner stays in the log file
  return summary.replace(/^=+ .* in [\d.]+s =+\n?/gm, '').trimEnd()
}
