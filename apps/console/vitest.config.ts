// Unit tests of the console's own logic (no browser, no system): the browser tests are in tests/browser.
import { defineConfig } from 'vitest/config'
// By path, not by package: a dependency on infra would make turbo build infra before every build of the console,
// for the sake of its tests' timeouts, which come from the one setting every workspace's do.
import { testCacheDir, testModuleCachePath, testTimeouts } from '../../infra/src/test-time.ts'

export default defineConfig({
  cacheDir: testCacheDir(import.meta.dirname),
  test: {
    include: ['test/**/*.test.ts'],
    ...testTimeouts(),
    fsModuleCachePath: testModuleCachePath(),
    isolate: false,
  },
})
