// One phase of the saga bench: orders placed through the gateway at a fixed rate for some seconds by a client process
// of their own (load-process.ts), then waited for until shipped, and what it took read from order's database (placed ->
// shipped per order, the hops), the provider (double charges) and /proc (CPU and memory of each service's tree).
import { execFile } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import type { Sql } from '@meridian/db'
import type { MeridianSystem } from '@meridian/infra/system'
import { processTree, type UsageSnapshot, usageOf } from '../gateway/proc-stat.ts'
import { percentile } from '../load.ts'
import { toMb } from '../report.ts'
import type { LoadOutcome, LoadPlan } from './load-process.ts'
import { api, newProduct, type Setup } from './system-setup.ts'

const loadProcess = fileURLToPath(new URL('./load-process.ts', import.meta.url))
const run = promisify(execFile)

/** The processes whose CPU and memory are reported: each service's tree. */
export const measured = ['gateway', 'order', 'payment', 'inventory', 'shipping', 'auth'] as const

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

export async function phase(
  system: MeridianSystem,
  setup: Setup,
  orders: Sql,
  rate: number,
  seconds: number,
  ticks: number,
  say: (message: string) => void,
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
export const sustained = (result: PhaseResult) =>
  result.accepted === result.sent &&
  result.notShipped === 0 &&
  result.clientLagMs < 1000 &&
  result.p99 < 1000 &&
  result.drainSeconds < 5
