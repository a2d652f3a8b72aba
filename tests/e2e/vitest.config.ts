// One system for the whole suite (src/global-setup.ts), files one after the other: the tests share it and the machine.
import { testCacheDir, testModuleCachePath, testTimeouts } from '@meridian/testkit/test-time'
import { configDefaults, defineConfig } from 'vitest/config'

export default defineConfig({
  cacheDir: testCacheDir(import.meta.dirname),
  test: {
    // the engines first (testkit: endpoints into the environment), then the system on them
    globalSetup: ['@meridian/testkit/global-setup', './src/global-setup.ts'],
    // alone/: files with systems of their own, run apart (vitest.alone.config.ts)
    exclude: [...configDefaults.exclude, 'alone/**'],
    fileParallelism: false,
    // in the order vitest gives files it knows nothing of, as before durations were kept: by the kept durations the
    // upgrade campaign (its own system, in alone/ since) went first, beside the API fuzzing, 577 s instead of 167 s,
    // and the console's demo-seed test failed after it (CI run 17)
    cache: false,
    ...testTimeouts({ testMs: 180_000, teardownMs: 120_000 }),
    fsModuleCachePath: testModuleCachePath(),
  },
})
