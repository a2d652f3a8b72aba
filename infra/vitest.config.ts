// infra's own tests build bundles and start processes and clusters of engines: seconds each on an idle machine, far
// more on a loaded one, so they need the tests' generous timeouts rather than vitest's 5 s.
import { defineConfig } from 'vitest/config'
import { testTimeouts } from './src/test-time.ts'

export default defineConfig({ test: { ...testTimeouts() } })
