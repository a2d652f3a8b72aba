import { createRequire } from 'node:module'
import { testCacheDir, testModuleCachePath, testTimeouts } from '@meridian/testkit/test-time'
import { defineConfig } from 'vitest/config'

// graphql ships CommonJS (main) and ES modules (module). Node loads the CommonJS one for everybody, mercurius
// included; Vite would hand this code the ES one — a second graphql whose types mercurius's does not recognise.
const graphqlEntry = createRequire(import.meta.url).resolve('graphql')

export default defineConfig({
  cacheDir: testCacheDir(import.meta.dirname),
  resolve: { alias: [{ find: /^graphql$/, replacement: graphqlEntry }] },
  test: {
    globalSetup: ['@meridian/testkit/global-setup'],
    ...testTimeouts(),
    fsModuleCachePath: testModuleCachePath(),
    // one module graph per worker, not per file: importing the app again for every file was a third of a suite's time
    isolate: false,
  },
})
