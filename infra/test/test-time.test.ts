// The tests' one time setting: MERIDIAN_TEST_TIME_SCALE multiplies timeouts and waits, and anything but a number >= 1
// is refused by name rather than read as something else.

import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { repoRoot } from '../src/layout.ts'
import { scaledMs, testCacheDir, testModuleCachePath, testTimeouts, testTimeScale } from '../src/test-time.ts'

const scale = (value: string | undefined) => ({ MERIDIAN_TEST_TIME_SCALE: value })

describe('the tests time scale', () => {
  it('when MERIDIAN_TEST_TIME_SCALE is unset, then times are as written: a test has 60 s, a wait 30 s', () => {
    expect(testTimeScale({})).toBe(1)
    expect(scaledMs(5000, {})).toBe(5000)
    expect(testTimeouts({}, {})).toEqual({
      testTimeout: 60_000,
      hookTimeout: 60_000,
      teardownTimeout: 60_000,
      expect: { poll: { timeout: 30_000 } },
    })
  })

  it('when it is a number >= 1, then every timeout and wait is multiplied by it', () => {
    expect(testTimeScale(scale('2.5'))).toBe(2.5)
    expect(scaledMs(1000, scale('2.5'))).toBe(2500)
    expect(testTimeouts({ testMs: 120_000, hookMs: 30_000 }, scale('3'))).toEqual({
      testTimeout: 360_000,
      hookTimeout: 90_000,
      teardownTimeout: 90_000,
      expect: { poll: { timeout: 90_000 } },
    })
  })

  it('when a scaled time would pass the longest timer, then it is that longest timer (a longer one fires at once)', () => {
    expect(scaledMs(60_000, scale('100000'))).toBe(2 ** 31 - 1)
  })

  it.each(['', '0', '0.5', '-2', 'abc', '2x', '1e3', '0x10', 'Infinity', ' 2'])(
    'when it is %j, then it is refused with a message naming the variable and the value',
    (value) => {
      expect(() => testTimeScale(scale(value))).toThrow(
        `MERIDIAN_TEST_TIME_SCALE must be a number >= 1 (it multiplies the tests' timeouts and waits; unset means 1), not ${JSON.stringify(value)}`,
      )
    },
  )
})

describe("vitest's caches", () => {
  it('when a workspace is given, then its cache is under the cache folder by its path in the repository, the modules shared', () => {
    const env = { MERIDIAN_CACHE_DIR: '/var/cache/meridian-test' }
    expect(testCacheDir(join(repoRoot, 'services', 'order'), env)).toBe(
      '/var/cache/meridian-test/vitest/workspaces/services/order',
    )
    expect(testCacheDir(join(repoRoot, 'infra'), env)).toBe(
      '/var/cache/meridian-test/vitest/workspaces/infra',
    )
    expect(testModuleCachePath(env)).toBe('/var/cache/meridian-test/vitest/modules')
  })

  it('when no cache folder is set, then it is the one every script uses (XDG_CACHE_HOME/meridian)', () => {
    expect(testModuleCachePath({ XDG_CACHE_HOME: '/home/dev/.cache' })).toBe(
      '/home/dev/.cache/meridian/vitest/modules',
    )
  })
})
