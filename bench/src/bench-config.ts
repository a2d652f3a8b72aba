// The benchmark's knobs, from the environment (all optional): the only reader of process.env on the parent side.
import { positiveIntegerKnob } from './knobs.ts'
import type { Scenario } from './load.ts'

export interface BenchConfig {
  /** seconds of unmeasured load before each measured run */
  warmupSeconds: number
  /** seconds of each measured run */
  measureSeconds: number
  /** concurrent HTTP connections of the load generator */
  connections: number
  /** users inserted before the runs; the list query counts all of them */
  seedUsers: number
  /** which scenarios run, in this order (BENCH_SCENARIOS=list,create) */
  scenarios: Scenario[]
  /** postgres.js pool size of both servers (the auth service's DATABASE_POOL_MAX default) */
  poolMax: number
  /** PATH and the like, handed on to the server processes */
  inheritedEnv: NodeJS.ProcessEnv
}

const knownScenarios: readonly Scenario[] = ['list', 'create']

function scenarioList(env: NodeJS.ProcessEnv): Scenario[] {
  const raw = env.BENCH_SCENARIOS
  if (raw === undefined || raw.trim() === '') return [...knownScenarios]
  const names = raw.split(',').map((name) => name.trim())
  const unknown = names.filter((name) => !knownScenarios.includes(name as Scenario))
  if (unknown.length > 0)
    throw new Error(`BENCH_SCENARIOS: unknown ${unknown.join(', ')} (known: ${knownScenarios.join(', ')})`)
  return names as Scenario[]
}

export function loadBenchConfig(env: NodeJS.ProcessEnv = process.env): BenchConfig {
  return {
    warmupSeconds: positiveIntegerKnob(env, 'BENCH_WARMUP_SECONDS', 3),
    measureSeconds: positiveIntegerKnob(env, 'BENCH_SECONDS', 10),
    connections: positiveIntegerKnob(env, 'BENCH_CONNECTIONS', 10),
    seedUsers: positiveIntegerKnob(env, 'BENCH_SEED_USERS', 1000),
    scenarios: scenarioList(env),
    poolMax: 10,
    inheritedEnv: env,
  }
}

/** What the chassis and bare servers are given: the run's database and Redis keys, production, the pool size. */
export function serverEnvOf(
  config: BenchConfig,
  run: { databaseUrl: string; redisUrl: string; redisKeyPrefix: string },
): NodeJS.ProcessEnv {
  return {
    ...config.inheritedEnv,
    NODE_ENV: 'production',
    DATABASE_URL: run.databaseUrl,
    REDIS_URL: run.redisUrl,
    DATABASE_POOL_MAX: String(config.poolMax),
    BENCH_REDIS_KEY_PREFIX: run.redisKeyPrefix,
    // one set of secrets for every chassis process of the run: they share its database and its signing key
    BENCH_SECRET_SEED: run.redisKeyPrefix,
  }
}
