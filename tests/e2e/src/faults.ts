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
import { freePort } from '@meridian/infra'
import { startSystem } from '@meridian/infra/system'
import { type CampaignFault, campaignTimings, exitWith } from './campaign.ts'
import { runOrderFault } from './order-faults.ts'
import { report } from './reconcile.ts'
import { runReturnFault } from './return-faults.ts'

const say = (line: string) => process.stderr.write(`[faults] ${line}\n`)

const ordersPerRun = Number(process.env.FAULTS_ORDERS ?? 200)
const ratePerSecond = Number(process.env.FAULTS_RATE ?? 20)
const stockPerRun = Math.round(ordersPerRun * 0.75)
const returnsPerRun = Number(process.env.FAULTS_RETURNS ?? 40)

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
      env: campaignTimings,
      settings: { LOG_LEVEL: 'warn' },
      log: say,
    })
    try {
      const result = fault.returns
        ? await runReturnFault(system, fault, { orders: returnsPerRun, ratePerSecond: 4, say })
        : await runOrderFault(system, fault, { orders: ordersPerRun, ratePerSecond, stock: stockPerRun, say })
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

exitWith(main, say)
