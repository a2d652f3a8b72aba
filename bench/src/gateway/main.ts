// `pnpm --filter @meridian/bench bench:gateway`: simple GETs (scenarios.ts) to the real auth service direct, through
// the gateway, through nginx as a plain reverse proxy and through the least a Node proxy does (node-floor.ts); prints
// the figures and ratios of each, writes results/gateway-latest.json.

import { randomBytes } from 'node:crypto'
import { chmodSync } from 'node:fs'
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { cpus, loadavg, tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { ensureInfra, freePort } from '@meridian/infra'
import { createBenchDatabase } from '../bench-database.ts'
import { benchLifecycle } from '../bench-lifecycle.ts'
import { type LoadSample, summarise } from '../load.ts'
import { machineFigures, toMb } from '../report.ts'
import type { StartedProcess } from './child-process.ts'
import { benchRedisDatabase, loadGatewayBenchConfig, redisUrlWithDatabase } from './gateway-config.ts'
import { gatewayAvailable, gatewayMain, startGateway } from './gateway-process.ts'
import {
  aims,
  formatTable,
  formatVerdicts,
  type GatewayRatios,
  measuringOrder,
  ratiosOf,
  type Target,
  type TargetResult,
  type Verdicts,
  verdictsOf,
} from './gateway-report.ts'
import { runGetLoad } from './get-load.ts'
import { obtainNginx, startNginx } from './nginx.ts'
import { startNodeFloor } from './node-floor-process.ts'
import { clockTicksPerSecond, processTree, type UsageSnapshot, usageOf } from './proc-stat.ts'
import { type Answer, answerProblems, fetchAnswer } from './same-answer.ts'
import { type GetScenario, publicKeySet, userById } from './scenarios.ts'
import { deregisterLeftovers, registerUpstream, startAuthService } from './upstream.ts'

const resultsFile = fileURLToPath(new URL('../../results/gateway-latest.json', import.meta.url))
const say = (message: string) => process.stderr.write(`[bench:gateway] ${message}\n`)

/**
 * Polled until auth, nginx, the node floor and the gateway answer it: auth's key ring has started, the route is
 * discovered.
 */
const readyPath = publicKeySet.path

const { undo, run } = benchLifecycle(
  say,
  'cleaned up: processes stopped, Consul entry, database and temp dir removed',
)

const errorText = (error: unknown) => (error instanceof Error ? error.message : String(error))

interface Measured {
  /** scheme, host and port */
  baseUrl: string
  /** the processes whose CPU a request to this target costs besides auth's (none direct) */
  proxyPids: () => number[]
}

interface ScenarioReport {
  scenario: string
  path: string
  order: Target[]
  responseCheck: { identical: boolean; problems: string[] }
  results: TargetResult[]
  ratios: GatewayRatios
  verdicts: Verdicts
}

async function main(): Promise<void> {
  const config = loadGatewayBenchConfig()
  const started = Date.now()
  const loadBefore = loadavg()[0] ?? 0
  const ticksPerSecond = clockTicksPerSecond()
  const endpoints = await ensureInfra()
  const env = config.inheritedEnv
  const redisUrl = redisUrlWithDatabase(endpoints.redisUrl, benchRedisDatabase)

  const nginxBinary = await obtainNginx(env, say)
  say(`nginx ${nginxBinary.version} at ${nginxBinary.path}`)

  const runDir = await mkdtemp(join(tmpdir(), 'bench-gateway-'))
  undo.push({ label: `remove ${runDir}`, run: () => rm(runDir, { recursive: true, force: true }) })
  // nginx's workers run as nobody when the master is root: they must reach the temp paths below this dir
  if (process.getuid?.() === 0) chmodSync(runDir, 0o755)

  const database = await createBenchDatabase(endpoints.databaseUrl)
  undo.push({ label: `drop database ${database.name}`, run: () => database.drop() })

  const [authPort, gatewayPort, nginxPort, floorPort] = [
    await freePort(),
    await freePort(),
    await freePort(),
    await freePort(),
  ]
  // the run's own (production refuses the development default): auth's and the gateway's
  const serviceCredential = randomBytes(32).toString('base64url')
  const auth = await startAuthService({
    serviceCredential,
    port: authPort,
    databaseUrl: database.url,
    redisUrl,
    kafkaBrokers: endpoints.kafkaBrokers,
    inheritedEnv: env,
    readyPath,
  })
  undo.push({ label: `stop auth (pid ${auth.pid})`, run: () => auth.stop() })
  const directUrl = `http://127.0.0.1:${authPort}`
  say(`auth pid ${auth.pid} on ${directUrl}, database ${database.name}`)

  const consul = {
    address: endpoints.consulHttpAddr,
    ...(endpoints.consulToken ? { token: endpoints.consulToken } : {}),
  }
  const serviceName = `auth-bench-${randomBytes(4).toString('hex')}`
  // runs last: whatever the registration left behind under the run's name (it is nobody else's)
  undo.push({
    label: `remove ${serviceName} from Consul`,
    run: async () => {
      const left = await deregisterLeftovers(consul, serviceName)
      if (left > 0) say(`removed ${left} leftover Consul entr${left === 1 ? 'y' : 'ies'} of ${serviceName}`)
    },
  })
  const registration = await registerUpstream(consul, serviceName, authPort)
  undo.push({ label: `deregister ${registration.id}`, run: () => registration.deregister() })
  say(`registered in Consul as ${serviceName}`)

  const nginx = await startNginx(
    nginxBinary,
    { workers: config.nginxWorkers, listenPort: nginxPort, upstreamPort: authPort, dir: runDir },
    env,
    processTree,
    readyPath,
  )
  undo.push({ label: `stop nginx (pid ${nginx.process.pid})`, run: () => nginx.stop() })
  const nginxUrl = `http://127.0.0.1:${nginxPort}`
  say(`nginx pid ${nginx.process.pid} (worker_processes ${config.nginxWorkers}) on ${nginxUrl}`)

  const floor = await startNodeFloor({
    port: floorPort,
    upstreamUrl: directUrl,
    readyPath,
    cpuProfileDir: config.cpuProfileDir,
    inheritedEnv: env,
  })
  undo.push({ label: `stop the node floor (pid ${floor.pid})`, run: () => floor.stop() })
  const floorUrl = `http://127.0.0.1:${floorPort}`
  say(`node floor pid ${floor.pid} on ${floorUrl}`)

  let gateway: StartedProcess | undefined
  let gatewayProblem: string | undefined
  if (!gatewayAvailable()) {
    gatewayProblem = `${gatewayMain} does not exist yet`
  } else {
    try {
      gateway = await startGateway({
        port: gatewayPort,
        consulHttpAddr: endpoints.consulHttpAddr,
        consulToken: endpoints.consulToken,
        redisUrl,
        authServiceName: serviceName,
        authJwksUrl: `${directUrl}${publicKeySet.path}`,
        readyPath,
        cpuProfileDir: config.cpuProfileDir,
        inheritedEnv: env,
        serviceCredential,
      })
      const running = gateway
      undo.push({ label: `stop the gateway (pid ${running.pid})`, run: () => running.stop() })
      say(`gateway pid ${gateway.pid} on http://127.0.0.1:${gatewayPort}`)
    } catch (error) {
      gatewayProblem = `the gateway did not start: ${errorText(error)}`
    }
  }
  if (gatewayProblem) say(`WARNING: measuring direct, nginx and the node floor only; ${gatewayProblem}`)

  const gatewayPid = gateway?.pid ?? 0
  const targets: Partial<Record<Target, Measured>> = {
    direct: { baseUrl: directUrl, proxyPids: () => [] },
    ...(gateway
      ? { gateway: { baseUrl: `http://127.0.0.1:${gatewayPort}`, proxyPids: () => [gatewayPid] } }
      : {}),
    nginx: { baseUrl: nginxUrl, proxyPids: () => nginx.pids() },
    floor: { baseUrl: floorUrl, proxyPids: () => [floor.pid] },
  }
  const running = (Object.keys(targets) as Target[]).filter((target) => targets[target])
  const measured = (target: Target) => targets[target]!
  const order = measuringOrder(running)

  async function measure(scenario: GetScenario): Promise<ScenarioReport> {
    const url = (target: Target) => `${measured(target).baseUrl}${scenario.path}`
    const answers: Partial<Record<Target, Answer>> = {}
    for (const target of running) answers[target] = await fetchAnswer(url(target), scenario.headers)
    const problems = answerProblems(answers)
    for (const problem of problems)
      say(`WARNING: ${scenario.name}: the paths do not answer alike: ${problem}`)

    say(
      `${scenario.name}: warm-up ${config.warmupSeconds} s each, then ${config.measureSeconds} s each in halves ` +
        `(${order.join(', ')}), ${config.connections} connections`,
    )
    for (const target of running)
      await runGetLoad(url(target), config.warmupSeconds, config.connections, scenario.headers)

    const parts: Partial<Record<Target, LoadSample[]>> = {}
    const cpuMs: Partial<Record<Target, { upstream: number; proxy: number }>> = {}
    const difference = (after: UsageSnapshot, before: UsageSnapshot) => after.cpuMs - before.cpuMs
    for (const target of order) {
      const pids = measured(target).proxyPids()
      const before = { upstream: usageOf([auth.pid], ticksPerSecond), proxy: usageOf(pids, ticksPerSecond) }
      const sample = await runGetLoad(
        url(target),
        config.measureSeconds / 2,
        config.connections,
        scenario.headers,
      )
      const after = { upstream: usageOf([auth.pid], ticksPerSecond), proxy: usageOf(pids, ticksPerSecond) }
      parts[target] = [...(parts[target] ?? []), sample]
      const spent = cpuMs[target] ?? { upstream: 0, proxy: 0 }
      cpuMs[target] = {
        upstream: spent.upstream + difference(after.upstream, before.upstream),
        proxy: spent.proxy + difference(after.proxy, before.proxy),
      }
    }

    const upstreamUsage = usageOf([auth.pid], ticksPerSecond)
    const results: TargetResult[] = running.map((target) => {
      const figures = summarise(parts[target] ?? [])
      const perRequest = (ms: number) => (figures.totalRequests > 0 ? ms / figures.totalRequests : 0)
      const proxyPids = measured(target).proxyPids()
      const proxy = proxyPids.length > 0 ? usageOf(proxyPids, ticksPerSecond) : undefined
      return {
        target,
        ...figures,
        upstreamCpuMsPerRequest: perRequest(cpuMs[target]?.upstream ?? 0),
        proxyCpuMsPerRequest: proxy ? perRequest(cpuMs[target]?.proxy ?? 0) : null,
        upstreamRssMb: toMb(upstreamUsage.rss),
        proxyRssMb: proxy ? toMb(proxy.rss) : null,
        proxyPeakRssMb: proxy ? toMb(proxy.peakRss) : null,
      }
    })
    const ratios = ratiosOf(results)
    process.stdout.write(`\n${scenario.name}\n${formatTable(results)}\n\n${formatVerdicts(ratios)}\n`)
    return {
      scenario: scenario.name,
      path: scenario.path,
      order,
      responseCheck: { identical: problems.length === 0, problems },
      results,
      ratios,
      verdicts: verdictsOf(ratios),
    }
  }

  const scenarios = [publicKeySet, await userById(directUrl)]
  const reports: ScenarioReport[] = []
  for (const scenario of scenarios) reports.push(await measure(scenario))

  const cpuCount = cpus().length
  const loadAfter = loadavg()[0] ?? 0
  process.stdout.write(
    `\n${gatewayProblem ? `gateway not measured: ${gatewayProblem}\n` : ''}` +
      `nginx ${nginxBinary.version}, worker_processes ${config.nginxWorkers}; auth RSS ${toMb(usageOf([auth.pid], ticksPerSecond).rss)} MB\n` +
      `machine load average: ${loadBefore.toFixed(2)} before the run, ${loadAfter.toFixed(2)} after, on ${cpuCount} CPUs\n`,
  )

  await mkdir(dirname(resultsFile), { recursive: true })
  const report = {
    measuredAt: new Date(started).toISOString(),
    durationSeconds: Math.round((Date.now() - started) / 1000),
    machine: machineFigures(loadBefore, loadAfter),
    settings: {
      warmupSeconds: config.warmupSeconds,
      measureSeconds: config.measureSeconds,
      connections: config.connections,
      nginx: { version: nginxBinary.version, workerProcesses: config.nginxWorkers },
      consulServiceName: serviceName,
    },
    gatewayProblem: gatewayProblem ?? null,
    aims,
    scenarios: reports,
  }
  await writeFile(resultsFile, `${JSON.stringify(report, null, 2)}\n`)
  say(`wrote ${resultsFile}`)
}

await run(main)
