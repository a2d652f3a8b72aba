import { createRequire } from 'node:module'
import { defineConfig } from 'vitest/config'

// graphql ships CommonJS (main) and ES modules (module). Node loads the CommonJS one for everybody, mercurius
// included; Vite would hand this code the ES one — a second graphql whose types mercurius's does not recognise.
const graphqlEntry = createRequire(import.meta.url).resolve('graphql')

export default defineConfig({
  resolve: { alias: [{ find: /^graphql$/, replacement: graphqlEntry }] },
  test: {
    globalSetup: ['@meridian/testkit/global-setup'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
})
