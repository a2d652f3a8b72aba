// What both server processes share: start, report the port to the bench, answer snapshot requests, stop on request
// (or when the bench goes away, so no server outlives it).
import type { ChildMessage, ParentMessage, ProcessSnapshot } from '../ipc.ts'

export interface RunningServer {
  port: number
  /** closes the HTTP server and everything it opened (pools, clients) */
  close(): Promise<void>
}

const send = (message: ChildMessage) => process.send?.(message)

export async function serveOverIpc(start: () => Promise<RunningServer>): Promise<void> {
  if (!process.send) throw new Error('a server process is started by the bench (src/main.ts), over IPC')

  let peakRss = process.memoryUsage.rss()
  const sampler = setInterval(() => {
    peakRss = Math.max(peakRss, process.memoryUsage.rss())
  }, 100)
  const snapshot = (): ProcessSnapshot => {
    const { rss, heapUsed, external } = process.memoryUsage()
    const { user, system } = process.cpuUsage()
    peakRss = Math.max(peakRss, rss)
    return { rss, peakRss, heapUsed, external, cpuMicros: user + system }
  }

  let server: RunningServer
  try {
    server = await start()
  } catch (error) {
    clearInterval(sampler)
    send({ type: 'failed', message: error instanceof Error ? (error.stack ?? error.message) : String(error) })
    process.exitCode = 1
    process.disconnect()
    return
  }

  let stopping: Promise<void> | undefined
  const stop = () => {
    stopping ??= (async () => {
      clearInterval(sampler)
      await server.close()
    })()
    return stopping
  }

  process.on('message', (message: ParentMessage) => {
    if (message.type === 'mark') peakRss = process.memoryUsage.rss()
    // --expose-gc (bench:realtime's servers): what is left after a full collection is what the process holds
    if (message.type === 'settled') (globalThis as { gc?: () => void }).gc?.()
    if (message.type === 'stop') {
      const last = snapshot()
      void stop().then(() => {
        send({ type: 'reply', id: message.id, snapshot: last })
        process.disconnect()
      })
      return
    }
    send({ type: 'reply', id: message.id, snapshot: snapshot() })
  })
  // the bench ended without stopping us (crash, Ctrl-C): close and leave
  process.on('disconnect', () => {
    void stop()
  })

  send({ type: 'ready', port: server.port })
}
