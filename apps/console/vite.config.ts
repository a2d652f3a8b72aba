// The console is served by the gateway under /console/ (scripts/dev, the browser tests): every asset URL is below it.
import { defineConfig } from 'vite'

export default defineConfig({
  base: '/console/',
  build: { outDir: 'dist', emptyOutDir: true, sourcemap: true },
  // `pnpm dev`: Vite on 5173, the API through the gateway on 8080 (same origin for the page, so no CORS)
  server: {
    port: 5173,
    proxy: {
      '^/(api|login|logout|refresh|authorize|token|oidc|interaction|session|userinfo|\\.well-known|graphql)':
        {
          target: 'http://127.0.0.1:8080',
          ws: true,
        },
      '/socket.io': { target: 'http://127.0.0.1:8080', ws: true },
    },
  },
})
