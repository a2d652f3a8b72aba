// Drives a server with autocannon (the list query, or user creation with a unique email per request; measureLoad any
// other target) and records every response's latency itself, so parts of a measurement can be merged and percentiles
// are exact, not 1 ms bins.
import autocannon from 'autocannon'

export type Scenario = 'list' | 'create'

export const scenarioLabel: Record<Scenario, string> = {
  list: 'GET /api/v1/users?limit=20',
  create: 'POST /api/v1/users',
}

/** One autocannon run. */
export interface LoadSample {
  seconds: number
  latenciesMs: number[]
  statusCodes: Record<string, number>
  /** connection errors, timeouts included */
  errors: number
}

export interface LoadFigures {
  requestsPerSecond: number
  /** requests/s of each part, in the order run: how much the machine wandered */
  partRequestsPerSecond: number[]
  totalRequests: number
  p50Ms: number
  p99Ms: number
  errors: number
  non2xx: number
  statusCodes: Record<string, number>
}

// unique across warm-ups, measured runs and servers of this process; the database is the run's own
let createdUsers = 0
export const newUserBody = () => {
  createdUsers += 1
  return JSON.stringify({
    name: `Bench User ${createdUsers}`,
    email: `bench-${createdUsers}@example.com`,
    password: 'correct horse battery staple',
  })
}

export interface LoadOptions {
  seconds: number
  connections: number
  /** Authorization header of the list (admins only); the bare server ignores it */
  authorization: string
}

export function runLoad(
  baseUrl: string,
  scenario: Scenario,
  { seconds, connections, authorization }: LoadOptions,
): Promise<LoadSample> {
  const target =
    scenario === 'list'
      ? { url: `${baseUrl}/api/v1/users?limit=20`, headers: { authorization } }
      : {
          url: `${baseUrl}/api/v1/users`,
          method: 'POST' as const,
          headers: { 'content-type': 'application/json' },
          requests: [
            { setupRequest: (request: autocannon.Request) => ({ ...request, body: newUserBody() }) },
          ],
        }
  return measureLoad({ ...target, connections, duration: seconds })
}

/** One autocannon run of any target (bench:graphql's too), every response's latency and status recorded. */
export function measureLoad(options: autocannon.Options): Promise<LoadSample> {
  const latenciesMs: number[] = []
  const statusCodes: Record<string, number> = {}
  return new Promise((resolve, reject) => {
    const instance = autocannon(options, (error, result) => {
      if (error) return reject(error)
      resolve({ seconds: result.duration, latenciesMs, statusCodes, errors: result.errors })
    })
    instance.on('response', (_client, statusCode, _bytes, responseTime) => {
      latenciesMs.push(responseTime)
      statusCodes[statusCode] = (statusCodes[statusCode] ?? 0) + 1
    })
  })
}

/** Nearest-rank percentile of ascending values; 0 when there are none. */
export function percentile(ascending: number[], fraction: number): number {
  if (ascending.length === 0) return 0
  const rank = Math.min(ascending.length, Math.max(1, Math.ceil(fraction * ascending.length)))
  return ascending[rank - 1]!
}

/** The parts of one server's measurement as one set of figures. */
export function summarise(parts: LoadSample[]): LoadFigures {
  const latencies = parts.flatMap((part) => part.latenciesMs).sort((a, b) => a - b)
  const seconds = parts.reduce((sum, part) => sum + part.seconds, 0)
  const statusCodes: Record<string, number> = {}
  for (const part of parts) {
    for (const [code, count] of Object.entries(part.statusCodes))
      statusCodes[code] = (statusCodes[code] ?? 0) + count
  }
  return {
    requestsPerSecond: seconds > 0 ? latencies.length / seconds : 0,
    partRequestsPerSecond: parts.map((part) =>
      part.seconds > 0 ? part.latenciesMs.length / part.seconds : 0,
    ),
    totalRequests: latencies.length,
    p50Ms: percentile(latencies, 0.5),
    p99Ms: percentile(latencies, 0.99),
    errors: parts.reduce((sum, part) => sum + part.errors, 0),
    non2xx: Object.entries(statusCodes)
      .filter(([code]) => !code.startsWith('2'))
      .reduce((sum, [, count]) => sum + count, 0),
    statusCodes,
  }
}
