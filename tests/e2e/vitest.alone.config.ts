// The end-to-end files that start systems of their own and need not the suite's shared one (alone/): ./scripts/test
// runs them beside the end-to-end suite, after the API fuzzing, instead of on the suite's critical path.
import { testCacheDir, testModuleCachePath, testTimeouts } from '@meridian/testkit/test-time'
import { defineConfig } from 'vitest/config'

export default defineConfig({
  cacheDir: testCacheDir(import.meta.dirname),
  test: {
    include: ['alone/**/*.test.ts'],
    // the engines' endpoints into the environment, no system
    globalSetup: ['@meridian/testkit/global-setup'],
    fileParallelism: false,
    ...testTimeouts({ testMs: 180_000, teardownMs: 120_000 }),
    fsModuleCachePath: testModuleCachePath(),
  },
})
