// One system for the whole suite (src/global-setup.ts), files one after the other: the tests share it and the machine.
import { testCacheDir, testModuleCachePath, testTimeouts } from '@meridian/testkit/test-time'
import { defineConfig } from 'vitest/config'

export default defineConfig({
  cacheDir: testCacheDir(import.meta.dirname),
  test: {
    // the engines first (testkit: endpoints into the environment), then the system on them
    globalSetup: ['@meridian/testkit/global-setup', './src/global-setup.ts'],
    fileParallelism: false,
    ...testTimeouts({ testMs: 180_000, teardownMs: 120_000 }),
    fsModuleCachePath: testModuleCachePath(),
  },
})
