// `pnpm --filter @meridian/e2e faults`: the fault campaign. The whole system in a run of its own; for each fault, 200
// orders placed through the gateway at a steady pace while the fault strikes (payment SIGKILLed and restarted, the
// Kafka broker frozen for 10 s, order SIGKILLed and restarted), then, once every order has settled, a reconciliation
// of what each service and the provider hold: orders by final state, charges, refunds, reservations, shipments and
// stock. Lost effects (an accepted order not settled, a charge not refunded for an order that did not ship, stock
// held for an order that will not ship, a shipped order without its charge, reservation or shipment) and duplicated
// ones (two charges, a refund beyond its charge, two shipments) must both be 0; the process exits 1 otherwise.
//
// Knobs: FAULTS_ORDERS (200), FAULTS_RATE (orders/s, 20), FAULTS_ONLY (comma-separated: payment-kill, kafka-freeze,
// order-kill).
import { execFileSync } from 'node:child_process'
import { setTimeout as sleep } from 'node:timers/promises'
import { fileURLToPath } from 'node:url'
import type { Product } from '@meridian/contracts'
import { createDatabase, type Sql } from '@meridian/db'
import { freePort } from '@meridian/infra'
import { type MeridianSystem, startSystem } from '@meridian/infra/system'
import { type Customer, cards, e2eClient, type ProviderSummary } from './client.ts'

const say = (line: string) => process.stderr.write(`[faults] ${line}\n`)

const ordersPerRun = Number(process.env.FAULTS_ORDERS ?? 200)
const ratePerSecond = Number(process.env.FAULTS_RATE ?? 20)
const stockPerRun = Math.round(ordersPerRun * 0.75)

/** The saga's and the reconciler's timings for the campaign: long enough not to give up on a 10 s outage. */
const env = {
  order: {
    SAGA_STEP_TIMEOUT_MS: '15000',
    SAGA_STEP_ATTEMPTS: '4',
    SAGA_COMPENSATION_BACKOFF_MS: '2000',
    SAGA_COMPENSATION_ATTEMPTS: '8',
    SAGA_SWEEP_INTERVAL_MS: '500',
  },
  payment: { PAYMENT_RECONCILE_INTERVAL_MS: '2000', PAYMENT_RECONCILE_AFTER_MS: '10000' },
}

interface Fault {
  name: string
  what: string
  /** strikes while the orders are being placed (started with the first one) */
  strike(system: MeridianSystem): Promise<void>
}

/** The Kafka broker's pid when this machine's infra runs it natively (scripts/infra status), else undefined. */
function nativeKafkaPid(): number | undefined {
  const infra = fileURLToPath(new URL('../../../scripts/infra', import.meta.url))
  // without the endpoints in the environment: with them, infra reports the engines as given (external)
  const env = { ...process.env }
  for (const name of ['DATABASE_URL', 'KAFKA_BROKERS', 'CONSUL_HTTP_ADDR', 'REDIS_URL']) delete env[name]
  const status = execFileSync(infra, ['status'], { encoding: 'utf8', env })
  const line = status.split('\n').find((each) => /^kafka\s/.test(each))
  const [, mode, , pid] = line?.split(/\s+/) ?? []
  return mode === 'native' && pid && /^\d+$/.test(pid) ? Number(pid) : undefined
}

/** The service SIGKILLed 3 s into the run and started again `downSeconds` later (same port and database). */
function killAndRestart(service: string, downSeconds: number): Fault {
  return {
    name: `${service}-kill`,
    what: `${service} SIGKILLed 3 s into the run, restarted ${downSeconds} s later`,
    async strike(system) {
      await sleep(3000)
      await system.kill(service)
      say(`${service} killed`)
      await sleep(downSeconds * 1000)
      await system.start(service)
      say(`${service} started again`)
    },
  }
}

const faults: Fault[] = [
  killAndRestart('payment', 5),
  {
    name: 'kafka-freeze',
    what: 'the Kafka broker frozen (SIGSTOP) 3 s into the run for 10 s: every connection to it stalls',
    async strike() {
      const pid = nativeKafkaPid()
      if (pid === undefined) throw new Error('the Kafka broker is not a native process of this machine')
      await sleep(3000)
      process.kill(pid, 'SIGSTOP')
      say(`kafka (pid ${pid}) frozen`)
      try {
        await sleep(10_000)
      } finally {
        process.kill(pid, 'SIGCONT')
        say('kafka resumed')
      }
    },
  },
  killAndRestart('order', 3),
]

interface Reconciliation {
  fault: string
  sent: number
  accepted: number
  /** refused with an error answer (the client was told: not the system's to keep) */
  refused: Record<string, number>
  byStatus: Record<string, number>
  charges: number
  refunds: number
  reservations: Record<string, number>
  shipments: number
  lost: string[]
  duplicated: string[]
  stock: { initial: number; available: number; reserved: number; shipped: number }
  settleSeconds: number
}

