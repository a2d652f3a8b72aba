// `pnpm --filter @meridian/bench bench`: the auth service's users resource through the full chassis, side by side
// with bare Fastify running the same SQL; prints the figures and ratios, writes results/users-latest.json.

import { randomBytes } from 'node:crypto'
import { mkdir, writeFile } from 'node:fs/promises'
import { cpus, loadavg } from 'node:os'
import { dirname } from 'node:path'
import { fileURLToPath } from 'node:url'
import { ensureInfra } from '@meridian/infra'
import { loadBenchConfig, serverEnvOf } from './bench-config.ts'
import { createBenchDatabase, signIn } from './bench-database.ts'
import { benchLifecycle } from './bench-lifecycle.ts'
import type { ServerName } from './ipc.ts'
import { type LoadSample, runLoad, scenarioLabel, summarise } from './load.ts'
import { deleteKeys } from './redis-keys.ts'
import {
  formatTable,
  formatVerdict,
  keepsThroughput,
  machineFigures,
  type RunResult,
  ratiosOf,
  throughputBar,
  toMb,
} from './report.ts'
import { checkResponses } from './response-check.ts'
import { type ServerProcess, startServerProcess } from './server-process.ts'

const resultsFile = fileURLToPath(new URL('../results/users-latest.json', import.meta.url))
const say = (message: string) => process.stderr.write(`[bench] ${message}\n`)

const { undo, run } = benchLifecycle(say, 'cleaned up: servers stopped, Redis keys and database removed')

async function main(): Promise<void> {
  const config = loadBenchConfig()
  const started = Date.now()
  const loadBefore = loadavg()[0] ?? 0
  const endpoints = await ensureInfra()

  const database = await createBenchDatabase(endpoints.databaseUrl)
  undo.push({ label: `drop database ${database.name}`, run: () => database.drop() })
  say(`database ${database.name} migrated; seeding ${config.seedUsers} users`)
  await database.seed(config.seedUsers)

  const redisKeyPrefix = `bench-${randomBytes(4).toString('hex')}:`
  undo.push({ label: 'delete Redis keys', run: () => deleteKeys(endpoints.redisUrl, redisKeyPrefix) })
  const serverEnv = serverEnvOf(config, {
    databaseUrl: database.url,
    redisUrl: endpoints.redisUrl,
    redisKeyPrefix,
  })
  const servers = {} as Record<ServerName, ServerProcess>
  for (const name of ['chassis', 'bare'] as const) {
    servers[name] = await startServerProcess(name, serverEnv)
    undo.push({
      label: `stop the ${name} server (pid ${servers[name].pid})`,
      run: () => servers[name].stop(),
    })
  }
  const idleRssMb = {
    chassis: toMb((await servers.chassis.snapshot()).rss),
    bare: toMb((await servers.bare.snapshot()).rss),
  }
  say(
    `servers up: chassis pid ${servers.chassis.pid} (${idleRssMb.chassis} MB), bare pid ${servers.bare.pid} (${idleRssMb.bare} MB)`,
  )

  // the list is for admins: sign in once through the chassis (a token lives 15 minutes, far longer than a run)
  const authorization = await signIn(servers.chassis.baseUrl)
  const responseCheck = await checkResponses(servers.chassis.baseUrl, servers.bare.baseUrl, authorization)
  for (const problem of responseCheck.problems)
    say(`WARNING: the servers do not do the same work: ${problem}`)
  await database.removeCreatedUsers()

  // Every list run sees the same seeded table: the lists go first, and created users are removed after each part.
  // Each server's measurement is two halves in the order chassis, bare, bare, chassis, so a machine that speeds up
  // or slows down during the run (other work on it) weighs on both servers alike.
  const results: RunResult[] = []
  const order: ServerName[] = ['chassis', 'bare', 'bare', 'chassis']
  const load = { connections: config.connections, authorization }
  for (const scenario of config.scenarios) {
    say(
      `${scenarioLabel[scenario]}: warm-up ${config.warmupSeconds} s each, then ${config.measureSeconds} s each ` +
        `in halves (${order.join(', ')})`,
    )
    for (const name of ['chassis', 'bare'] as const) {
      await runLoad(servers[name].baseUrl, scenario, { ...load, seconds: config.warmupSeconds })
    }
    if (scenario === 'create') await database.removeCreatedUsers()
    const before = {
      chassis: await servers.chassis.markPeak(),
      bare: await servers.bare.markPeak(),
    }
    const parts: Record<ServerName, LoadSample[]> = { chassis: [], bare: [] }
    for (const name of order) {
      parts[name].push(
        await runLoad(servers[name].baseUrl, scenario, { ...load, seconds: config.measureSeconds / 2 }),
      )
      if (scenario === 'create') await database.removeCreatedUsers()
    }
    for (const name of ['chassis', 'bare'] as const) {
      const after = await servers[name].snapshot()
      const figures = summarise(parts[name])
      results.push({
        scenario,
        server: name,
        ...figures,
        rssMb: toMb(after.rss),
        peakRssMb: toMb(after.peakRss),
        cpuMsPerRequest:
          figures.totalRequests > 0
            ? (after.cpuMicros - before[name].cpuMicros) / 1000 / figures.totalRequests
            : 0,
      })
    }
  }

  const ratios = ratiosOf(results)
  const cpuCount = cpus().length
  const machineLoad = `machine load average before the run: ${loadBefore.toFixed(2)} on ${cpuCount} CPUs`
  const busy = loadBefore > cpuCount / 2
  process.stdout.write(
    `\n${formatTable(results)}\n\n${formatVerdict(ratios)}\n${machineLoad}` +
      `${busy ? ' (other work was running: throughput figures are noisy; CPU ms/req is steadier)' : ''}\n`,
  )

  await mkdir(dirname(resultsFile), { recursive: true })
  const report = {
    measuredAt: new Date(started).toISOString(),
    durationSeconds: Math.round((Date.now() - started) / 1000),
    machine: machineFigures(loadBefore),
    settings: {
      warmupSeconds: config.warmupSeconds,
      measureSeconds: config.measureSeconds,
      connections: config.connections,
      seedUsers: config.seedUsers,
      poolMax: config.poolMax,
    },
    idleRssMb,
    responseCheck,
    results,
    ratios,
    throughputBar,
    keepsThroughput: keepsThroughput(ratios),
  }
  await writeFile(resultsFile, `${JSON.stringify(report, null, 2)}\n`)
  say(`wrote ${resultsFile}`)
}

await run(main)
