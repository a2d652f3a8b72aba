import { defineConfig } from 'vitest/config'
// By path, not by package: infra depends on realtime-client, so it cannot name infra as a dependency (a cycle);
// the tests still take their timeouts from the one setting every workspace's do, and their own deadlines from the
// scale provided here (test/realtime-server.ts, scaledMs).
import { testCacheDir, testModuleCachePath, testTimeouts, testTimeScale } from '../../infra/src/test-time.ts'

export default defineConfig({
  cacheDir: testCacheDir(import.meta.dirname),
  test: {
    ...testTimeouts(),
    fsModuleCachePath: testModuleCachePath(),
    isolate: false,
    provide: { timeScale: testTimeScale() },
  },
})
