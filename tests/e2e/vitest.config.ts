// One system for the whole suite (src/global-setup.ts), files one after the other: the tests share it and the machine.
import { defineConfig } from 'vitest/config'

export default defineConfig({
  test: {
    // the engines first (testkit: endpoints into the environment), then the system on them
    globalSetup: ['@meridian/testkit/global-setup', './src/global-setup.ts'],
    fileParallelism: false,
    testTimeout: 180_000,
    hookTimeout: 180_000,
    teardownTimeout: 120_000,
  },
})
