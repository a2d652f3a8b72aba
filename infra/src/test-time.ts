// How long tests may take and wait, from one setting: MERIDIAN_TEST_TIME_SCALE multiplies every workspace's per-test
// timeouts and the wait helpers' default deadlines, so a slow or loaded machine is given more time by one number and
// no test has to guess the machine's speed. Read by every vitest.config.ts and by the helpers that wait; and where
// vitest keeps what outlives a run.

import { join, relative } from 'node:path'
import { layoutFromEnv, repoRoot } from './layout.ts'

export const timeScaleVariable = 'MERIDIAN_TEST_TIME_SCALE'

/** A plain decimal number: "2", "1.5". Exponents, hex, "Infinity" and signs are refused rather than read oddly. */
const decimal = /^\d+(\.\d+)?$/

/** setTimeout's longest delay: a longer one fires at once, which would turn a generous timeout into none. */
const longestTimerMs = 2 ** 31 - 1

/** The multiplier of every test time: 1 when MERIDIAN_TEST_TIME_SCALE is unset; throws on anything but a number >= 1. */
export function testTimeScale(env: NodeJS.ProcessEnv = process.env): number {
  const text = env[timeScaleVariable]
  if (text === undefined) return 1
  const scale = decimal.test(text) ? Number(text) : Number.NaN
  if (!(scale >= 1)) {
    throw new Error(
      `${timeScaleVariable} must be a number >= 1 (it multiplies the tests' timeouts and waits; unset means 1), not ${JSON.stringify(text)}`,
    )
  }
  return scale
}

/** `ms` multiplied by the time scale: a deadline of a wait, a test's own timeout. */
export function scaledMs(ms: number, env: NodeJS.ProcessEnv = process.env): number {
  return Math.min(Math.ceil(ms * testTimeScale(env)), longestTimerMs)
}

export interface TestTimeoutOptions {
  /** a test's timeout at scale 1; 60 s, generous enough for a machine at a load of 10-20 */
  testMs?: number
  /** a hook's (beforeAll, afterEach...); the test's by default */
  hookMs?: number
  /** the global setup's teardown; the hook's by default */
  teardownMs?: number
}

/** The default deadline of a wait by condition: `expect.poll`'s (vitest's own is 1 s) and testkit's `eventually`. */
export const waitMs = 30_000

/**
 * vitest's `testTimeout`, `hookTimeout` and `teardownTimeout`, and `expect.poll`'s default deadline, scaled: spread
 * into a config's `test`.
 */
export function testTimeouts(
  options: TestTimeoutOptions = {},
  env: NodeJS.ProcessEnv = process.env,
): {
  testTimeout: number
  hookTimeout: number
  teardownTimeout: number
  expect: { poll: { timeout: number } }
} {
  const testMs = options.testMs ?? 60_000
  const hookMs = options.hookMs ?? testMs
  const teardownMs = options.teardownMs ?? hookMs
  return {
    testTimeout: scaledMs(testMs, env),
    hookTimeout: scaledMs(hookMs, env),
    teardownTimeout: scaledMs(teardownMs, env),
    expect: { poll: { timeout: scaledMs(waitMs, env) } },
  }
}

/**
 * What vitest keeps between runs, in the cache folder rather than the checkout's node_modules (a fresh clone, as CI's
 * every run is, would start empty): Vite's cacheDir of one workspace, whose results.json holds each file's last
 * duration (vitest starts the longest files first only when it knows them), and the transformed modules, shared by
 * every workspace and keyed by each file's content. `configDir` is the workspace's (its config's
 * `import.meta.dirname`). scripts/test removes module entries unused for a week.
 */
export function testCacheDir(configDir: string, env: NodeJS.ProcessEnv = process.env): string {
  return join(vitestCacheRoot(env), 'workspaces', relative(repoRoot, configDir) || 'root')
}

/** vitest's `fsModuleCachePath`: transformed modules, content-keyed, shared by every workspace (see testCacheDir). */
export function testModuleCachePath(env: NodeJS.ProcessEnv = process.env): string {
  return join(vitestCacheRoot(env), 'modules')
}

function vitestCacheRoot(env: NodeJS.ProcessEnv): string {
  return join(layoutFromEnv(env).cacheDir, 'vitest')
}
