// ./scripts/prepare: obtains everything the two commands need on this machine before the first test that needs it —
// infra's prerequisites and those a workspace declares in its src/prerequisites.ts — and says what it obtained and
// how long each took. Tests never obtain anything: what they find missing names this command.
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { layoutFromEnv, repoRoot } from '../layout.ts'
import { prepareCommand } from '../missing-prerequisite.ts'
import { debianStep } from './debian.ts'
import { infraPrerequisites } from './infra-prerequisites.ts'
import {
  purposes as allPurposes,
  type PrerequisiteStep,
  type Prerequisites,
  type Purpose,
  purposeSets,
} from './prerequisite.ts'
import { runSteps, type StepResult, summaryTable } from './run.ts'

export { MissingPrerequisite, prepareCommand } from '../missing-prerequisite.ts'
export { buildGoBinary, builtGoBinary, type GoBuild, goBinaryPath } from '../native/go-build.ts'
export type {
  DebianPackage,
  ObtainContext,
  PrerequisiteStep,
  Prerequisites,
  Purpose,
} from './prerequisite.ts'
export { purposeSets, purposes } from './prerequisite.ts'
export { pythonToolPath } from './python-tools.ts'
export type { Outcome, StepResult } from './run.ts'

/** The workspaces' folders, from pnpm-workspace.yaml's `packages` (a folder, or `dir/*`). */
function workspaceDirs(): string[] {
  const lines = readFileSync(join(repoRoot, 'pnpm-workspace.yaml'), 'utf8').split('\n')
  const patterns: string[] = []
  // the list's items follow `packages:`, each `  - <pattern>` (quoted or not), up to the first line that is not one
  for (const line of lines.slice(lines.findIndex((each) => each.trim() === 'packages:') + 1)) {
    const item = line.trim()
    if (!item.startsWith('- ')) break
    patterns.push(item.slice(2).trim().replaceAll("'", '').replaceAll('"', ''))
  }
  return patterns.flatMap((pattern) => {
    if (!pattern.endsWith('/*')) return [join(repoRoot, pattern)]
    const parent = join(repoRoot, pattern.slice(0, -2))
    if (!existsSync(parent)) return []
    return readdirSync(parent, { withFileTypes: true })
      .filter((entry) => entry.isDirectory())
      .map((entry) => join(parent, entry.name))
  })
}

/** Every prerequisite of the repository: infra's, and each workspace's src/prerequisites.ts (its `prerequisites()`). */
export async function repositoryPrerequisites(env: NodeJS.ProcessEnv = process.env): Promise<Prerequisites> {
  const all: Prerequisites = await infraPrerequisites(env)
  for (const dir of workspaceDirs()) {
    const file = join(dir, 'src', 'prerequisites.ts')
    if (dir === join(repoRoot, 'infra') || !existsSync(file)) continue
    const module = (await import(pathToFileURL(file).href)) as {
      prerequisites?: (env: NodeJS.ProcessEnv) => Prerequisites | Promise<Prerequisites>
    }
    if (typeof module.prerequisites !== 'function')
      throw new Error(`${file} must export a function prerequisites()`)
    const declared = await module.prerequisites(env)
    all.debian.push(...declared.debian)
    all.steps.push(...declared.steps)
  }
  const names = all.steps.map((step) => step.name)
  const twice = names.filter((name, index) => names.indexOf(name) !== index)
  if (twice.length > 0 || names.includes('debian'))
    throw new Error(`prerequisites declared twice: ${[...new Set(twice), 'debian'].join(', ')}`)
  return all
}

/** The steps that serve `chosen`, with the steps they need (whatever those serve), and one for the Debian packages. */
export function stepsFor(prerequisites: Prerequisites, chosen: readonly Purpose[]): PrerequisiteStep[] {
  const byName = new Map(prerequisites.steps.map((step) => [step.name, step]))
  const selected = new Set<string>()
  const add = (step: PrerequisiteStep) => {
    if (selected.has(step.name)) return
    selected.add(step.name)
    for (const need of step.needs ?? []) {
      const needed = byName.get(need)
      if (needed) add(needed)
    }
  }
  for (const step of prerequisites.steps)
    if (step.purposes.some((purpose) => chosen.includes(purpose))) add(step)
  return [
    debianStep(prerequisites.debian, chosen),
    ...prerequisites.steps.filter((step) => selected.has(step.name)),
  ]
}

/** The --for argument that asks for these purposes again ('' for every purpose: the default). */
function purposesArgument(chosen: readonly Purpose[]): string {
  if (chosen.length === allPurposes.length) return ''
  const same = (set: readonly Purpose[]) =>
    set.length === chosen.length && set.every((p) => chosen.includes(p))
  return ` --for ${same(purposeSets.dev) ? 'dev' : chosen.join(',')}`
}

/** `dev`, `test`, or purposes separated by commas. */
export function parsePurposes(text: string): Purpose[] {
  if (text === 'dev' || text === 'test') return [...purposeSets[text]]
  const named = text.split(',').filter(Boolean)
  const unknown = named.filter((name) => !allPurposes.includes(name as Purpose))
  if (unknown.length > 0 || named.length === 0)
    throw new Error(`--for takes dev, test or some of ${allPurposes.join(', ')} (got '${text}')`)
  return named as Purpose[]
}

export interface PrepareReport {
  purposes: Purpose[]
  check: boolean
  seconds: number
  results: StepResult[]
}

/** Where the last preparation's report is kept (./scripts/test's closing table reads it). */
export const lastReportFile = (env: NodeJS.ProcessEnv = process.env): string =>
  join(layoutFromEnv(env).componentDir('prepare'), 'last-run.json')

/**
 * Obtains (or, with `check`, only finds) what the purposes need; prints progress and, when anything was obtained or
 * is missing, the summary. Resolves with the report; `ok` is false when anything is missing or failed.
 */
export async function prepare(options: {
  purposes: Purpose[]
  check?: boolean
  env?: NodeJS.ProcessEnv
  say?: (line: string) => void
}): Promise<PrepareReport & { ok: boolean }> {
  const env = options.env ?? process.env
  const say = options.say ?? ((line: string) => process.stderr.write(`[prepare] ${line}\n`))
  const started = Date.now()
  const steps = stepsFor(await repositoryPrerequisites(env), options.purposes)
  const logDir = join(layoutFromEnv(env).componentDir('prepare'), 'logs')
  mkdirSync(logDir, { recursive: true })
  const results = await runSteps(steps, { check: options.check ?? false, logDir, say })
  const report: PrepareReport = {
    purposes: options.purposes,
    check: options.check ?? false,
    seconds: (Date.now() - started) / 1000,
    results,
  }
  const ok = results.every((result) => result.outcome === 'present' || result.outcome === 'obtained')
  const quiet = ok && results.every((result) => result.outcome === 'present')
  if (quiet) say(`${results.length} prerequisites present (${report.seconds.toFixed(1)} s to check)`)
  else {
    for (const line of summaryTable(results)) say(line)
    say(
      ok
        ? `ready in ${report.seconds.toFixed(0)} s`
        : options.check
          ? `missing prerequisites: run ${prepareCommand}${purposesArgument(options.purposes)}`
          : `NOT ready: the failures above name their logs`,
    )
  }
  if (!options.check) writeFileSync(lastReportFile(env), `${JSON.stringify(report, null, 2)}\n`)
  return { ...report, ok }
}
