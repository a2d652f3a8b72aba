// The chart's and the alert rules' checks need helm, kubeconform, promtool and Kubernetes' schemas: the global setup
// gets them once (built or fetched into the cache folder on first use) before any file runs. Only the metric contract
// (test/metrics-contract.test.ts) needs the engines: it runs the whole system to read the services' /metrics.
import { testTimeouts } from '@meridian/infra/test-time'
import { defineConfig } from 'vitest/config'

export default defineConfig({
  test: {
    globalSetup: ['./test/global-setup.ts'],
    // helm template and kubeconform of the whole chart, many times over: seconds each on a busy machine
    ...testTimeouts({ testMs: 120_000 }),
    // one module graph per worker, not per file: importing the app again for every file was a third of a suite's time
    isolate: false,
  },
})
