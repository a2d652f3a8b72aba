// `pnpm --filter @meridian/bench bench:saga`: the order saga under load. The whole system in a run of its own
// (@meridian/infra/system), orders placed through the gateway at a fixed rate by clients in a process of their own
// (load-process.ts), and for each order the time from its placing (the order's commit) to its shipment (the saga's
// shipment step, committed when order consumed shipment.created): four hops through outbox, Kafka and inbox. Side by
// side, the bare baseline in the same run: four hops of plain kafkajs (no database, no outbox) at the same rate.
// The services run in the production form (their builds under node, NODE_ENV=production; MERIDIAN_SYSTEM_BUILD=development
// measures the sources under tsx instead). Prints: placed -> shipped p50/p99 at BENCH_SAGA_RATE (100) orders/s for BENCH_SAGA_SECONDS (60), the highest
// sustained rate of BENCH_SAGA_STEPS (25,50,75,125,150 orders/s, BENCH_SAGA_STEP_SECONDS each, from the lowest up), CPU ms per order and
// memory of each process (every service, PostgreSQL, Kafka, Consul, Redis), the nine services' CPU while idle, lost orders and
// double charges; writes results/saga-latest.json.
import { mkdir, writeFile } from 'node:fs/promises'
import { cpus, loadavg } from 'node:os'
import { dirname } from 'node:path'
import { fileURLToPath } from 'node:url'
import { createDatabase } from '@meridian/db'
import { endpointsEnv, ensureInfra, freePort, infraStatus } from '@meridian/infra'
import { startSystem } from '@meridian/infra/system'
import { benchLifecycle } from '../bench-lifecycle.ts'
import { clockTicksPerSecond } from '../gateway/proc-stat.ts'
import { machineFigures } from '../report.ts'
import { runKafkaHopsBaseline } from './kafka-hops.ts'
import { type EnginePids, idleUsage, type PhaseResult, phase, sustained } from './phase.ts'
import { setUp } from './system-setup.ts'

const say = (message: string) => process.stderr.write(`[bench:saga] ${message}\n`)
const resultsFile = fileURLToPath(new URL('../../results/saga-latest.json', import.meta.url))

const numberFrom = (name: string, fallback: number) => {
  const value = Number(process.env[name] ?? fallback)
  if (!Number.isFinite(value) || value <= 0) throw new Error(`${name} must be a positive number`)
  return value
}
const config = {
  rate: numberFrom('BENCH_SAGA_RATE', 100),
  seconds: numberFrom('BENCH_SAGA_SECONDS', 60),
  steps: (process.env.BENCH_SAGA_STEPS ?? '25,50,75,125,150')
    .split(',')
    .map(Number)
    .filter((n) => n > 0),
  stepSeconds: numberFrom('BENCH_SAGA_STEP_SECONDS', 20),
  baselineSeconds: numberFrom('BENCH_SAGA_BASELINE_SECONDS', 20),
  idleSeconds: numberFrom('BENCH_SAGA_IDLE_SECONDS', 30),
}

/**
 * Before the idle spell: the last phase's notifications and vacuums end, and the pools' idle connections (30 s) close —
 * idle is the steady state of no requests, not the minute after a burst.
 */
const settleSeconds = 35
/** How long a phase's mails may take to be sent before the next phase starts anyway (the figure says how many were left). */
const mailDrainDeadlineMs = 300_000

const { undo, run: lifecycle } = benchLifecycle(
  say,
  'cleaned up: the system stopped, its databases and topics removed',
)

const ms = (value: number) => value.toFixed(1).padStart(8)

function table(rows: PhaseResult[], baseline: { p50: number; p99: number; rate: number }): string {
  const lines = [
    'target                               orders/s  accepted   p50 ms   p99 ms   max ms  answer p99  lost  double',
    `bare kafkajs, 4 hops (baseline)    ${String(baseline.rate).padStart(9)}         - ${ms(baseline.p50)} ${ms(baseline.p99)}        -           -     -       -`,
    ...rows.map(
      (row) =>
        `saga placed -> shipped, ${String(row.seconds).padStart(3)} s     ${String(row.rate).padStart(9)} ${String(row.accepted).padStart(9)} ${ms(row.p50)} ${ms(row.p99)} ${ms(row.max)} ${ms(row.answerP99)}    ${String(row.notShipped).padStart(4)} ${String(row.doubleCharges).padStart(7)}`,
    ),
  ]
  return lines.join('\n')
}

