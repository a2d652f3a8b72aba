// `pnpm --filter @meridian/e2e faults`: the fault campaign. The whole system in a run of its own; for each fault, 200
// orders placed through the gateway at a steady pace while the fault strikes (payment SIGKILLed and restarted, the
// Kafka broker frozen for 10 s, order SIGKILLed and restarted), then, once every order has settled, a reconciliation
// of what each service and the provider hold: orders by final state, charges, refunds, reservations, shipments and
// stock. Lost effects (an accepted order not settled, a charge not refunded for an order that did not ship, stock
// held for an order that will not ship, a shipped order without its charge, reservation or shipment) and duplicated
// ones (two charges, a refund beyond its charge, two shipments) must both be 0; the process exits 1 otherwise.
// Its returns part (src/return-faults.ts): returns of shipped orders received while payment, then inventory, is
// SIGKILLed and restarted; each completed return refunded once, exactly its lines, and its units back in stock.
//
// Knobs: FAULTS_ORDERS (200), FAULTS_RATE (orders/s, 20), FAULTS_RETURNS (returns per returns fault, 40),
// FAULTS_ONLY (comma-separated: payment-kill, kafka-freeze, order-kill, return-payment-kill, return-inventory-kill).
import { execFileSync } from 'node:child_process'
import { setTimeout as sleep } from 'node:timers/promises'
import { fileURLToPath } from 'node:url'
import type { Product } from '@meridian/contracts'
import { freePort } from '@meridian/infra'
import { type MeridianSystem, startSystem } from '@meridian/infra/system'
import { type Customer, cards, e2eClient } from './client.ts'
import { type Reconciliation, reconcile, report, settle } from './reconcile.ts'
import { type CampaignFault, database, runReturnFault } from './return-faults.ts'
import { placeSteadily } from './steady-orders.ts'

const say = (line: string) => process.stderr.write(`[faults] ${line}\n`)

const ordersPerRun = Number(process.env.FAULTS_ORDERS ?? 200)
const ratePerSecond = Number(process.env.FAULTS_RATE ?? 20)
const stockPerRun = Math.round(ordersPerRun * 0.75)
const returnsPerRun = Number(process.env.FAULTS_RETURNS ?? 40)

/**
 * The saga's, the returns' and the reconciler's timings for the campaign: long enough not to give up on a 10 s
 * outage (a return's step waits 5, 10, 20, … s, 6 attempts).
 */
const env = {
  order: {
    SAGA_STEP_TIMEOUT_MS: '15000',
    SAGA_STEP_ATTEMPTS: '4',
    SAGA_COMPENSATION_BACKOFF_MS: '2000',
    SAGA_COMPENSATION_ATTEMPTS: '8',
    SAGA_SWEEP_INTERVAL_MS: '500',
    RETURN_STEP_TIMEOUT_MS: '5000',
    RETURN_STEP_ATTEMPTS: '6',
  },
  payment: { PAYMENT_RECONCILE_INTERVAL_MS: '2000', PAYMENT_RECONCILE_AFTER_MS: '10000' },
}

interface Fault extends CampaignFault {
  /** strikes while returns' goods are received (src/return-faults.ts), not while orders are placed */
  returns?: true
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
  { ...killAndRestart('payment', 5), name: 'return-payment-kill', returns: true },
  { ...killAndRestart('inventory', 5), name: 'return-inventory-kill', returns: true },
]

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
  // a fault that cannot strike fails the run once the orders are placed (never as an unhandled rejection)
  const striking = fault.strike(system).then(
    () => undefined,
    (error: unknown) => error,
  )
  const { accepted, refused } = await placeSteadily({
    count: ordersPerRun,
    ratePerSecond,
    place: (i) =>
      client.placeOrder(customers[i % customers.length] as Customer, {
        product,
        paymentToken: i % 20 === 19 ? declinedToken : goodToken,
      }),
  })
  const strikeFailure = await striking
  if (strikeFailure !== undefined) throw strikeFailure

  const databases = {
    order: database(system, 'order'),
    inventory: database(system, 'inventory'),
    shipping: database(system, 'shipping'),
  }
  try {
    const settleSeconds = await settle(databases.order)
    return await reconcile(
      databases,
      (orderId) => client.providerSummary(orderId),
      {
        fault: fault.name,
        sent: ordersPerRun,
        accepted: new Set(accepted.keys()),
        refused,
        productId: product.id,
        initialStock: stockPerRun,
      },
      settleSeconds,
    )
  } finally {
    await Promise.all(Object.values(databases).map((sql) => sql.end()))
  }
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
      const result = fault.returns
        ? await runReturnFault(system, fault, { orders: returnsPerRun, ratePerSecond: 4, say })
        : await runFault(system, fault)
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
