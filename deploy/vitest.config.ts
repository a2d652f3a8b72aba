// The chart's and the alert rules' checks need helm, kubeconform, promtool and Kubernetes' schemas: the global setup
// gets them once (built or fetched into the cache folder on first use) before any file runs. The metric contract (every
// metric a rule or dashboard reads is exposed) reads a running system's /metrics: it is an end-to-end test
// (tests/e2e/test/metrics-contract.test.ts), on the suite's system, instead of a system started here for it alone.
import { testCacheDir, testModuleCachePath, testTimeouts } from '@meridian/infra/test-time'
import { defineConfig } from 'vitest/config'

export default defineConfig({
  cacheDir: testCacheDir(import.meta.dirname),
  test: {
    globalSetup: ['./test/global-setup.ts'],
    // helm template and kubeconform of the whole chart, many times over: seconds each on a busy machine
    ...testTimeouts({ testMs: 120_000 }),
    fsModuleCachePath: testModuleCachePath(),
    // one module graph per worker, not per file: importing the app again for every file was a third of a suite's time
    isolate: false,
  },
})
