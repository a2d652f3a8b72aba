// The realtime-gateway as bench:realtime runs it: its own services/realtime-gateway/src/main.ts (configuration,
// database migrations, Redis, Kafka consumer, graceful shutdown) in this process, which also answers the bench over
// IPC (serveOverIpc: ready, memory and CPU snapshots, stop), so the gateway's RSS and heap are read as bare's are.
// Nothing is imported from the service but its entry, by path: bench needs no dependency on it. Its environment
// (PORT, HOST, DATABASE_URL, JWT_*, REALTIME_*, ...) comes from main.ts.
import { setTimeout as sleep } from 'node:timers/promises'
import { pathToFileURL } from 'node:url'
import { serveOverIpc } from '../servers/serve-over-ipc.ts'

const entry = process.env.BENCH_REALTIME_GATEWAY_ENTRY
const port = Number(process.env.PORT)

await serveOverIpc(async () => {
  if (!entry || !Number.isInteger(port) || port <= 0)
    throw new Error(
      'BENCH_REALTIME_GATEWAY_ENTRY and PORT are not set; bench/src/realtime/main.ts starts this',
    )
  await import(pathToFileURL(entry).href)
  // main.ts starts asynchronously (runMain): ready once /health/ready answers 200 (a failed start exits the process)
  const deadline = Date.now() + 60_000
  let last = 'no answer yet'
  for (;;) {
    try {
      const response = await fetch(`http://127.0.0.1:${port}/health/ready`, {
        signal: AbortSignal.timeout(2000),
      })
      await response.arrayBuffer()
      if (response.status === 200) break
      last = `status ${response.status}`
    } catch (error) {
      last = error instanceof Error ? error.message : String(error)
    }
    if (Date.now() > deadline) throw new Error(`the realtime-gateway was not ready within 60 s (${last})`)
    await sleep(200)
  }
  return {
    port,
    // the service's own shutdown (close-with-grace: drain, close, exit); this process ends with it
    close: () => {
      process.kill(process.pid, 'SIGTERM')
      return new Promise<void>(() => {})
    },
  }
})
