// One phase of the saga bench: orders placed through the gateway at a fixed rate for some seconds by a client process
// of their own (load-process.ts), then waited for until shipped, and what it took read from the services' databases
// (placed -> shipped per order; each hop from the service that made it), the provider (double charges) and /proc (CPU
// and memory of every service's process and of each engine: PostgreSQL with its backends, Kafka, Consul, Redis).
import { execFile } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { createDatabase, type Sql } from '@meridian/db'
import type { MeridianSystem } from '@meridian/infra/system'
import { processTree, type UsageSnapshot, usageOf } from '../gateway/proc-stat.ts'
import { percentile } from '../load.ts'
import { toMb } from '../report.ts'
import type { LoadOutcome, LoadPlan } from './load-process.ts'
import { api, newProduct, type Setup } from './system-setup.ts'

const loadProcess = fileURLToPath(new URL('./load-process.ts', import.meta.url))
const run = promisify(execFile)

/** The engines' processes (from infraStatus): each one's CPU and memory is reported beside the services'. */
export type EnginePids = Record<string, number>

/** The processes whose CPU and memory are reported: every service of the run, then each engine, by name. */
export function measuredProcesses(
  system: MeridianSystem,
  engines: EnginePids,
): Record<string, () => number[]> {
  const processes: Record<string, () => number[]> = {}
  for (const name of Object.keys(system.services).sort()) {
    processes[name] = () => {
      const pid = system.services[name]?.pid
      return pid ? processTree(pid) : []
    }
  }
  for (const [name, pid] of Object.entries(engines)) processes[name] = () => processTree(pid)
  return processes
}

export interface PhaseResult {
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
  /**
   * medians of each hop, ms, each from the database of the service that made it (the start of the transaction that
   * wrote its row): order placed -> payment charged (payment) -> stock reserved (inventory) -> shipment created
   * (shipping) -> order saw the shipment (order's saga step). Each starts after the one before committed, so none
   * is negative.
   */
  hopMedians: { paid: number; reserved: number; shipped: number; seen: number }
  /** orders charged more than once (the provider's count) */
  doubleCharges: number
  /** the last order settled this long after the last one was sent, s */
  drainSeconds: number
  clientLagMs: number
  /** CPU ms per accepted order of each process (services and engines) and `total` */
  cpuMsPerOrder: Record<string, number>
  rssMb: Record<string, number>
}

const usageNow = (processes: Record<string, () => number[]>, ticks: number): Record<string, UsageSnapshot> =>
  Object.fromEntries(Object.entries(processes).map(([name, pids]) => [name, usageOf(pids(), ticks)]))

/** Each order's row time (ms since the epoch) in one service's table, by order id. */
async function rowTimes(
  system: MeridianSystem,
  service: string,
  query: (sql: Sql, orderIds: string[]) => Promise<{ orderId: string; at: number }[]>,
  orderIds: string[],
): Promise<Map<string, number>> {
  const url = system.services[service]?.databaseUrl
  if (!url) throw new Error(`the run has no ${service} database`)
  const sql = createDatabase(url, { max: 1, applicationName: 'bench-saga' })
  try {
    const times = new Map<string, number>()
    for (let i = 0; i < orderIds.length; i += 5000)
      for (const row of await query(sql, orderIds.slice(i, i + 5000))) times.set(row.orderId, row.at)
    return times
  } finally {
    await sql.end()
  }
}

const epochMs = (column: string) => `(extract(epoch from ${column}) * 1000)::float8`

