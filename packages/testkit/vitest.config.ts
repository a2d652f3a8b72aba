import { defineConfig } from 'vitest/config'
import { testTimeouts } from './src/test-time.ts'

export default defineConfig({
  test: {
    globalSetup: ['./src/global-setup.ts'],
    ...testTimeouts(),
    // one module graph per worker, not per file: importing the app again for every file was a third of a suite's time
    isolate: false,
  },
})
