// The chassis' side of the tracing bench: the auth service's users list served by the real app in one process per
// tracing mode (each loading the kit's tracing preload, as every service does), beside bare Fastify, all in one run:
// warm-ups, then measured halves in the order off, 10%, 100%, bare, bare, 100%, 10%, off, so that a machine that
// drifts during the run weighs on each alike. The figures: requests/s, p50/p99 and CPU ms per request of each.
import { randomBytes } from 'node:crypto'
import type { BenchConfig } from '../bench-config.ts'
import { serverEnvOf } from '../bench-config.ts'
import { createBenchDatabase, signIn } from '../bench-database.ts'
import type { UndoStep } from '../bench-lifecycle.ts'
import { type LoadSample, runLoad, summarise } from '../load.ts'
import { deleteKeys } from '../redis-keys.ts'
import {
  type ServerProcess,
  serverEntries,
  startProcessOverIpc,
  startServerProcess,
} from '../server-process.ts'
import { type TracingMode, tracingEnv } from './modes.ts'

/** The kit's preload, as `node --import` loads it before a service's modules (development and the launcher alike). */
const tracingPreload = import.meta.resolve('@meridian/service-kit/tracing/preload')

export interface ChassisServerResult {
  server: string
  requestsPerSecond: number
  partRequestsPerSecond: number[]
  p50Ms: number
  p99Ms: number
  cpuMsPerRequest: number
  non2xx: number
  errors: number
}

export async function chassisUnderTracing(options: {
  modes: TracingMode[]
  otlpEndpoint: string
  config: BenchConfig
  endpoints: { databaseUrl: string; redisUrl: string }
  undo: UndoStep[]
  say: (message: string) => void
}): Promise<ChassisServerResult[]> {
  const { config, say, undo } = options
  const database = await createBenchDatabase(options.endpoints.databaseUrl)
  undo.push({ label: `drop database ${database.name}`, run: () => database.drop() })
  await database.seed(config.seedUsers)
  const redisKeyPrefix = `bench-tracing-${randomBytes(4).toString('hex')}:`
  undo.push({ label: 'delete Redis keys', run: () => deleteKeys(options.endpoints.redisUrl, redisKeyPrefix) })
  const serverEnv = serverEnvOf(config, {
    databaseUrl: database.url,
    redisUrl: options.endpoints.redisUrl,
    redisKeyPrefix,
  })

  const servers = new Map<string, ServerProcess<string>>()
  const keep = (server: ServerProcess<string>) => {
    servers.set(server.name, server)
    undo.push({ label: `stop ${server.name} (pid ${server.pid})`, run: () => server.stop() })
  }
  for (const mode of options.modes) {
    const name = `chassis, tracing ${mode.name}`
    keep(
      await startProcessOverIpc(
        name,
        serverEntries.chassis,
        { ...serverEnv, ...tracingEnv(mode, options.otlpEndpoint), OTEL_SERVICE_NAME: 'bench-chassis' },
        { execArgv: ['--import', tracingPreload] },
      ),
    )
  }
  keep(await startServerProcess('bare', serverEnv))
  const names = [...servers.keys()]
  say(`servers up: ${names.map((name) => `${name} (pid ${servers.get(name)?.pid})`).join(', ')}`)

  const authorization = await signIn(servers.get(names[0] as string)?.baseUrl ?? '')
  const load = { connections: config.connections, authorization }
  say(
    `GET /api/v1/users?limit=20: warm-up ${config.warmupSeconds} s each, then ${config.measureSeconds} s each in halves`,
  )
  for (const server of servers.values()) {
    await runLoad(server.baseUrl, 'list', { ...load, seconds: config.warmupSeconds })
  }
  const before = new Map<string, number>()
  for (const [name, server] of servers) before.set(name, (await server.markPeak()).cpuMicros)
  const parts = new Map<string, LoadSample[]>(names.map((name) => [name, []]))
  for (const name of [...names, ...[...names].reverse()]) {
    const server = servers.get(name) as ServerProcess<string>
    parts
      .get(name)
      ?.push(await runLoad(server.baseUrl, 'list', { ...load, seconds: config.measureSeconds / 2 }))
  }
  const results: ChassisServerResult[] = []
  for (const [name, server] of servers) {
    const after = await server.snapshot()
    const figures = summarise(parts.get(name) ?? [])
    results.push({
      server: name,
      requestsPerSecond: figures.requestsPerSecond,
      partRequestsPerSecond: figures.partRequestsPerSecond,
      p50Ms: figures.p50Ms,
      p99Ms: figures.p99Ms,
      cpuMsPerRequest:
        figures.totalRequests > 0
          ? (after.cpuMicros - (before.get(name) ?? 0)) / 1000 / figures.totalRequests
          : 0,
      non2xx: figures.non2xx,
      errors: figures.errors,
    })
  }
  return results
}

/** The chassis' table: each server's figures, and each tracing mode against off (throughput, CPU per request). */
export function chassisTable(results: ChassisServerResult[]): string {
  const off = results.find((each) => each.server === 'chassis, tracing off')
  const lines = [
    'GET /api/v1/users?limit=20     req/s (halves)              p50 ms  p99 ms  CPU ms/req  vs off: req/s  CPU/req',
    ...results.map((each) => {
      const halves = each.partRequestsPerSecond.map((value) => value.toFixed(0)).join(', ')
      const versus =
        off && each !== off
          ? `${(each.requestsPerSecond / off.requestsPerSecond).toFixed(3).padStart(14)} ${(each.cpuMsPerRequest / off.cpuMsPerRequest).toFixed(3).padStart(8)}`
          : `${'-'.padStart(14)} ${'-'.padStart(8)}`
      const failed = each.non2xx + each.errors > 0 ? `  (${each.non2xx} non-2xx, ${each.errors} errors)` : ''
      return (
        `${each.server.padEnd(24)} ${each.requestsPerSecond.toFixed(0).padStart(7)} (${halves})`.padEnd(59) +
        ` ${each.p50Ms.toFixed(1).padStart(6)} ${each.p99Ms.toFixed(1).padStart(7)} ${each.cpuMsPerRequest.toFixed(3).padStart(11)} ${versus}${failed}`
      )
    }),
  ]
  return lines.join('\n')
}
