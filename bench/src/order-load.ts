// Orders placed through the gateway at a fixed rate, open loop (each at its time whatever the answers before it),
// customer after customer: the load of bench:saga and of bench:realtime's orders phase. And how their load processes
// read their plan and answer: the plan as JSON in an environment variable, the outcome as one JSON line on stdout.
import type { Dispatcher } from 'undici'
import { Agent } from 'undici'
import { monotonicMs } from './events/clock.ts'
import { atFixedRate } from './open-loop.ts'
import { type OrderPlacement, placeOrder } from './saga/system-setup.ts'

export interface OrderLoadPlan extends Omit<OrderPlacement, 'customer'> {
  /** customers as the gateway knows them: their ids and tokens; order i is customer i modulo their count's */
  customers: OrderPlacement['customer'][]
  ratePerSecond: number
  seconds: number
}

export interface OrderLoadHooks<Sent> {
  /** at the moment order `index` is sent, for customer `customerIndex`; what it returns is handed to `answered` */
  sent(customerIndex: number, sentAt: number): Sent
  /** the answer of an order; false counts it refused (by status) */
  answered(sent: Sent, answer: Dispatcher.ResponseData): Promise<boolean>
}

export interface OrderLoad {
  sent: number
  /** answers other than accepted, by status (or error name) */
  refused: Record<string, number>
  /** POST /api/v1/orders as the client saw it, ms, ascending */
  answerMs: number[]
  /** how far behind its schedule the last order went out, ms */
  lagMs: number
}

export async function placeOrdersAtRate<Sent>(
  plan: OrderLoadPlan,
  hooks: OrderLoadHooks<Sent>,
): Promise<OrderLoad> {
  const dispatcher = new Agent({ connections: 64, pipelining: 1, keepAliveTimeout: 30_000 })
  const total = Math.round(plan.ratePerSecond * plan.seconds)
  const refused: Record<string, number> = {}
  const count = (key: string) => {
    refused[key] = (refused[key] ?? 0) + 1
  }
  const answerMs: number[] = []
  const { lagMs } = await atFixedRate(total, plan.ratePerSecond, (i) => {
    const customerIndex = i % plan.customers.length
    const sentAt = monotonicMs()
    const sent = hooks.sent(customerIndex, sentAt)
    return placeOrder(dispatcher, { ...plan, customer: plan.customers[customerIndex]! })
      .then(async (answer) => {
        const accepted = await hooks.answered(sent, answer)
        answerMs.push(monotonicMs() - sentAt)
        if (!accepted) count(String(answer.statusCode))
      })
      .catch((error: unknown) => count(error instanceof Error ? error.name : 'error'))
  })
  await dispatcher.close()
  return { sent: total, refused, answerMs: answerMs.sort((a, b) => a - b), lagMs }
}

/**
 * The body of a load process: runs `run` on the plan in the environment variable `variable` (JSON), writes the
 * outcome as one JSON line on stdout; exits 2 without a plan, 1 when the run fails.
 */
export function runPlanProcess<Plan, Outcome>(
  variable: string,
  startedBy: string,
  run: (plan: Plan) => Promise<Outcome>,
): void {
  const plan = JSON.parse(process.env[variable] ?? 'null') as Plan | null
  if (!plan) {
    process.stderr.write(`${variable} (the plan, JSON) is not set: ${startedBy} starts this\n`)
    process.exit(2)
  }
  run(plan).then(
    (outcome) => {
      process.stdout.write(`${JSON.stringify(outcome)}\n`)
    },
    (error: unknown) => {
      process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`)
      process.exit(1)
    },
  )
}
