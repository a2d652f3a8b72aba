// How the services of a fuzzing run are configured, besides their endpoints: limits out of the way, logs short, and
// a Redis database of the run's own.

/**
 * What every service process of the run is given. The limits are far above what a run sends:
 * the fuzzer sends thousands of requests from one address, and hundreds of failed logins; at the usual limits every
 * operation would answer 429 after the first minute and the run would test the rate limiter, not the API (429 stays
 * documented, and the limiters have tests of their own).
 */
export const runSettings = {
  NODE_ENV: 'test',
  LOG_LEVEL: 'warn',
  // registered by the run under its own names (consul-registration.ts): a service registers under its fixed name
  CONSUL_REGISTER: 'false',
  RATE_LIMIT_MAX: '1000000000',
  LOGIN_MAX_FAILURES_PER_ADDRESS: '1000000000',
  LOGIN_MAX_FAILURES_PER_ACCOUNT: '1000000000',
  // the merged document is rebuilt on every request, so the gateway's reflects the run's instances at once
  DOCS_CACHE_MS: '0',
} as const

/**
 * The run's Redis database: sessions, login-failure counters and revocations of the run never meet a developer's
 * (a run's hundreds of failed logins from 127.0.0.1 would otherwise lock a local `auth` out for 15 minutes).
 */
export const runRedisDatabase = 15

export { withRedisDatabase } from '../system/redis-database.ts'
