// The saga's side of the tracing bench: the whole system started once per tracing mode (off; exported to the trace
// store at 10% and at 100%, parent-based ratio sampling), each given the same load at a fixed rate, and what tracing
// costs read as the other phases of bench:saga are: placed -> shipped p50/p99 and CPU per order of every service.
import { createDatabase } from '@meridian/db'
import { type Endpoints, endpointsEnv, freePort } from '@meridian/infra'
import { startSystem } from '@meridian/infra/system'
import type { UndoStep } from '../bench-lifecycle.ts'
import { type PhaseResult, phase, sustained } from '../saga/phase.ts'
import { setUp } from '../saga/system-setup.ts'
import { type TracingMode, tracingEnv } from './modes.ts'

export interface SagaModeResult {
  mode: TracingMode['name']
  result: PhaseResult
  /** CPU ms per order, every measured service together */
  cpuMsPerOrder: number
  /** traces of the gateway the store holds from this mode's run (a sample of at most 100; 0 when off) */
  tracesSeen: number
}

/** How many of the gateway's traces of the last minutes the store answers with (up to 100): exporting happened. */
async function tracesInStore(queryUrl: string, since: number): Promise<number> {
  const lookback = `${Math.ceil((Date.now() - since) / 1000) + 5}s`
  const response = await fetch(`${queryUrl}/api/traces?service=gateway&lookback=${lookback}&limit=100`, {
    signal: AbortSignal.timeout(30_000),
  })
  if (!response.ok) return 0
  const body = (await response.json()) as { data?: unknown[] }
  return body.data?.length ?? 0
}

export async function sagaUnderTracing(options: {
  modes: TracingMode[]
  endpoints: Endpoints
  otlpEndpoint: string
  queryUrl: string
  rate: number
  seconds: number
  ticks: number
  undo: UndoStep[]
  say: (message: string) => void
}): Promise<SagaModeResult[]> {
  const { say } = options
  const results: SagaModeResult[] = []
  for (const mode of options.modes) {
    say(`saga, tracing ${mode.name}: starting the system`)
    const system = await startSystem({
      prefix: 'bench',
      gatewayPort: await freePort(),
      simulatorPort: 0,
      settings: { LOG_LEVEL: 'warn' },
      // the engines this run ensured, whatever the shell exported
      baseEnv: { ...process.env, ...endpointsEnv(options.endpoints) },
      env: { '*': tracingEnv(mode, options.otlpEndpoint) },
      log: say,
    })
    const stop: UndoStep = { label: `stop the system (tracing ${mode.name})`, run: () => system.close() }
    options.undo.push(stop)
    try {
      const orderDatabase = system.services.order?.databaseUrl
      if (!orderDatabase) throw new Error('the run has no order database')
      const orders = createDatabase(orderDatabase, { max: 2, applicationName: 'bench-tracing' })
      try {
        const setup = await setUp(system)
        // a short warm-up (JIT, pools, the first exports): not reported
        await phase(system, setup, orders, Math.min(options.rate, 50), 5, options.ticks, say)
        const since = Date.now()
        const result = await phase(system, setup, orders, options.rate, options.seconds, options.ticks, say)
        const cpuMsPerOrder = Object.values(result.cpuMsPerOrder).reduce((sum, each) => sum + each, 0)
        const tracesSeen = mode.ratio === undefined ? 0 : await tracesInStore(options.queryUrl, since)
        results.push({ mode: mode.name, result, cpuMsPerOrder, tracesSeen })
        say(
          `saga, tracing ${mode.name}: p50 ${result.p50.toFixed(1)} ms, p99 ${result.p99.toFixed(1)} ms, ` +
            `${cpuMsPerOrder.toFixed(2)} CPU ms/order, ${sustained(result) ? 'kept up' : 'fell behind'}`,
        )
      } finally {
        await orders.end()
      }
    } finally {
      options.undo.splice(options.undo.indexOf(stop), 1)
      await system.close()
    }
  }
  return results
}

const ms = (value: number) => value.toFixed(1).padStart(8)

/** The saga's table: one row per mode, the capacity against off read from CPU per order (the machine's limit). */
export function sagaTable(results: SagaModeResult[], rate: number, seconds: number): string {
  const off = results.find((each) => each.mode === 'off')
  const lines = [
    `saga placed -> shipped at ${rate} orders/s for ${seconds} s, per tracing mode`,
    'tracing        accepted  shipped   p50 ms   p99 ms  CPU ms/order  capacity vs off  traces in store',
    ...results.map((each) => {
      const capacity = off ? (off.cpuMsPerOrder / each.cpuMsPerOrder).toFixed(2) : '-'
      const shipped = each.result.accepted - each.result.notShipped
      return `${each.mode.padEnd(13)} ${String(each.result.accepted).padStart(9)} ${String(shipped).padStart(8)} ${ms(each.result.p50)} ${ms(each.result.p99)} ${each.cpuMsPerOrder.toFixed(2).padStart(13)} ${capacity.padStart(16)} ${String(each.tracesSeen).padStart(16)}`
    }),
  ]
  return lines.join('\n')
}
