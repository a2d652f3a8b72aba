// `pnpm --filter @meridian/bench bench:footprint`: what each service costs to run in its two forms — the development
// form (src/main.ts under tsx, as ./scripts/dev runs it, without the watcher) and the production build (./scripts/build,
// `node dist/main.js` with NODE_ENV=production). For each form the whole system starts (@meridian/infra/system); then
// each service in turn is stopped and started again alone, timed from spawn to the first 200 from /health/ready (asked
// every 20 ms); 10 s after the last one is ready, each process tree's RSS is read. Beside them, du of build/<name>.
// Prints the table and writes results/footprint-latest.json.
import { execFile } from 'node:child_process'
import { mkdir, writeFile } from 'node:fs/promises'
import { loadavg } from 'node:os'
import { dirname, join } from 'node:path'
import { performance } from 'node:perf_hooks'
import { setTimeout as sleep } from 'node:timers/promises'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { endpointsEnv, ensureInfra, freePort } from '@meridian/infra'
import { type MeridianSystem, type SystemForm, startSystem } from '@meridian/infra/system'
import { benchLifecycle } from '../bench-lifecycle.ts'
import { processTree, usageOf } from '../gateway/proc-stat.ts'
import { machineFigures, toMb } from '../report.ts'

const say = (message: string) => process.stderr.write(`[bench:footprint] ${message}\n`)
const resultsFile = fileURLToPath(new URL('../../results/footprint-latest.json', import.meta.url))
const buildDir = fileURLToPath(new URL('../../../build', import.meta.url))
const run = promisify(execFile)

const idleMs = Number(process.env.BENCH_FOOTPRINT_IDLE_SECONDS ?? 10) * 1000
const forms: SystemForm[] = ['development', 'production']

interface Figures {
  /** spawn to the first 200 from /health/ready */
  startMs: number
  /** the process tree's RSS after idleMs (tsx's esbuild service included in the development form) */
  rssBytes: number
}

const { undo, run: lifecycle } = benchLifecycle(
  say,
  'cleaned up: the systems stopped, their databases and topics removed',
)

/** Every service of the system restarted alone and timed, then left idle; its figures. */
async function measure(system: MeridianSystem): Promise<Record<string, Figures>> {
  const names = Object.keys(system.services).filter((name) => !name.includes('#'))
  const startMs: Record<string, number> = {}
  for (const name of names) {
    await system.stop(name)
    const started = performance.now()
    await system.start(name)
    startMs[name] = performance.now() - started
    say(`${system.form}: ${name} ready in ${Math.round(startMs[name])} ms`)
  }
  say(`${system.form}: idle for ${idleMs / 1000} s`)
  await sleep(idleMs)
  return Object.fromEntries(
    names.map((name) => {
      const pid = system.services[name]?.pid
      if (pid === undefined) throw new Error(`${name} is not running`)
      return [name, { startMs: startMs[name] ?? 0, rssBytes: usageOf(processTree(pid), 100).rss }]
    }),
  )
}

async function artifactKb(name: string): Promise<number | undefined> {
  try {
    const { stdout } = await run('du', ['-sk', join(buildDir, name)])
    return Number(stdout.split('\t')[0])
  } catch {
    return undefined
  }
}

const pad = (value: string, width: number) => value.padStart(width)

function table(
  byForm: Record<SystemForm, Record<string, Figures>>,
  sizes: Record<string, number | undefined>,
) {
  const names = Object.keys(sizes)
  const header = `${'service'.padEnd(18)}${pad('RSS MB dev', 12)}${pad('RSS MB prod', 13)}${pad('ready ms dev', 14)}${pad('ready ms prod', 15)}${pad('build MB', 10)}`
  const rows = names.map((name) => {
    const dev = byForm.development[name]
    const prod = byForm.production[name]
    const size = sizes[name]
    return `${name.padEnd(18)}${pad(dev ? toMb(dev.rssBytes).toFixed(1) : '-', 12)}${pad(prod ? toMb(prod.rssBytes).toFixed(1) : '-', 13)}${pad(dev ? String(Math.round(dev.startMs)) : '-', 14)}${pad(prod ? String(Math.round(prod.startMs)) : '-', 15)}${pad(size === undefined ? '-' : (size / 1024).toFixed(1), 10)}`
  })
  return [header, '-'.repeat(header.length), ...rows].join('\n')
}

await lifecycle(async () => {
  const loadBefore = loadavg()[0] ?? 0
  const endpoints = await ensureInfra({ progress: () => {} })
  const baseEnv: NodeJS.ProcessEnv = { ...process.env, ...endpointsEnv(endpoints) }
  const byForm = {} as Record<SystemForm, Record<string, Figures>>
  for (const form of forms) {
    say(`${form}: starting the system`)
    const system = await startSystem({
      prefix: 'footprint',
      form,
      // ports of their own: a developer's system (8080, 3099) may be running
      gatewayPort: await freePort(),
      simulatorPort: 0,
      startConcurrency: 1,
      readyPollMs: 20,
      baseEnv,
      log: (line) => say(line),
    })
    const close = { label: `close the ${form} system`, run: () => system.close() }
    undo.push(close)
    byForm[form] = await measure(system)
    await system.close()
  }
  const names = Object.keys(byForm.production).concat('payment-simulator')
  const sizes = Object.fromEntries(
    await Promise.all(names.map(async (name) => [name, await artifactKb(name)] as const)),
  )
  const printed = table(byForm, sizes)
  process.stdout.write(`${printed}\n`)
  await mkdir(dirname(resultsFile), { recursive: true })
  await writeFile(
    resultsFile,
    `${JSON.stringify({ machine: machineFigures(loadBefore, loadavg()[0]), idleMs, byForm, artifactKb: sizes }, null, 2)}\n`,
  )
  say(`wrote ${resultsFile}`)
})
