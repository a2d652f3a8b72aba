import { defineConfig } from 'vitest/config'
// By path, not by package: infra depends on this package, so it cannot name infra as a dependency (a cycle); the tests
// still take their timeouts from the one setting every workspace's do.
import { testCacheDir, testModuleCachePath, testTimeouts } from '../../infra/src/test-time.ts'

export default defineConfig({
  cacheDir: testCacheDir(import.meta.dirname),
  test: { ...testTimeouts(), fsModuleCachePath: testModuleCachePath(), isolate: false },
})
