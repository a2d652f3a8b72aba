// The gateway benchmark's knobs, from the environment (all optional): the only reader of process.env on its parent side.
export interface GatewayBenchConfig {
  /** seconds of unmeasured load on each target before the measured runs */
  warmupSeconds: number
  /** seconds measured on each target, run in two halves */
  measureSeconds: number
  /** concurrent HTTP connections of the load generator */
  connections: number
  /** nginx's worker_processes: 1 (one core's worth, like the single-threaded gateway) or 'auto' */
  nginxWorkers: number | 'auto'
  /** BENCH_CPU_PROFILE=<dir>: the gateway process writes a V8 CPU profile there when it exits */
  cpuProfileDir: string | undefined
  /** PATH and the like, handed on to the child processes */
  inheritedEnv: NodeJS.ProcessEnv
}

function positiveInteger(env: NodeJS.ProcessEnv, name: string, fallback: number): number {
  const raw = env[name]
  if (raw === undefined || raw === '') return fallback
  const value = Number(raw)
  if (!Number.isInteger(value) || value < 1)
    throw new Error(`${name} must be a positive integer (got '${raw}')`)
  return value
}

function nginxWorkers(env: NodeJS.ProcessEnv): number | 'auto' {
  const raw = env.BENCH_GATEWAY_NGINX_WORKERS
  if (raw === 'auto') return 'auto'
  return positiveInteger(env, 'BENCH_GATEWAY_NGINX_WORKERS', 1)
}

export function loadGatewayBenchConfig(env: NodeJS.ProcessEnv = process.env): GatewayBenchConfig {
  return {
    warmupSeconds: positiveInteger(env, 'BENCH_GATEWAY_WARMUP_SECONDS', 3),
    measureSeconds: positiveInteger(env, 'BENCH_GATEWAY_SECONDS', 10),
    connections: positiveInteger(env, 'BENCH_GATEWAY_CONNECTIONS', 10),
    nginxWorkers: nginxWorkers(env),
    cpuProfileDir: env.BENCH_CPU_PROFILE || undefined,
    inheritedEnv: env,
  }
}
