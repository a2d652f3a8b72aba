// Drives one URL with GET requests (autocannon in this process) and records every response's latency, so the halves
// of a measurement can be merged and percentiles are exact, as the users benchmark does.
import autocannon from 'autocannon'
import type { LoadSample } from '../load.ts'

export function runGetLoad(
  url: string,
  seconds: number,
  connections: number,
  headers: Record<string, string> = {},
): Promise<LoadSample> {
  const latenciesMs: number[] = []
  const statusCodes: Record<string, number> = {}
  return new Promise((resolve, reject) => {
    const instance = autocannon({ url, connections, duration: seconds, headers }, (error, result) => {
      if (error) return reject(error)
      resolve({ seconds: result.duration, latenciesMs, statusCodes, errors: result.errors })
    })
    instance.on('response', (_client, statusCode, _bytes, responseTime) => {
      latenciesMs.push(responseTime)
      statusCodes[statusCode] = (statusCodes[statusCode] ?? 0) + 1
    })
  })
}
