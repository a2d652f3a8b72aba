import { defineConfig } from 'vitest/config'

export default defineConfig({
  test: {
    globalSetup: ['@meridian/testkit/global-setup'],
    testTimeout: 120_000,
    hookTimeout: 60_000,
  },
})
