import { testTimeouts } from '@meridian/testkit/test-time'
import { defineConfig } from 'vitest/config'

export default defineConfig({
  test: {
    globalSetup: ['@meridian/testkit/global-setup'],
    ...testTimeouts(),
    // one module graph per worker, not per file: importing the app again for every file was a third of a suite's time
    isolate: false,
  },
})
