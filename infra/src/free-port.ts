// A TCP port free on 127.0.0.1 now: the kernel picks it, we release it and hand it to a process that cannot take 0
// (benchmarks, the API fuzzing run).
import { createServer } from 'node:net'

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer()
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const address = server.address()
      server.close(() =>
        address && typeof address !== 'string' ? resolve(address.port) : reject(new Error('no TCP port')),
      )
    })
  })
}
