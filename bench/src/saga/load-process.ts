// The clients of bench:saga, in a process of their own (their CPU is not the system's): orders placed through the
// gateway at a fixed rate (open loop: each order is sent at its time whatever the answers before it), then one JSON
// line on stdout with what was accepted. Told what to do by the environment (BENCH_SAGA_LOAD, JSON).
import { type OrderLoad, type OrderLoadPlan, placeOrdersAtRate, runPlanProcess } from '../order-load.ts'

export type LoadPlan = OrderLoadPlan

export interface LoadOutcome extends OrderLoad {
  /** the ids of the orders answered 201 */
  accepted: string[]
}

async function run(plan: LoadPlan): Promise<LoadOutcome> {
  const accepted: string[] = []
  const load = await placeOrdersAtRate(plan, {
    sent: () => undefined,
    async answered(_sent, answer) {
      const body = (await answer.body.json()) as { orderId?: string }
      if (answer.statusCode !== 201 || !body.orderId) return false
      accepted.push(body.orderId)
      return true
    },
  })
  return { ...load, accepted }
}

runPlanProcess('BENCH_SAGA_LOAD', 'bench/src/saga/main.ts', run)
