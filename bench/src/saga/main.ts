// `pnpm --filter @meridian/bench bench:saga`: the order saga under load. The whole system in a run of its own
// (@meridian/infra/system), orders placed through the gateway at a fixed rate by clients in a process of their own
// (load-process.ts), and for each order the time from its placing (the order's commit) to its shipment (the saga's
// shipment step, committed when order consumed shipment.created): four hops through outbox, Kafka and inbox. Side by
// side, the bare baseline in the same run: four hops of plain kafkajs (no database, no outbox) at the same rate.
// Prints: placed -> shipped p50/p99 at BENCH_SAGA_RATE (100) orders/s for BENCH_SAGA_SECONDS (60), the highest
// sustained rate of BENCH_SAGA_STEPS (25,50,75,125,150 orders/s, BENCH_SAGA_STEP_SECONDS each, from the lowest up), CPU ms per order and
// memory of each process, lost orders and double charges; writes results/saga-latest.json.
import { execFile } from 'node:child_process'
import { writeFile } from 'node:fs/promises'
import { cpus, loadavg } from 'node:os'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { createDatabase, type Sql } from '@meridian/db'
import { ensureInfra, freePort } from '@meridian/infra'
import { type MeridianSystem, startSystem } from '@meridian/infra/system'
import { benchLifecycle } from '../bench-lifecycle.ts'
import { clockTicksPerSecond, processTree, type UsageSnapshot, usageOf } from '../gateway/proc-stat.ts'
import { percentile } from '../load.ts'
import { machineFigures, toMb } from '../report.ts'
import { runKafkaHopsBaseline } from './kafka-hops.ts'
import type { LoadOutcome, LoadPlan } from './load-process.ts'
import { api, newProduct, type Setup, setUp } from './system-setup.ts'

const say = (message: string) => process.stderr.write(`[bench:saga] ${message}\n`)
const resultsFile = fileURLToPath(new URL('../../results/saga-latest.json', import.meta.url))
const loadProcess = fileURLToPath(new URL('./load-process.ts', import.meta.url))
const run = promisify(execFile)

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
}

const { undo, run: lifecycle } = benchLifecycle(
  say,
  'cleaned up: the system stopped, its databases and topics removed',
)

/** The processes whose CPU and memory are reported: each service's tree. */
const measured = ['gateway', 'order', 'payment', 'inventory', 'shipping', 'auth'] as const

interface PhaseResult {
  rate: number
  seconds: number
  sent: number
  accepted: number
  refused: Record<string, number>
  /** placed -> shipped, ms */
  p50: number
  p99: number
  max: number
  /** POST /api/v1/orders as the clients saw it, ms */
  answerP50: number
  answerP99: number
  /** orders accepted that had not shipped when the wait ended */
  notShipped: number
  /** medians of each hop as order saw it: placed -> paid, paid -> reserved, reserved -> shipped, ms */
  hopMedians: { paid: number; reserved: number; shipped: number }
  /** orders charged more than once (the provider's count) */
  doubleCharges: number
  /** the last order settled this long after the last one was sent, s */
  drainSeconds: number
  clientLagMs: number
  cpuMsPerOrder: Record<string, number>
  rssMb: Record<string, number>
}

const usageNow = (system: MeridianSystem, ticks: number): Record<string, UsageSnapshot> =>
  Object.fromEntries(
    measured.map((name) => {
      const pid = system.services[name]?.pid
      return [name, usageOf(pid ? processTree(pid) : [], ticks)]
    }),
  )

