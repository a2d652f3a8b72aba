// The gateway benchmark's knobs, from the environment (all optional): the only reader of process.env on its parent side.
import { positiveIntegerKnob } from '../knobs.ts'
export interface GatewayBenchConfig {
  /** seconds of unmeasured load on each target before the measured runs */
  warmupSeconds: number
  /** seconds measured on each target, run in two halves */
  measureSeconds: number
  /** concurrent HTTP connections of the load generator */
  connections: number
  /** nginx's worker_processes: 1 (one core's worth, like the single-threaded gateway) or 'auto' */
  nginxWorkers: number | 'auto'
  /** BENCH_CPU_PROFILE=<dir>: the gateway and node floor processes write V8 CPU profiles there when they exit */
  cpuProfileDir: string | undefined
  /** PATH and the like, handed on to the child processes */
  inheritedEnv: NodeJS.ProcessEnv
}

function nginxWorkers(env: NodeJS.ProcessEnv): number | 'auto' {
  const raw = env.BENCH_GATEWAY_NGINX_WORKERS
  if (raw === 'auto') return 'auto'
  return positiveIntegerKnob(env, 'BENCH_GATEWAY_NGINX_WORKERS', 1)
}

export function loadGatewayBenchConfig(env: NodeJS.ProcessEnv = process.env): GatewayBenchConfig {
  return {
    warmupSeconds: positiveIntegerKnob(env, 'BENCH_GATEWAY_WARMUP_SECONDS', 3),
    measureSeconds: positiveIntegerKnob(env, 'BENCH_GATEWAY_SECONDS', 10),
    connections: positiveIntegerKnob(env, 'BENCH_GATEWAY_CONNECTIONS', 10),
    nginxWorkers: nginxWorkers(env),
    cpuProfileDir: env.BENCH_CPU_PROFILE || undefined,
    inheritedEnv: env,
  }
}

/**
 * auth and the gateway keep their rate-limit counters in Redis under fixed key names (`auth:rate-limit:<address>`,
 * `gateway:rate-limit:ip:<address>`): a run's million requests from 127.0.0.1 would count against a developer's
 * services on the same Redis until the window ends (429 on everything). A logical database of the bench's own keeps
 * them apart; the keys expire with their windows.
 */
export const benchRedisDatabase = 15

/** The same Redis, another logical database (the URL's path). */
export function redisUrlWithDatabase(url: string, database: number): string {
  const parsed = new URL(url)
  parsed.pathname = `/${database}`
  return parsed.toString()
}
