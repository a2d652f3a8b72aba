// `pnpm --filter @meridian/bench bench:overload`: the order saga on a CPU it cannot keep up with, with and without the
// admission of new orders (ORDER_ADMISSION_TARGET_MS). The whole system in a run of its own per mode (production
// form), its nine services confined to BENCH_OVERLOAD_CPUS (default `0`: one core of the machine's, by taskset on
// every thread), orders placed through the gateway at BENCH_OVERLOAD_RATE (60) orders/s for BENCH_OVERLOAD_SECONDS
// (20) by the clients of bench:saga (unconfined, in a process of their own). Without admission every order is taken
// and the queue grows; with it, the orders beyond what the confined system ships in the target time are answered 503
// with Retry-After at once, and the accepted ones keep their time. Side by side, the bare baseline of the same run:
// four plain kafkajs hops at the same rate. Prints the table; writes results/overload-latest.json.
import { execFile } from 'node:child_process'
import { mkdir, writeFile } from 'node:fs/promises'
import { loadavg } from 'node:os'
import { dirname } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { createDatabase } from '@meridian/db'
import { endpointsEnv, ensureInfra, freePort } from '@meridian/infra'
import { startSystem } from '@meridian/infra/system'
import { benchLifecycle } from '../bench-lifecycle.ts'
import { clockTicksPerSecond } from '../gateway/proc-stat.ts'
import { machineFigures } from '../report.ts'
import { runKafkaHopsBaseline } from './kafka-hops.ts'
import { type PhaseResult, phase } from './phase.ts'
import { setUp } from './system-setup.ts'

const say = (message: string) => process.stderr.write(`[bench:overload] ${message}\n`)
const resultsFile = fileURLToPath(new URL('../../results/overload-latest.json', import.meta.url))
const run = promisify(execFile)

const positive = (name: string, fallback: number) => {
  const value = Number(process.env[name] ?? fallback)
  if (!Number.isFinite(value) || value <= 0) throw new Error(`${name} must be a positive number`)
  return value
}
const config = {
  rate: positive('BENCH_OVERLOAD_RATE', 60),
  seconds: positive('BENCH_OVERLOAD_SECONDS', 20),
  cpus: process.env.BENCH_OVERLOAD_CPUS ?? '0',
  targetMs: positive('BENCH_OVERLOAD_TARGET_MS', 800),
  minInFlight: positive('BENCH_OVERLOAD_MIN_IN_FLIGHT', 8),
  windowMs: positive('BENCH_OVERLOAD_WINDOW_MS', 5000),
  modes: (process.env.BENCH_OVERLOAD_MODES ?? 'off,on')
    .split(',')
    .filter((mode) => mode === 'off' || mode === 'on'),
}

const { undo, run: lifecycle } = benchLifecycle(
  say,
  'cleaned up: the systems stopped, their databases removed',
)

interface ModeResult {
  mode: string
  result: PhaseResult
}

/** One mode: the system started, its services confined, a warm-up at a rate it carries, then the overload. */
async function runMode(mode: string, baseEnv: NodeJS.ProcessEnv, ticks: number): Promise<ModeResult> {
  const admission = mode === 'on'
  say(`admission ${mode}: starting the system`)
  const system = await startSystem({
    form: 'production',
    prefix: 'bench',
    gatewayPort: await freePort(),
    simulatorPort: 0,
    settings: { LOG_LEVEL: 'warn' },
    baseEnv,
    env: admission
      ? {
          order: {
            ORDER_ADMISSION_TARGET_MS: String(config.targetMs),
            ORDER_ADMISSION_MIN_IN_FLIGHT: String(config.minInFlight),
            ORDER_ADMISSION_WINDOW_MS: String(config.windowMs),
            ...(process.env.BENCH_OVERLOAD_ORDER_LOG_LEVEL
              ? { LOG_LEVEL: process.env.BENCH_OVERLOAD_ORDER_LOG_LEVEL }
              : {}),
          },
        }
      : {},
    log: say,
  })
  const closing = { label: `stop the system (admission ${mode})`, run: () => system.close() }
  undo.push(closing)
  try {
    const orderDatabase = system.services.order?.databaseUrl
    if (!orderDatabase) throw new Error('the run has no order database')
    const orders = createDatabase(orderDatabase, { max: 2, applicationName: 'bench-overload' })
    try {
      for (const [name, service] of Object.entries(system.services)) {
        if (service.pid) await run('taskset', ['-a', '-c', '-p', config.cpus, String(service.pid)])
        else throw new Error(`${name} has no process to confine`)
      }
      say(`the services confined to CPU ${config.cpus}`)
      const setup = await setUp(system)
      await phase(system, setup, orders, 5, 5, ticks, say)
      const result = await phase(system, setup, orders, config.rate, config.seconds, ticks, say)
      return { mode, result }
    } finally {
      await orders.end()
    }
  } finally {
    undo.splice(undo.indexOf(closing), 1)
    await system.close()
  }
}

const ms = (value: number) => value.toFixed(1).padStart(9)

async function main(): Promise<void> {
  const started = Date.now()
  const loadBefore = loadavg()[0] ?? 0
  const ticks = clockTicksPerSecond()
  const endpoints = await ensureInfra()
  // tracing off: its spans would cost the confined services more than the saga itself
  const baseEnv = {
    ...Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('OTEL_'))),
    ...endpointsEnv(endpoints),
  }
  say(`baseline: four plain kafkajs hops at ${config.rate} messages/s for ${config.seconds} s`)
  const baseline = await runKafkaHopsBaseline({
    brokers: endpoints.kafkaBrokers,
    rate: config.rate,
    seconds: config.seconds,
    namespace: `bench-overload-${Date.now().toString(36)}.`,
  })
  const modes: ModeResult[] = []
  for (const mode of config.modes) modes.push(await runMode(mode, baseEnv, ticks))

  const lines = [
    `the services on CPU ${config.cpus}, ${config.rate} orders/s for ${config.seconds} s; admission: ORDER_ADMISSION_TARGET_MS=${config.targetMs}, at least ${config.minInFlight} in flight`,
    'run                               sent  accepted   503   p50 ms    p99 ms  answer p99  lost  double  p99 / bare',
    `bare kafkajs, 4 hops (baseline)      -         -     - ${ms(baseline.p50)} ${ms(baseline.p99)}           -     -       -         1.0`,
    ...modes.map(({ mode, result }) => {
      const refused = result.refused['503'] ?? 0
      const ratio = baseline.p99 > 0 ? (result.p99 / baseline.p99).toFixed(1) : '-'
      return `saga, admission ${mode.padEnd(3)}            ${String(result.sent).padStart(5)} ${String(result.accepted).padStart(9)} ${String(refused).padStart(5)} ${ms(result.p50)} ${ms(result.p99)} ${ms(result.answerP99).padStart(11)} ${String(result.notShipped).padStart(5)} ${String(result.doubleCharges).padStart(7)} ${ratio.padStart(11)}`
    }),
  ]
  process.stdout.write(`${lines.join('\n')}\n`)
  const machine = machineFigures(loadBefore, loadavg()[0])
  await mkdir(dirname(resultsFile), { recursive: true })
  await writeFile(
    resultsFile,
    `${JSON.stringify({ at: new Date().toISOString(), config, machine, baseline, modes, seconds: (Date.now() - started) / 1000 }, null, 2)}\n`,
  )
  say(`results in ${resultsFile}`)
}

await lifecycle(main)
