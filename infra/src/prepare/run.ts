// Runs the prerequisite steps: each as soon as the steps it needs are there, independent ones side by side (at most
// four compiles at once), every long output into a log file of its own; progress lines while it works, a line a
// minute saying what is still running, and a summary of what was obtained and how long each took.
import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { errorText } from '../processes.ts'
import type { PrerequisiteStep } from './prerequisite.ts'

export type Outcome = 'present' | 'obtained' | 'missing' | 'failed' | 'skipped'

export interface StepResult {
  name: string
  title: string
  outcome: Outcome
  /** the time obtaining took (0 when present) */
  seconds: number
  /** what it is (present, obtained) or why not (missing, failed, skipped) */
  detail: string
}

export interface PrepareOptions {
  /** only find: a step that is missing is reported, not obtained */
  check: boolean
  /** where each step's log file goes */
  logDir: string
  say(line: string): void
  /** how often the steps still running are named; default a minute */
  heartbeatMs?: number
  /**
   * how many heavy steps (compiles) may run at once; default 4: two left the cores a third idle on a bare 2-core
   * machine (1.1-1.6 cores busy while Consul and Jaeger compiled for 20 minutes, helm, promtool and Mailpit waiting
   * behind them), a Go build's long single-threaded compiles and links leaving the other core to nobody
   */
  heavySlots?: number
}

/** A counting semaphore: compiles wait for a slot. */
function slots(count: number): <T>(work: () => Promise<T>) => Promise<T> {
  let free = count
  const waiting: (() => void)[] = []
  return async (work) => {
    if (free > 0) free -= 1
    else await new Promise<void>((resolve) => waiting.push(resolve))
    try {
      return await work()
    } finally {
      const next = waiting.shift()
      if (next) next()
      else free += 1
    }
  }
}

const seconds = (since: number) => (Date.now() - since) / 1000

/** Runs every step (its needs first); resolves with one result per step, in the steps' order. */
export async function runSteps(
  steps: readonly PrerequisiteStep[],
  options: PrepareOptions,
): Promise<StepResult[]> {
  mkdirSync(options.logDir, { recursive: true })
  const byName = new Map(steps.map((step) => [step.name, step]))
  for (const step of steps)
    for (const need of step.needs ?? [])
      if (!byName.has(need)) throw new Error(`prerequisite ${step.name} needs ${need}, which nobody declares`)
  const heavy = slots(options.heavySlots ?? 4)
  const running = new Map<string, number>()
  const results = new Map<string, Promise<StepResult>>()

  const runStep = async (step: PrerequisiteStep): Promise<StepResult> => {
    const result = (outcome: Outcome, detail: string, since?: number): StepResult => ({
      name: step.name,
      title: step.title,
      outcome,
      seconds: since === undefined ? 0 : seconds(since),
      detail,
    })
    // finding needs nothing first; obtaining waits for what the step needs
    const found = async () =>
      step.present().catch((error: unknown) => {
        throw new Error(`${step.name}: looking for it failed: ${errorText(error)}`)
      })
    if (options.check) {
      const there = await found()
      return there === undefined
        ? result('missing', step.describeMissing?.() ?? 'not on this machine')
        : result('present', there)
    }
    const needs = await Promise.all((step.needs ?? []).map((need) => resultOf(need)))
    const unmet = needs.filter((need) => need.outcome !== 'present' && need.outcome !== 'obtained')
    if (unmet.length > 0) return result('skipped', `needs ${unmet.map((need) => need.name).join(', ')}`)
    const there = await found()
    if (there !== undefined) return result('present', there)
    const obtain = async () => {
      const since = Date.now()
      running.set(step.name, since)
      const logFile = join(options.logDir, `${step.name}.log`)
      writeFileSync(logFile, '')
      options.say(`${step.name}: obtaining ${step.title} (its output: ${logFile})`)
      try {
        const detail = await step.obtain({
          logFile,
          say: (message) => options.say(`${step.name}: ${message}`),
        })
        const done = result('obtained', detail, since)
        options.say(`${step.name}: obtained in ${done.seconds.toFixed(0)} s`)
        return done
      } catch (error) {
        const failed = result('failed', errorText(error), since)
        options.say(`${step.name}: failed after ${failed.seconds.toFixed(0)} s: ${failed.detail}`)
        return failed
      } finally {
        running.delete(step.name)
      }
    }
    return step.heavy ? heavy(obtain) : obtain()
  }
  const resultOf = (name: string): Promise<StepResult> => {
    let promise = results.get(name)
    if (!promise) {
      promise = runStep(byName.get(name)!)
      results.set(name, promise)
    }
    return promise
  }

  const heartbeat = setInterval(() => {
    if (running.size === 0) return
    const names = [...running].map(([name, since]) => `${name} ${seconds(since).toFixed(0)} s`)
    options.say(`still obtaining: ${names.join(', ')}`)
  }, options.heartbeatMs ?? 60_000)
  try {
    return await Promise.all(steps.map((step) => resultOf(step.name)))
  } finally {
    clearInterval(heartbeat)
  }
}

/** The summary: one row per step, what happened and how long it took. */
export function summaryTable(results: readonly StepResult[]): string[] {
  const rows = [
    ['PREREQUISITE', 'OUTCOME', 'SECONDS', 'DETAIL'],
    ...results.map((r) => [r.title, r.outcome, r.seconds.toFixed(1), r.detail.split('\n')[0]!.slice(0, 100)]),
  ]
  const widths = [0, 1, 2].map((column) => Math.max(...rows.map((row) => row[column]!.length)))
  return rows.map((row) =>
    [row[0]!.padEnd(widths[0]!), row[1]!.padEnd(widths[1]!), row[2]!.padStart(widths[2]!), row[3]!]
      .join('  ')
      .trimEnd(),
  )
}
