// bench:realtime's orders phase: the whole system (@meridian/infra/system: every service as a process, the
// realtime-gateway and notification among them), a pool of customers connected to the realtime-gateway's
// /notifications, orders placed through the gateway at BENCH_REALTIME_ORDERS_RATE per second (orders-process.ts, a
// process of its own), and for each order the time from its POST to its customer's notification:new. Path:
// order (order.placed, outbox) -> Kafka -> notification (notification.created, outbox) -> Kafka -> realtime-gateway.
import { execFile } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { freePort } from '@meridian/infra'
import { startSystem, systemRedisDatabase, withRedisDatabase } from '@meridian/infra/system'
import type { UndoStep } from '../bench-lifecycle.ts'
import { deleteKeys } from '../redis-keys.ts'
import { newProduct, setUp } from '../saga/system-setup.ts'
import type { OrdersResult } from './figures.ts'
import type { OrdersOutcome, OrdersPlan } from './orders-process.ts'
import type { RealtimeConfig } from './realtime-config.ts'

const ordersProcess = fileURLToPath(new URL('./orders-process.ts', import.meta.url))
const run = promisify(execFile)

export async function runOrdersPhase(
  config: RealtimeConfig,
  redisUrl: string,
  undo: UndoStep[],
  say: (message: string) => void,
): Promise<OrdersResult & { latenciesMs: number[] }> {
  // the realtime-gateway's keys (adapter stream, limits, presence) under a prefix of the run's own, removed after it
  const redisPrefix = `bench-realtime-orders-${randomBytes(4).toString('hex')}:`
  undo.push({
    label: 'delete the orders phase Redis keys',
    run: () => deleteKeys(withRedisDatabase(redisUrl, systemRedisDatabase), redisPrefix),
  })
  const system = await startSystem({
    prefix: 'bench_realtime',
    gatewayPort: await freePort(),
    simulatorPort: 0,
    settings: { LOG_LEVEL: 'warn' },
    // the customers' sockets all come from 127.0.0.1: the per-address limits as high as the configuration allows
    env: {
      'realtime-gateway': {
        REALTIME_REDIS_PREFIX: redisPrefix,
        REALTIME_CONNECTION_ATTEMPTS: '10000',
        REALTIME_ATTEMPTS_WINDOW_MS: '1000',
        REALTIME_MAX_CONNECTIONS_PER_ADDRESS: '100000',
      },
    },
    log: say,
  })
  undo.push({ label: 'stop the system', run: () => system.close() })
  const realtime = system.services['realtime-gateway']
  if (!realtime) throw new Error('the system has no realtime-gateway')
  say(`orders: registering ${config.ordersCustomers} customers`)
  const setup = await setUp(system, config.ordersCustomers)
  const plan = (seconds: number, product: { id: string; price: number }): OrdersPlan => ({
    gatewayUrl: system.gatewayUrl,
    realtimeUrl: realtime.baseUrl,
    customers: setup.customers,
    product,
    paymentToken: setup.paymentToken,
    ratePerSecond: config.ordersRate,
    seconds,
    drainMs: 15_000,
  })
  const place = async (orders: OrdersPlan): Promise<OrdersOutcome> => {
    const { stdout } = await run(process.execPath, ['--import', 'tsx', ordersProcess], {
      env: { ...config.inheritedEnv, BENCH_REALTIME_ORDERS: JSON.stringify(orders) },
      maxBuffer: 256 * 1024 * 1024,
    })
    return JSON.parse(stdout.trim().split('\n').at(-1) ?? '{}') as OrdersOutcome
  }
  // a short warm-up (JIT, pools, consumers' first fetches): not reported
  say(`orders: warm-up, ${config.ordersRate} orders/s for 3 s`)
  await place(plan(3, await newProduct(system, setup)))
  say(`orders: ${config.ordersRate} orders/s for ${config.ordersSeconds} s`)
  const outcome = await place(plan(config.ordersSeconds, await newProduct(system, setup)))
  return {
    ...outcome,
    ratePerSecond: config.ordersRate,
    seconds: config.ordersSeconds,
    customers: setup.customers.length,
  }
}