async function main(): Promise<void> {
  const started = Date.now()
  const loadBefore = loadavg()[0] ?? 0
  const ticks = clockTicksPerSecond()
  const endpoints = await ensureInfra()
  const engines: EnginePids = {}
  for (const engine of await infraStatus())
    if (engine.mode === 'native' && engine.process && engine.name !== 'jaeger')
      engines[engine.name] = Number(engine.process)
  const form = process.env.MERIDIAN_SYSTEM_BUILD === 'development' ? 'development' : 'production'
  say(`the services in the ${form} form`)
  // tracing stays off unless asked for: a shell that ran `./scripts/infra env` while the trace store was up exports
  // its address, and every span sent there costs the services more than the saga itself (a run so traced: 100/s p99
  // 31 s, highest sustained 50/s)
  const tracing = process.env.BENCH_SAGA_TRACING === '1'
  const untraced = Object.fromEntries(
    Object.entries(process.env).filter(([name]) => tracing || !name.startsWith('OTEL_')),
  )
  say(tracing ? 'tracing on (BENCH_SAGA_TRACING=1): the OTEL_* of this shell' : 'tracing off')
  const system = await startSystem({
    form,
    prefix: 'bench',
    gatewayPort: await freePort(),
    simulatorPort: 0,
    settings: { LOG_LEVEL: 'warn' },
    // the engines ensured above, whatever the shell exported (a fresh shell exports none)
    baseEnv: { ...untraced, ...endpointsEnv(endpoints) },
    log: say,
  })
  undo.push({ label: 'stop the system', run: () => system.close() })
  const orderDatabase = system.services.order?.databaseUrl
  if (!orderDatabase) throw new Error('the run has no order database')
  const orders = createDatabase(orderDatabase, { max: 2, applicationName: 'bench-saga' })
  undo.push({ label: 'close the order database', run: () => orders.end() })
  const notificationDatabase = system.services.notification?.databaseUrl
  if (!notificationDatabase) throw new Error('the run has no notification database')
  const mails = createDatabase(notificationDatabase, { max: 1, applicationName: 'bench-saga' })
  undo.push({ label: 'close the notification database', run: () => mails.end() })
  /**
   * Every order mails its customer: a phase leaves notification sending its mails (6,000 after the aim, about 50 a
   * second to the machine's Mailpit), which took the next phases' and the idle spell's CPU (2026-12-02: the idle
   * spell's notification 9-10% of a core and Mailpit 5-8% were that backlog). Waited out before each phase and
   * reported, so each phase starts on a system with nothing left to do.
   */
  const drains: { after: string; pending: number; seconds: number; left: number }[] = []
  const drainMail = async (after: string): Promise<void> => {
    const pendingNow = async () =>
      Number(
        (
          await mails<{ n: number }[]>`
        select count(*)::int as n from email_deliveries where status = 'pending'`
        )[0]?.n ?? 0,
      )
    const since = Date.now()
    const pending = await pendingNow()
    let left = pending
    while (left > 0 && Date.now() - since < mailDrainDeadlineMs) {
      await new Promise((resolve) => setTimeout(resolve, 500))
      left = await pendingNow()
    }
    const drained = { after, pending, seconds: Math.round((Date.now() - since) / 100) / 10, left }
    drains.push(drained)
    if (pending > 0)
      say(
        `after ${after}: ${pending} mails pending, ${left === 0 ? `sent in ${drained.seconds} s` : `${left} still pending after ${drained.seconds} s`}`,
      )
  }
  const setup = await setUp(system)

  say(`baseline: four plain kafkajs hops at ${config.rate} messages/s for ${config.baselineSeconds} s`)
  const baseline = await runKafkaHopsBaseline({
    brokers: endpoints.kafkaBrokers,
    rate: config.rate,
    seconds: config.baselineSeconds,
    namespace: system.kafkaNamespace,
  })

  // a short warm-up (JIT, pools, the first rebalance of nothing): not reported
  await phase(system, setup, orders, Math.min(config.rate, 50), 5, ticks, say, engines)
  await drainMail('the warm-up')
  const aim = await phase(system, setup, orders, config.rate, config.seconds, ticks, say, engines)
  await drainMail(`${config.rate} orders/s`)
  const steps: PhaseResult[] = []
  for (const rate of config.steps) {
    if (steps.length > 0) await drainMail(`${steps.at(-1)?.rate} orders/s`)
    const result = await phase(system, setup, orders, rate, config.stepSeconds, ticks, say, engines)
    steps.push(result)
    if (!sustained(result)) break
  }
  // Idle last (the aim follows its warm-up directly: a quiet spell first would let the pools' idle connections close
  // and the aim's first seconds reconnect): no order at all, then lone orders (two a second), whose latency is an
  // event's first hop after a quiet spell.
  await drainMail(`${steps.at(-1)?.rate ?? config.rate} orders/s`)
  say(`idle for ${config.idleSeconds} s (after ${settleSeconds} s without orders)`)
  await new Promise((resolve) => setTimeout(resolve, settleSeconds * 1000))
  const idle = await idleUsage(system, engines, config.idleSeconds, ticks)
  const lone = await phase(system, setup, orders, 2, 5, ticks, say, engines)
  const maxSustained = [aim, ...steps].filter(sustained).reduce((best, row) => Math.max(best, row.rate), 0)

  const rows = [aim, ...steps]
  process.stdout.write(`${table(rows, { ...baseline, rate: config.rate })}\n`)
  process.stdout.write(
    `\nhighest sustained rate: ${maxSustained} orders/s (every order accepted and shipped, p99 < 1 s, no backlog)\n` +
      `aim at ${config.rate} orders/s: p99 ${aim.p99.toFixed(1)} ms (aim < 250), lost ${aim.notShipped}, double charges ${aim.doubleCharges}\n` +
      `hop medians at ${config.rate}/s: placed -> charged ${aim.hopMedians.paid.toFixed(1)} ms, charged -> reserved ${aim.hopMedians.reserved.toFixed(1)} ms, reserved -> shipment ${aim.hopMedians.shipped.toFixed(1)} ms, shipment -> order saw it ${aim.hopMedians.seen.toFixed(1)} ms\n` +
      `CPU ms per order at ${config.rate}/s: ${Object.entries(aim.cpuMsPerOrder)
        .map(([name, value]) => `${name} ${value}`)
        .join(', ')}\n` +
      `CPU ms per order, all processes, at each rate (more orders a second share batches, so each costs less): ${rows
        .map(
          (row) =>
            `${row.rate}/s ${row.cpuMsPerOrder.total} (postgres ${row.cpuMsPerOrder.postgres ?? '-'}, kafka ${row.cpuMsPerOrder.kafka ?? '-'})`,
        )
        .join(', ')}\n` +
      `idle, % of one core over ${config.idleSeconds} s: ${Object.entries(idle)
        .map(([name, value]) => `${name} ${value}`)
        .join(', ')}\n` +
      `mail backlog waited out before each next phase: ${
        drains
          .filter((drain) => drain.pending > 0)
          .map(
            (drain) =>
              `after ${drain.after} ${drain.pending} mails in ${drain.seconds} s${drain.left > 0 ? ` (${drain.left} left)` : ''}`,
          )
          .join(', ') || 'none'
      }\n` +
      `lone orders (2/s after the idle spell): placed -> shipped p50 ${lone.p50.toFixed(1)} ms, p99 ${lone.p99.toFixed(1)} ms\n` +
      `RSS MB after: ${Object.entries(aim.rssMb)
        .map(([name, value]) => `${name} ${value}`)
        .join(', ')}\n`,
  )
  const machine = machineFigures(loadBefore, loadavg()[0])
  await mkdir(dirname(resultsFile), { recursive: true })
  await writeFile(
    resultsFile,
    `${JSON.stringify({ at: new Date().toISOString(), config, machine, cpus: cpus().length, baseline, idle, lone, aim, steps, maxSustained, drains, seconds: (Date.now() - started) / 1000 }, null, 2)}\n`,
  )
  say(`results in ${resultsFile}`)
}

await lifecycle(main)
