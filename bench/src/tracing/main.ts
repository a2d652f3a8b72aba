// `pnpm --filter @meridian/bench bench:tracing`: what tracing costs, in one run — the chassis (the users list through
// the real app) and the order saga (the whole system, placed -> shipped), each with tracing off, exported to the
// trace store at 10% and at 100% (parent-based ratio sampling), the chassis beside bare Fastify. Prints both tables
// and writes results/tracing-latest.json. BENCH_TRACING_PARTS=chassis or saga runs one of the two.
import { mkdir, writeFile } from 'node:fs/promises'
import { loadavg } from 'node:os'
import { dirname } from 'node:path'
import { fileURLToPath } from 'node:url'
import { ensureInfra, ensureTraceStore, infraEnv, nativeJaegerUiUrl, stopTraceStore } from '@meridian/infra'
import { loadBenchConfig } from '../bench-config.ts'
import { benchLifecycle } from '../bench-lifecycle.ts'
import { clockTicksPerSecond } from '../gateway/proc-stat.ts'
import { positiveIntegerKnob } from '../knobs.ts'
import { machineFigures } from '../report.ts'
import { chassisTable, chassisUnderTracing } from './chassis.ts'
import { tracingModes } from './modes.ts'
import { sagaTable, sagaUnderTracing } from './saga.ts'

const say = (message: string) => process.stderr.write(`[bench:tracing] ${message}\n`)
const resultsFile = fileURLToPath(new URL('../../results/tracing-latest.json', import.meta.url))
const { undo, run } = benchLifecycle(
  say,
  'cleaned up: servers and systems stopped, databases and keys removed',
)

function partsFrom(env: NodeJS.ProcessEnv): Set<'chassis' | 'saga'> {
  const raw = env.BENCH_TRACING_PARTS?.trim() || 'chassis,saga'
  const names = raw.split(',').map((name) => name.trim())
  const unknown = names.filter((name) => name !== 'chassis' && name !== 'saga')
  if (unknown.length > 0)
    throw new Error(`BENCH_TRACING_PARTS: unknown ${unknown.join(', ')} (known: chassis, saga)`)
  return new Set(names as ('chassis' | 'saga')[])
}

async function main(): Promise<void> {
  const started = Date.now()
  const loadBefore = loadavg()[0] ?? 0
  const parts = partsFrom(process.env)
  const config = loadBenchConfig()
  const saga = {
    rate: positiveIntegerKnob(process.env, 'BENCH_TRACING_SAGA_RATE', 50),
    seconds: positiveIntegerKnob(process.env, 'BENCH_TRACING_SAGA_SECONDS', 30),
  }
  const endpoints = await ensureInfra()
  // the trace store the modes export to; one this run started is stopped at its end
  const storeBefore = (await infraEnv()).includes('OTEL_EXPORTER_OTLP_ENDPOINT=')
  const otlpEndpoint = await ensureTraceStore()
  if (!storeBefore) undo.push({ label: 'stop the trace store', run: () => stopTraceStore() })
  const queryUrl = process.env.JAEGER_QUERY_URL || nativeJaegerUiUrl

  const report: Record<string, unknown> = {}
  if (parts.has('chassis')) {
    const results = await chassisUnderTracing({
      modes: tracingModes,
      otlpEndpoint,
      config,
      endpoints,
      undo,
      say,
    })
    process.stdout.write(`\n${chassisTable(results)}\n`)
    report.chassis = { settings: { ...config, inheritedEnv: undefined }, results }
  }
  if (parts.has('saga')) {
    const results = await sagaUnderTracing({
      modes: tracingModes,
      endpoints,
      otlpEndpoint,
      queryUrl,
      ...saga,
      ticks: clockTicksPerSecond(),
      undo,
      say,
    })
    process.stdout.write(`\n${sagaTable(results, saga.rate, saga.seconds)}\n`)
    report.saga = { settings: saga, results }
  }
  await mkdir(dirname(resultsFile), { recursive: true })
  await writeFile(
    resultsFile,
    `${JSON.stringify({ measuredAt: new Date(started).toISOString(), durationSeconds: Math.round((Date.now() - started) / 1000), machine: machineFigures(loadBefore, loadavg()[0]), ...report }, null, 2)}\n`,
  )
  say(`wrote ${resultsFile}`)
}

await run(main)