const finalStatuses = new Set(['shipped', 'delivered', 'failed', 'payment_failed', 'cancelled'])

async function runFault(system: MeridianSystem, fault: Fault): Promise<Reconciliation> {
  const client = e2eClient({ ...system, admin: system.admin ?? { email: '', password: '' } })
  const admin = await client.loginAdmin()
  const customers: Customer[] = []
  for (let i = 0; i < 10; i++) customers.push(await client.registerCustomer())
  const product: Product = await client.createProduct(admin, { stock: stockPerRun })
  const goodToken = await client.tokenizeCard(cards.good)
  const declinedToken = await client.tokenizeCard(cards.declined)

  say(
    `${fault.name}: ${fault.what}; ${ordersPerRun} orders at ${ratePerSecond}/s for ${stockPerRun} in stock`,
  )
  const accepted = new Map<string, Customer>()
  const refused: Record<string, number> = {}
  const started = Date.now()
  // a fault that cannot strike fails the run once the orders are placed (never as an unhandled rejection)
  const striking = fault.strike(system).then(
    () => undefined,
    (error: unknown) => error,
  )
  const placing: Promise<void>[] = []
  for (let i = 0; i < ordersPerRun; i++) {
    const due = started + (i * 1000) / ratePerSecond
    await sleep(Math.max(0, due - Date.now()))
    const customer = customers[i % customers.length] as Customer
    placing.push(
      client
        .placeOrder(customer, { product, paymentToken: i % 20 === 19 ? declinedToken : goodToken })
        .then((answer) => {
          if (answer.status === 201) accepted.set(answer.body.orderId, customer)
          else refused[String(answer.status)] = (refused[String(answer.status)] ?? 0) + 1
        })
        .catch((error: unknown) => {
          const key = error instanceof Error ? error.name : 'error'
          refused[key] = (refused[key] ?? 0) + 1
        }),
    )
  }
  await Promise.all(placing)
  const strikeFailure = await striking
  if (strikeFailure !== undefined) throw strikeFailure

  const orders = database(system, 'order')
  const inventory = database(system, 'inventory')
  const shipping = database(system, 'shipping')
  try {
    // settled: every order final and no compensation still running (the run's database holds this run's only)
    const ids = [...accepted.keys()]
    const settleStarted = Date.now()
    const deadline = settleStarted + 240_000
    for (;;) {
      const [row] = await orders<{ open: number }[]>`
        select count(*)::int as open from orders o join sagas s on s.order_id = o.id
        where (o.status not in ('shipped', 'delivered', 'failed', 'payment_failed', 'cancelled')
               or s.compensation = 'running')`
      if ((row?.open ?? 0) === 0 || Date.now() > deadline) break
      await sleep(1000)
    }
    // the provider's late answers (a charge that was in flight) get the reconciler's rounds
    await sleep(12_000)
    const settleSeconds = (Date.now() - settleStarted) / 1000

    const statusRows = await orders<{ id: string; status: string; compensation: string }[]>`
      select o.id, o.status, s.compensation from orders o left join sagas s on s.order_id = o.id`
    const statusOf = new Map(statusRows.map((row) => [row.id, row]))
    const reservationRows = await inventory<{ orderId: string; status: string }[]>`
      select order_id, status from reservations`
    const reservationsOf = new Map<string, string[]>()
    for (const row of reservationRows)
      reservationsOf.set(row.orderId, [...(reservationsOf.get(row.orderId) ?? []), row.status])
    const shipmentRows = await shipping<{ orderId: string; n: number }[]>`
      select order_id, count(*)::int as n from shipments group by order_id`
    const shipmentsOf = new Map(shipmentRows.map((row) => [row.orderId, row.n]))
    const [stock] = await inventory<{ available: number; reserved: number }[]>`
      select available, reserved from products where id = ${product.id}`
    const summaries = new Map<string, ProviderSummary>()
    for (const id of ids) summaries.set(id, await client.providerSummary(id))

    const lost: string[] = []
    const duplicated: string[] = []
    const byStatus: Record<string, number> = {}
    const reservations: Record<string, number> = {}
    let charges = 0
    let refunds = 0
    let shippedUnits = 0
    for (const id of ids) {
      const order = statusOf.get(id)
      const summary = summaries.get(id) as ProviderSummary
      const held = reservationsOf.get(id) ?? []
      const shipmentCount = shipmentsOf.get(id) ?? 0
      const status = order?.status ?? 'missing'
      byStatus[status] = (byStatus[status] ?? 0) + 1
      for (const each of held) reservations[each] = (reservations[each] ?? 0) + 1
      charges += summary.charges
      refunds += summary.refunds
      if (!order || !finalStatuses.has(status)) lost.push(`${id}: accepted but ${status}`)
      if (order?.compensation === 'escalated') lost.push(`${id}: a compensation escalated`)
      if (summary.charges > 1) duplicated.push(`${id}: charged ${summary.charges} times`)
      if (summary.refunded > summary.charged) duplicated.push(`${id}: refunded beyond its charge`)
      if (held.length > 1) duplicated.push(`${id}: ${held.length} reservations`)
      if (shipmentCount > 1) duplicated.push(`${id}: ${shipmentCount} shipments`)
      if (status === 'shipped' || status === 'delivered') {
        shippedUnits += 1
        if (summary.charges !== 1 || summary.refunds !== 0)
          lost.push(`${id}: shipped with ${summary.charges} charges, ${summary.refunds} refunds`)
        if (held[0] !== 'shipped') lost.push(`${id}: shipped but its reservation is ${held[0] ?? 'missing'}`)
        if (shipmentCount !== 1) lost.push(`${id}: shipped with ${shipmentCount} shipments`)
      } else {
        if (summary.refunded !== summary.charged)
          lost.push(`${id}: ${status} with ${summary.charged - summary.refunded} cents not refunded`)
        if (held.includes('held')) lost.push(`${id}: ${status} with stock still held`)
        if (shipmentCount > 0) lost.push(`${id}: ${status} with a shipment`)
      }
    }
    // orders the service holds that no client was told about (a duplicate of a refused request)
    const unknown = statusRows.filter((row) => !accepted.has(row.id))
    for (const row of unknown)
      duplicated.push(`${row.id}: an order no client was told was accepted (${row.status})`)
    const stockNow = {
      initial: stockPerRun,
      available: stock?.available ?? -1,
      reserved: stock?.reserved ?? -1,
      shipped: shippedUnits,
    }
    if (stockNow.available + stockNow.reserved + stockNow.shipped !== stockNow.initial)
      lost.push(
        `stock: ${stockNow.available} available + ${stockNow.reserved} reserved + ${shippedUnits} shipped != ${stockPerRun}`,
      )

    return {
      fault: fault.name,
      sent: ordersPerRun,
      accepted: accepted.size,
      refused,
      byStatus,
      charges,
      refunds,
      reservations,
      shipments: [...shipmentsOf.values()].reduce((sum, n) => sum + n, 0),
      lost,
      duplicated,
      stock: stockNow,
      settleSeconds,
    }
  } finally {
    await Promise.all([orders.end(), inventory.end(), shipping.end()])
  }
}

