// The browser bundle (dist/browser/realtime-client.js): the SDK and socket.io-client in one ES module, for a page that
// loads it with <script type="module"> and no bundler. Bundlers take dist/index.js instead (package.json exports).
import { defineConfig } from 'vite'

export default defineConfig({
  build: {
    outDir: 'dist/browser',
    emptyOutDir: true,
    target: 'es2022',
    sourcemap: true,
    lib: { entry: 'src/index.ts', formats: ['es'], fileName: () => 'realtime-client.js' },
  },
})
