import { testCacheDir, testModuleCachePath, testTimeouts } from '@meridian/infra/test-time'
import { defineConfig } from 'vitest/config'

// unit tests of the harness only: `pnpm bench` is the benchmark, never part of `test`
export default defineConfig({
  cacheDir: testCacheDir(import.meta.dirname),
  test: {
    include: ['test/**/*.test.ts'],
    ...testTimeouts(),
    fsModuleCachePath: testModuleCachePath(),
    isolate: false,
  },
})