function database(system: MeridianSystem, service: string): Sql {
  const url = system.services[service]?.databaseUrl
  if (!url) throw new Error(`${service} has no database in this run`)
  return createDatabase(url, { max: 2, applicationName: 'faults' })
}

function report(result: Reconciliation): string {
  const pairs = (record: Record<string, number>) =>
    Object.entries(record)
      .sort()
      .map(([key, n]) => `${key} ${n}`)
      .join(', ') || 'none'
  return [
    `== ${result.fault}`,
    `orders: ${result.sent} sent, ${result.accepted} accepted (201), refused: ${pairs(result.refused)}`,
    `final states: ${pairs(result.byStatus)} (settled ${result.settleSeconds.toFixed(0)} s after the last order)`,
    `provider: ${result.charges} charges, ${result.refunds} refunds; reservations: ${pairs(result.reservations)}; shipments: ${result.shipments}`,
    `stock: ${result.stock.initial} = ${result.stock.available} available + ${result.stock.reserved} reserved + ${result.stock.shipped} shipped`,
    `lost effects: ${result.lost.length}${result.lost.length ? `\n  ${result.lost.slice(0, 20).join('\n  ')}` : ''}`,
    `duplicated effects: ${result.duplicated.length}${result.duplicated.length ? `\n  ${result.duplicated.slice(0, 20).join('\n  ')}` : ''}`,
  ].join('\n')
}

async function main(): Promise<number> {
  const only = process.env.FAULTS_ONLY?.split(',').filter(Boolean)
  const chosen = faults.filter((fault) => !only || only.includes(fault.name))
  let failed = false
  for (const fault of chosen) {
    // a system of its own per fault: its counts are its own
    const system = await startSystem({
      prefix: 'faults',
      gatewayPort: await freePort(),
      simulatorPort: 0,
      env,
      settings: { LOG_LEVEL: 'warn' },
      log: say,
    })
    try {
      const result = await runFault(system, fault)
      process.stdout.write(`${report(result)}\n`)
      if (result.lost.length > 0 || result.duplicated.length > 0) failed = true
    } catch (error) {
      failed = true
      say(`${fault.name}: ${error instanceof Error ? error.stack : String(error)}; logs in ${system.runDir}`)
    } finally {
      await system.close()
    }
  }
  return failed ? 1 : 0
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    say(error instanceof Error ? (error.stack ?? error.message) : String(error))
    process.exit(1)
  },
)
