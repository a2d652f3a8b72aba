import { defineConfig } from 'vitest/config'
// By path, not by package: infra depends on realtime-client, so it cannot name infra as a dependency (a cycle);
// the tests still take their timeouts from the one setting every workspace's do, and their own deadlines from the
// scale provided here (test/realtime-server.ts, scaledMs).
import { testTimeouts, testTimeScale } from '../../infra/src/test-time.ts'

export default defineConfig({
  test: { ...testTimeouts(), isolate: false, provide: { timeScale: testTimeScale() } },
})
