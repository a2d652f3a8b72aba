// bench:realtime's orders clients, in a process of their own: every customer of the pool holds a socket on the
// realtime-gateway's /notifications (socket.io-client, WebSocket transport, the customer's own token from auth), and
// orders are placed through the gateway at a fixed rate (open loop: each at its time whatever the answers before it),
// customer after customer. An order's latency is from the moment its POST /api/v1/orders was sent to its customer's
// `notification:new` of type order_confirmed; a customer's confirmations are matched to its accepted orders in the
// order they were sent (a customer's orders are `customers / rate` seconds apart). One JSON line on stdout at the end.
// Told what to do by the environment (BENCH_REALTIME_ORDERS, JSON).
import { io, type Socket } from 'socket.io-client'
import { Agent } from 'undici'
import { monotonicMs } from '../events/clock.ts'
import { placeOrder } from '../saga/system-setup.ts'
import type { OrdersResult } from './figures.ts'
import { latencySummary } from './figures.ts'

export interface OrdersPlan {
  gatewayUrl: string
  realtimeUrl: string
  customers: { id: string; token: string }[]
  product: { id: string; price: number }
  paymentToken: string
  ratePerSecond: number
  seconds: number
  /** after the last answer, how long to wait for the confirmations still missing */
  drainMs: number
}

export type OrdersOutcome = Omit<OrdersResult, 'customers' | 'ratePerSecond' | 'seconds'> & {
  latenciesMs: number[]
}

function connect(plan: OrdersPlan, token: string): Promise<Socket> {
  const socket = io(`${plan.realtimeUrl}/notifications`, {
    transports: ['websocket'],
    forceNew: true,
    reconnection: false,
    auth: { token },
  })
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('connect timeout')), 30_000)
    socket.once('connect', () => {
      clearTimeout(timer)
      resolve(socket)
    })
    socket.once('connect_error', (error) => {
      clearTimeout(timer)
      socket.disconnect()
      reject(error)
    })
  })
}

async function run(plan: OrdersPlan): Promise<OrdersOutcome> {
  const confirmations = plan.customers.map(() => [] as number[])
  const sockets: Socket[] = []
  let socketsFailed = 0
  await Promise.all(
    plan.customers.map(async (customer, index) => {
      try {
        const socket = await connect(plan, customer.token)
        socket.on('notification:new', (notification: { type?: string }) => {
          if (notification.type === 'order_confirmed') confirmations[index]!.push(monotonicMs())
        })
        sockets.push(socket)
      } catch {
        socketsFailed += 1
      }
    }),
  )

  const dispatcher = new Agent({ connections: 64, pipelining: 1, keepAliveTimeout: 30_000 })
  const total = Math.round(plan.ratePerSecond * plan.seconds)
  /** per customer, the send times of its accepted orders, in the order they were sent */
  const accepted = plan.customers.map(() => [] as { sentAt: number; ok: boolean }[])
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
    const index = i % plan.customers.length
    const customer = plan.customers[index]!
    // the slot is taken in send order, so a customer's confirmations pair with its orders in that order
    const slot = { sentAt: monotonicMs(), ok: false }
    accepted[index]!.push(slot)
    inFlight.push(
      placeOrder(dispatcher, {
        gatewayUrl: plan.gatewayUrl,
        customer,
        product: plan.product,
        paymentToken: plan.paymentToken,
      })
        .then(async (answer) => {
          await answer.body.dump()
          answerMs.push(monotonicMs() - slot.sentAt)
          if (answer.statusCode === 201) slot.ok = true
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

  const acceptedCount = accepted.reduce((sum, slots) => sum + slots.filter((slot) => slot.ok).length, 0)
  const received = () => confirmations.reduce((sum, times) => sum + times.length, 0)
  const drainUntil = monotonicMs() + plan.drainMs
  while (received() < acceptedCount && monotonicMs() < drainUntil) {
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  for (const socket of sockets) socket.disconnect()

  const latenciesMs: number[] = []
  accepted.forEach((slots, index) => {
    const times = confirmations[index]!
    slots
      .filter((slot) => slot.ok)
      .forEach((slot, k) => {
        const at = times[k]
        if (at !== undefined) latenciesMs.push(at - slot.sentAt)
      })
  })
  return {
    sent: total,
    accepted: acceptedCount,
    refused,
    latency: latencySummary(latenciesMs),
    answer: latencySummary(answerMs),
    lost: acceptedCount - latenciesMs.length,
    lagMs,
    socketsFailed,
    latenciesMs,
  }
}

const plan = JSON.parse(process.env.BENCH_REALTIME_ORDERS ?? 'null') as OrdersPlan | null
if (!plan) {
  process.stderr.write(
    'BENCH_REALTIME_ORDERS (the plan, JSON) is not set: bench/src/realtime/orders.ts starts this\n',
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
