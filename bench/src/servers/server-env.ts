// What a server process reads from the environment the bench gives it.
export interface ServerEnv {
  databaseUrl: string
  redisUrl: string
  poolMax: number
  /** every Redis key of this run starts with it (rate-limit counters), so the bench can remove them */
  redisKeyPrefix: string
  /**
   * what the chassis' secrets are made from: the run's, so that several chassis processes on one database (the
   * tracing bench's) read the signing key the first one stored; the process id when the bench gives none
   */
  secretSeed: string
}

export function readServerEnv(env: NodeJS.ProcessEnv = process.env): ServerEnv {
  const required = (name: string): string => {
    const value = env[name]
    if (!value) throw new Error(`${name} is not set; server processes are started by the bench (src/main.ts)`)
    return value
  }
  return {
    databaseUrl: required('DATABASE_URL'),
    redisUrl: required('REDIS_URL'),
    poolMax: Number(required('DATABASE_POOL_MAX')),
    redisKeyPrefix: required('BENCH_REDIS_KEY_PREFIX'),
    secretSeed: env.BENCH_SECRET_SEED || String(process.pid),
  }
}
