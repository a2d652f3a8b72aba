// Unit tests of the console's own logic (no browser, no system): the browser tests are in tests/browser.
import { defineConfig } from 'vitest/config'

export default defineConfig({ test: { include: ['test/**/*.test.ts'] } })