/** The hop medians of these orders (see PhaseResult.hopMedians). */
async function hopMediansOf(
  system: MeridianSystem,
  orders: Sql,
  orderIds: string[],
): Promise<PhaseResult['hopMedians']> {
  const [placed, paid, reserved, shipped, seen] = await Promise.all([
    rowTimes(
      system,
      'order',
      (sql, ids) =>
        sql.unsafe(
          `select id::text as "orderId", ${epochMs('created_at')} as at from orders where id = any($1::uuid[])`,
          [ids],
        ),
      orderIds,
    ),
    rowTimes(
      system,
      'payment',
      (sql, ids) =>
        sql.unsafe(
          `select order_id as "orderId", ${epochMs('min(created_at)')} as at from payments where order_id = any($1::text[]) and status <> 'failed' group by order_id`,
          [ids],
        ),
      orderIds,
    ),
    rowTimes(
      system,
      'inventory',
      (sql, ids) =>
        sql.unsafe(
          `select order_id::text as "orderId", ${epochMs('created_at')} as at from reservations where order_id = any($1::uuid[])`,
          [ids],
        ),
      orderIds,
    ),
    rowTimes(
      system,
      'shipping',
      (sql, ids) =>
        sql.unsafe(
          `select order_id::text as "orderId", ${epochMs('created_at')} as at from shipments where order_id = any($1::uuid[])`,
          [ids],
        ),
      orderIds,
    ),
    (async () => {
      const times = new Map<string, number>()
      const rows = await orders.unsafe<{ orderId: string; at: number }[]>(
        `select order_id::text as "orderId", ${epochMs('min(at)')} as at from saga_steps
         where order_id = any($1::uuid[]) and step = 'shipment' and outcome = 'succeeded' group by order_id`,
        [orderIds],
      )
      for (const row of rows) times.set(row.orderId, row.at)
      return times
    })(),
  ])
  const median = (from: Map<string, number>, to: Map<string, number>) => {
    const spans: number[] = []
    for (const [orderId, start] of from) {
      const end = to.get(orderId)
      if (end !== undefined) spans.push(end - start)
    }
    return percentile(
      spans.sort((a, b) => a - b),
      0.5,
    )
  }
  return {
    paid: median(placed, paid),
    reserved: median(paid, reserved),
    shipped: median(reserved, shipped),
    seen: median(shipped, seen),
  }
}

export async function phase(
  system: MeridianSystem,
  setup: Setup,
  orders: Sql,
  rate: number,
  seconds: number,
  ticks: number,
  say: (message: string) => void,
  engines: EnginePids = {},
): Promise<PhaseResult> {
  const processes = measuredProcesses(system, engines)
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
  const before = usageNow(processes, ticks)
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
  const after = usageNow(processes, ticks)

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

  // where the time goes: each hop from the service that made it
  const hopMedians = await hopMediansOf(system, orders, load.accepted)

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
    cpuMsPerOrder: perOrder(before, after, accepted),
    rssMb: Object.fromEntries(Object.keys(processes).map((name) => [name, toMb(after[name]?.rss ?? 0)])),
  }
}

/** Each process's CPU over `seconds` with no order placed, in % of one core (services, engines, `services` total). */
export async function idleUsage(
  system: MeridianSystem,
  engines: EnginePids,
  seconds: number,
  ticks: number,
): Promise<Record<string, number>> {
  const processes = measuredProcesses(system, engines)
  const before = usageNow(processes, ticks)
  const started = performance.now()
  await new Promise((resolve) => setTimeout(resolve, seconds * 1000))
  const after = usageNow(processes, ticks)
  const elapsedMs = performance.now() - started
  const figures: Record<string, number> = {}
  let services = 0
  for (const name of Object.keys(processes)) {
    const percent = (Math.max(0, (after[name]?.cpuMs ?? 0) - (before[name]?.cpuMs ?? 0)) / elapsedMs) * 100
    figures[name] = round2(percent)
    if (!(name in engines)) services += percent
  }
  figures.services = round2(services)
  return figures
}

const round2 = (value: number) => Math.round(value * 100) / 100

/** CPU ms per order of each process between two snapshots, and their total. */
function perOrder(
  before: Record<string, UsageSnapshot>,
  after: Record<string, UsageSnapshot>,
  orders: number,
): Record<string, number> {
  const figures: Record<string, number> = {}
  let total = 0
  for (const name of Object.keys(after)) {
    const ms = Math.max(0, (after[name]?.cpuMs ?? 0) - (before[name]?.cpuMs ?? 0)) / orders
    figures[name] = round2(ms)
    total += ms
  }
  figures.total = round2(total)
  return figures
}

/** Kept up: every order accepted and shipped, the clients on schedule, the tail under a second, no backlog. */
export const sustained = (result: PhaseResult) =>
  result.accepted === result.sent &&
  result.notShipped === 0 &&
  result.clientLagMs < 1000 &&
  result.p99 < 1000 &&
  result.drainSeconds < 5
