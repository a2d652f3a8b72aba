// bench:realtime's orders clients, in a process of their own: every customer of the pool holds a socket on the
// realtime-gateway's /notifications (socket.io-client, WebSocket transport, the customer's own token from auth), and
// orders are placed through the gateway at a fixed rate (open loop: each at its time whatever the answers before it),
// customer after customer. An order's latency is from the moment its POST /api/v1/orders was sent to its customer's
// `notification:new` of type order_placed; a customer's confirmations are matched to its accepted orders in the
// order they were sent (a customer's orders are `customers / rate` seconds apart). One JSON line on stdout at the end.
// Told what to do by the environment (BENCH_REALTIME_ORDERS, JSON).
import { io, type Socket } from 'socket.io-client'
import { monotonicMs } from '../events/clock.ts'
import { type OrderLoadPlan, placeOrdersAtRate, runPlanProcess } from '../order-load.ts'
import type { OrdersResult } from './figures.ts'
import { latencySummary } from './figures.ts'

export interface OrdersPlan extends OrderLoadPlan {
  realtimeUrl: string
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
          if (notification.type === 'order_placed') confirmations[index]!.push(monotonicMs())
        })
        sockets.push(socket)
      } catch {
        socketsFailed += 1
      }
    }),
  )

  /** per customer, the send times of its orders, in the order they were sent */
  const accepted = plan.customers.map(() => [] as { sentAt: number; ok: boolean }[])
  const { sent, refused, answerMs, lagMs } = await placeOrdersAtRate(plan, {
    // the slot is taken in send order, so a customer's confirmations pair with its orders in that order
    sent(customerIndex, sentAt) {
      const slot = { sentAt, ok: false }
      accepted[customerIndex]!.push(slot)
      return slot
    },
    async answered(slot, answer) {
      await answer.body.dump()
      slot.ok = answer.statusCode === 201
      return slot.ok
    },
  })

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
    sent,
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

runPlanProcess('BENCH_REALTIME_ORDERS', 'bench/src/realtime/orders.ts', run)
