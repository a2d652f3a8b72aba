import { testCacheDir, testModuleCachePath, testTimeouts } from '@meridian/testkit/test-time'
import { defineConfig } from 'vitest/config'

// unit tests, and the stored-mail round through the development Mailpit (testkit's mailpitEngine(), which finds it
// by its fixed ports): no database or broker, no global setup
export default defineConfig({
  cacheDir: testCacheDir(import.meta.dirname),
  test: {
    ...testTimeouts(),
    fsModuleCachePath: testModuleCachePath(),
  },
})
