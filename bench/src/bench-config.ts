// The benchmark's knobs, from the environment (all optional): the only reader of process.env on the parent side.
export interface BenchConfig {
  /** seconds of unmeasured load before each measured run */
  warmupSeconds: number
  /** seconds of each measured run */
  measureSeconds: number
  /** concurrent HTTP connections of the load generator */
  connections: number
  /** users inserted before the runs; the list query counts all of them */
  seedUsers: number
  /** postgres.js pool size of both servers (the auth service's DATABASE_POOL_MAX default) */
  poolMax: number
  /** PATH and the like, handed on to the server processes */
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

export function loadBenchConfig(env: NodeJS.ProcessEnv = process.env): BenchConfig {
  return {
    warmupSeconds: positiveInteger(env, 'BENCH_WARMUP_SECONDS', 3),
    measureSeconds: positiveInteger(env, 'BENCH_SECONDS', 10),
    connections: positiveInteger(env, 'BENCH_CONNECTIONS', 10),
    seedUsers: positiveInteger(env, 'BENCH_SEED_USERS', 1000),
    poolMax: 10,
    inheritedEnv: env,
  }
}
