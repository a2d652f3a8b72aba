// The chart's checks need helm, kubeconform and Kubernetes' schemas: the global setup gets them once (built or
// fetched into the cache folder on first use) before any file runs. No engine is needed.
import { defineConfig } from 'vitest/config'

export default defineConfig({
  test: {
    globalSetup: ['./test/global-setup.ts'],
    // helm template and kubeconform of the whole chart, many times over: seconds each on a busy machine
    testTimeout: 120_000,
    hookTimeout: 120_000,
  },
})