async function phase(
  system: MeridianSystem,
  setup: Setup,
  orders: Sql,
  rate: number,
  seconds: number,
  ticks: number,
): Promise<PhaseResult> {
  // a product of the phase's own: its orders are this phase's
  const product = await newProduct(system, setup)
  const plan: LoadPlan = {
    gatewayUrl: system.gatewayUrl,
    customers: setup.customers,
    product,
    paymentToken: setup.paymentToken,
    ratePerSecond: rate,
    seconds,
  }
  const before = usageNow(system, ticks)
  say(`${rate} orders/s for ${seconds} s`)
  const { stdout } = await run(process.execPath, ['--import', 'tsx', loadProcess], {
    env: { ...process.env, BENCH_SAGA_LOAD: JSON.stringify(plan) },
    maxBuffer: 256 * 1024 * 1024,
  })
  const load = JSON.parse(stdout.trim().split('\n').at(-1) ?? '{}') as LoadOutcome
  const sentAll = Date.now()

  // settled: every order of the phase's product shipped (or the wait gave up)
  let open = load.accepted.length
  while (Date.now() - sentAll < 120_000) {
    const [row] = await orders<{ open: number }[]>`
      select count(*)::int as open from orders o
      where o.status <> 'shipped' and exists (select 1 from order_items i where i.order_id = o.id and i.product_id = ${product.id})`
    open = row?.open ?? 0
    if (open === 0) break
    await new Promise((resolve) => setTimeout(resolve, 250))
  }
  const drainSeconds = (Date.now() - sentAll) / 1000
  const after = usageNow(system, ticks)

  const latencies = (
    await orders<{ ms: number }[]>`
      select (extract(epoch from (st.at - o.created_at)) * 1000)::float8 as ms
      from orders o
      join lateral (
        select at from saga_steps s where s.order_id = o.id and s.step = 'shipment' and s.outcome = 'succeeded'
        order by s.id limit 1
      ) st on true
      where exists (select 1 from order_items i where i.order_id = o.id and i.product_id = ${product.id})`
  )
    .map((row) => row.ms)
    .sort((a, b) => a - b)

  // where the time goes: each answer as order consumed it, from the step before
  const hops = await orders<{ paid: number; reserved: number; shipped: number }[]>`
    select
      percentile_cont(0.5) within group (order by extract(epoch from (p.at - o.created_at)) * 1000)::float8 as paid,
      percentile_cont(0.5) within group (order by extract(epoch from (r.at - p.at)) * 1000)::float8 as reserved,
      percentile_cont(0.5) within group (order by extract(epoch from (sh.at - r.at)) * 1000)::float8 as shipped
    from orders o
    join lateral (select min(at) as at from saga_steps where order_id = o.id and step = 'payment' and outcome = 'succeeded') p on true
    join lateral (select min(at) as at from saga_steps where order_id = o.id and step = 'inventory' and outcome = 'succeeded') r on true
    join lateral (select min(at) as at from saga_steps where order_id = o.id and step = 'shipment' and outcome = 'succeeded') sh on true
    where exists (select 1 from order_items i where i.order_id = o.id and i.product_id = ${product.id})`
  const hopMedians = hops[0] ?? { paid: 0, reserved: 0, shipped: 0 }

  let doubleCharges = 0
  for (const orderId of load.accepted) {
    const summary = await api<{ charges: number }>(
      `${system.simulatorUrl}/v1/orders/${orderId}/summary`,
      'GET',
    )
    if (summary.charges > 1) doubleCharges += 1
  }
  const accepted = Math.max(1, load.accepted.length)
  return {
    rate,
    seconds,
    sent: load.sent,
    accepted: load.accepted.length,
    refused: load.refused,
    p50: percentile(latencies, 0.5),
    p99: percentile(latencies, 0.99),
    max: latencies.at(-1) ?? 0,
    answerP50: percentile(load.answerMs, 0.5),
    answerP99: percentile(load.answerMs, 0.99),
    notShipped: load.accepted.length - latencies.length,
    hopMedians,
    doubleCharges,
    drainSeconds,
    clientLagMs: load.lagMs,
    cpuMsPerOrder: Object.fromEntries(
      measured.map((name) => [
        name,
        Math.round((((after[name]?.cpuMs ?? 0) - (before[name]?.cpuMs ?? 0)) / accepted) * 100) / 100,
      ]),
    ),
    rssMb: Object.fromEntries(measured.map((name) => [name, toMb(after[name]?.rss ?? 0)])),
  }
}

/** Kept up: every order accepted and shipped, the clients on schedule, the tail under a second, no backlog. */
const sustained = (result: PhaseResult) =>
  result.accepted === result.sent &&
  result.notShipped === 0 &&
  result.clientLagMs < 1000 &&
  result.p99 < 1000 &&
  result.drainSeconds < 5

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
  const system = await startSystem({
    prefix: 'bench',
    gatewayPort: await freePort(),
    simulatorPort: 0,
    settings: { LOG_LEVEL: 'warn' },
    log: say,
  })
  undo.push({ label: 'stop the system', run: () => system.close() })
  const orderDatabase = system.services.order?.databaseUrl
  if (!orderDatabase) throw new Error('the run has no order database')
  const orders = createDatabase(orderDatabase, { max: 2, applicationName: 'bench-saga' })
  undo.push({ label: 'close the order database', run: () => orders.end() })
  const setup = await setUp(system)

  say(`baseline: four plain kafkajs hops at ${config.rate} messages/s for ${config.baselineSeconds} s`)
  const baseline = await runKafkaHopsBaseline({
    brokers: endpoints.kafkaBrokers,
    rate: config.rate,
    seconds: config.baselineSeconds,
    namespace: system.kafkaNamespace,
  })

  // a short warm-up (JIT, pools, the first rebalance of nothing): not reported
  await phase(system, setup, orders, Math.min(config.rate, 50), 5, ticks)
  const aim = await phase(system, setup, orders, config.rate, config.seconds, ticks)
  const steps: PhaseResult[] = []
  for (const rate of config.steps) {
    const result = await phase(system, setup, orders, rate, config.stepSeconds, ticks)
    steps.push(result)
    if (!sustained(result)) break
  }
  const maxSustained = [aim, ...steps].filter(sustained).reduce((best, row) => Math.max(best, row.rate), 0)

  const rows = [aim, ...steps]
  process.stdout.write(`${table(rows, { ...baseline, rate: config.rate })}\n`)
  process.stdout.write(
    `\nhighest sustained rate: ${maxSustained} orders/s (every order accepted and shipped, p99 < 1 s, no backlog)\n` +
      `aim at ${config.rate} orders/s: p99 ${aim.p99.toFixed(1)} ms (aim < 250), lost ${aim.notShipped}, double charges ${aim.doubleCharges}\n` +
      `hop medians at ${config.rate}/s: placed -> paid ${aim.hopMedians.paid.toFixed(1)} ms, paid -> reserved ${aim.hopMedians.reserved.toFixed(1)} ms, reserved -> shipped ${aim.hopMedians.shipped.toFixed(1)} ms\n` +
      `CPU ms per order at ${config.rate}/s: ${Object.entries(aim.cpuMsPerOrder)
        .map(([name, value]) => `${name} ${value}`)
        .join(', ')}\n` +
      `RSS MB after: ${Object.entries(aim.rssMb)
        .map(([name, value]) => `${name} ${value}`)
        .join(', ')}\n`,
  )
  const machine = machineFigures(loadBefore, loadavg()[0])
  await writeFile(
    resultsFile,
    `${JSON.stringify({ at: new Date().toISOString(), config, machine, cpus: cpus().length, baseline, aim, steps, maxSustained, seconds: (Date.now() - started) / 1000 }, null, 2)}\n`,
  )
  say(`results in ${resultsFile}`)
}

await lifecycle(main)
