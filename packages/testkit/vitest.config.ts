import { defineConfig } from 'vitest/config'
import { testCacheDir, testModuleCachePath, testTimeouts } from './src/test-time.ts'

export default defineConfig({
  cacheDir: testCacheDir(import.meta.dirname),
  test: {
    globalSetup: ['./src/global-setup.ts'],
    ...testTimeouts(),
    fsModuleCachePath: testModuleCachePath(),
    // one module graph per worker, not per file: importing the app again for every file was a third of a suite's time
    isolate: false,
  },
})
