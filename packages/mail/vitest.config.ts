import { testTimeouts } from '@meridian/testkit/test-time'
import { defineConfig } from 'vitest/config'

// unit tests only (an in-process SMTP server stands in for nothing else): no engines, no global setup
export default defineConfig({
  test: {
    ...testTimeouts(),
  },
})
