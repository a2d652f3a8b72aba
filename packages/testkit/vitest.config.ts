import { defineConfig } from 'vitest/config'
import { testTimeouts } from './src/test-time.ts'

export default defineConfig({
  test: {
    globalSetup: ['./src/global-setup.ts'],
    ...testTimeouts(),
  },
})
