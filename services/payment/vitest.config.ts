import { testTimeouts } from '@meridian/testkit/test-time'
import { defineConfig } from 'vitest/config'

export default defineConfig({
  test: {
    globalSetup: ['@meridian/testkit/global-setup'],
    ...testTimeouts(),
  },
})
