// The clients of bench:saga, in a process of their own (their CPU is not the system's): orders placed through the
// gateway at a fixed rate (open loop: each order is sent at its time whatever the answers before it), then one JSON
// line on stdout with what was accepted. Told what to do by the environment (BENCH_SAGA_LOAD, JSON).
import { Agent } from 'undici'
import { placeOrder } from './system-setup.ts'

export interface LoadPlan {
  gatewayUrl: string
  /** customers as the gateway knows them: their ids and tokens */
  customers: { id: string; token: string }[]
  product: { id: string; price: number }
  paymentToken: string
  ratePerSecond: number
  seconds: number
}

export interface LoadOutcome {
  sent: number
  accepted: string[]
  /** answers other than 201, by status (or error name) */
  refused: Record<string, number>
  /** POST /api/v1/orders as the client saw it, ms, ascending */
  answerMs: number[]
  /** how far behind its schedule the last order went out, ms */
  lagMs: number
}

async function run(plan: LoadPlan): Promise<LoadOutcome> {
  const dispatcher = new Agent({ connections: 64, pipelining: 1, keepAliveTimeout: 30_000 })
  const total = Math.round(plan.ratePerSecond * plan.seconds)
  const accepted: string[] = []
  const refused: Record<string, number> = {}
  const answerMs: number[] = []
  const started = performance.now()
  let lagMs = 0
  const inFlight: Promise<void>[] = []
  for (let i = 0; i < total; i++) {
    const due = started + (i * 1000) / plan.ratePerSecond
    const wait = due - performance.now()
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait))
    else lagMs = Math.max(lagMs, -wait)
    const customer = plan.customers[i % plan.customers.length] as LoadPlan['customers'][number]
    const sentAt = performance.now()
    inFlight.push(
      placeOrder(dispatcher, {
        gatewayUrl: plan.gatewayUrl,
        customer,
        product: plan.product,
        paymentToken: plan.paymentToken,
      })
        .then(async (answer) => {
          const body = (await answer.body.json()) as { orderId?: string }
          answerMs.push(performance.now() - sentAt)
          if (answer.statusCode === 201 && body.orderId) accepted.push(body.orderId)
          else refused[String(answer.statusCode)] = (refused[String(answer.statusCode)] ?? 0) + 1
        })
        .catch((error: unknown) => {
          const key = error instanceof Error ? error.name : 'error'
          refused[key] = (refused[key] ?? 0) + 1
        }),
    )
  }
  await Promise.all(inFlight)
  await dispatcher.close()
  return { sent: total, accepted, refused, answerMs: answerMs.sort((a, b) => a - b), lagMs }
}

const plan = JSON.parse(process.env.BENCH_SAGA_LOAD ?? 'null') as LoadPlan | null
if (!plan) {
  process.stderr.write(
    'BENCH_SAGA_LOAD (the load plan, JSON) is not set: bench/src/saga/main.ts starts this\n',
  )
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
