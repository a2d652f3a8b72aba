import { testCacheDir, testModuleCachePath, testTimeouts } from '@meridian/testkit/test-time'
import { defineConfig } from 'vitest/config'

export default defineConfig({
  cacheDir: testCacheDir(import.meta.dirname),
  test: {
    globalSetup: ['@meridian/testkit/global-setup'],
    ...testTimeouts(),
    fsModuleCachePath: testModuleCachePath(),
    // one module graph per worker, not per file: importing the app again for every file was a third of a suite's time
    isolate: false,
  },
})
