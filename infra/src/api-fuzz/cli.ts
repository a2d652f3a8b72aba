// The API fuzzing step (scripts/api-fuzz): every service of services/ started as a process against the running
// engines, with databases and a Consul name of the run's own, then schemathesis (every check) against each one's
// OpenAPI document and against the gateway's merged one. Exits 1 when any run found a failure.
import { randomBytes } from 'node:crypto'
import { mkdirSync, readFileSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { type ConsulSettings, consulSettingsFromEnv } from '../consul-http.ts'
import { layoutFromEnv, repoRoot } from '../layout.ts'
import { createPaymentSimulator } from '../payment-simulator/index.ts'
import { errorText, stopPid, waitFor } from '../processes.ts'
import { testTimeScale } from '../test-time.ts'
import { registerInConsul } from './consul-registration.ts'
import { administratorCredentials, type FuzzCredentials } from './credentials.ts'
import { createRunDatabase, type RunDatabase } from './databases.ts'
import { runRedisDatabase, runSettings, withRedisDatabase } from './run-settings.ts'
import {
  type FuzzBudget,
  type FuzzOutcome,
  outputToShow,
  runSchemathesis,
  schemathesisArguments,
} from './schemathesis.ts'
import { discoverServices, type FuzzedService, identityProvider } from './services.ts'
import { type SpawnedService, spawnService } from './spawned-service.ts'
import { type FuzzTarget, fuzzTargets } from './targets.ts'

const say = (message: string) => process.stderr.write(`[api-fuzz] ${message}\n`)

function requireEnv(name: string): string {
  const value = process.env[name]
  if (!value)
    throw new Error(`${name} is not set: run through scripts/api-fuzz (it sets up the engines and tools)`)
  return value
}

const positiveInteger = (name: string, fallback: number): number => {
  const raw = process.env[name]
  if (raw === undefined || raw === '') return fallback
  const value = Number(raw)
  if (!Number.isInteger(value) || value < 1)
    throw new Error(`${name} must be a positive integer (got '${raw}')`)
  return value
}

/** The paths of a document that a service serves itself (not the chassis' operational ones). */
async function ownPaths(baseUrl: string): Promise<string[]> {
  const response = await fetch(`${baseUrl}/docs/json`, { signal: AbortSignal.timeout(5000) })
  const document = (await response.json()) as { paths?: Record<string, unknown> }
  return Object.keys(document.paths ?? {}).filter(
    (path) => !/^\/(health|healthz|metrics|docs)(\/|$)/.test(path),
  )
}

async function main(): Promise<number> {
  const started = Date.now()
  const executable = requireEnv('SCHEMATHESIS')
  const serverUrl = requireEnv('DATABASE_URL')
  const redisUrl = withRedisDatabase(requireEnv('REDIS_URL'), runRedisDatabase)
  const consul: ConsulSettings = consulSettingsFromEnv(process.env, requireEnv('CONSUL_HTTP_ADDR'))
  const budget: FuzzBudget = {
    maxExamples: positiveInteger('MERIDIAN_FUZZ_MAX_EXAMPLES', 30),
    // a guard against a hang, not a verdict on speed: the gateway's 76 operations took 80-126 s beside the
    // end-to-end suite on 2 cores, and once went past the 150 s this was before; a slower machine scales it
    // (MERIDIAN_TEST_TIME_SCALE) as it scales the tests' waits
    timeoutMs: positiveInteger('MERIDIAN_FUZZ_TIMEOUT_SECONDS', 600) * 1000 * testTimeScale(),
    ...(process.env.MERIDIAN_FUZZ_SEED ? { seed: process.env.MERIDIAN_FUZZ_SEED } : {}),
  }
  const parallel = positiveInteger('MERIDIAN_FUZZ_PARALLEL', 2)

  const only = process.argv.slice(2)
  const services = discoverServices(join(repoRoot, 'services')).filter(
    (service) => only.length === 0 || only.includes(service.name),
  )
  if (services.length === 0) {
    say('no service to fuzz (services/*/src/main.ts)')
    return 0
  }

  const runId = `${Date.now().toString(36)}${randomBytes(2).toString('hex')}`
  // the services' shared credential of this run: schemathesis sends it to the /internal/ operations, as a service would
  const serviceCredential = randomBytes(32).toString('base64url')
  const fuzzDir = layoutFromEnv().componentDir('api-fuzz')
  const runDir = join(fuzzDir, runId)
  mkdirSync(runDir, { recursive: true })

  // what was started, undone in reverse order at the end whatever happened
  const undo: { label: string; run: () => Promise<void> }[] = []
  let cleaning: Promise<void> | undefined
  const cleanUp = () => {
    cleaning ??= (async () => {
      for (const step of undo.reverse()) {
        try {
          await step.run()
        } catch (error) {
          say(`${step.label}: ${errorText(error)}`)
        }
      }
    })()
    return cleaning
  }
  let interrupted = false
  const interrupt = (signal: NodeJS.Signals) => {
    interrupted = true
    say(`${signal}: stopping what the run started`)
    void cleanUp().then(() => process.exit(130))
  }
  process.once('SIGINT', interrupt)
  process.once('SIGTERM', interrupt)

  let failed = false
  try {
    // the payment provider, the one outside system, as its simulator: payment's calls reach it, never the internet
    const provider = await createPaymentSimulator({ port: 0 })
    undo.push({ label: 'stop the payment-provider simulator', run: () => provider.close() })
    const running = new Map<string, { process: SpawnedService; database?: RunDatabase }>()
    /** service name -> the run's Consul name for it */
    const consulNames = new Map<string, string>()
    const baseEnv = (service: FuzzedService, database?: RunDatabase): NodeJS.ProcessEnv => {
      const auth = running.get(identityProvider)
      return {
        ...process.env,
        ...runSettings,
        SERVICE_CREDENTIAL: serviceCredential,
        REDIS_URL: redisUrl,
        ...(database ? { DATABASE_URL: database.url } : {}),
        // tokens are verified with the run's auth keys
        ...(auth ? { AUTH_JWKS_URL: `${auth.process.baseUrl}/.well-known/jwks.json` } : {}),
        STRIPE_API_BASE: provider.url,
        // a service finds the others under the run's Consul names (<NAME>_SERVICE_NAME, e.g. order's inventory)
        ...Object.fromEntries(
          [...consulNames].map(([name, consulName]) => [
            `${name.toUpperCase().replaceAll('-', '_')}_SERVICE_NAME`,
            consulName,
          ]),
        ),
        ...(service.isGateway
          ? {
              GATEWAY_SERVICE_NAMES: [...consulNames]
                .map(([name, consulName]) => `${name}=${consulName}`)
                .join(','),
            }
          : {}),
      }
    }

    for (const service of services) {
      let database: RunDatabase | undefined
      if (service.hasDatabase) {
        const created = await createRunDatabase(
          serverUrl,
          `api_fuzz_${service.name.replaceAll('-', '_')}_${runId}`,
        )
        database = created
        undo.push({ label: `drop database ${created.name}`, run: () => created.drop() })
      }
      const instance = await spawnService(service, {
        env: baseEnv(service, database),
        logFile: join(runDir, `${service.name}.log`),
      })
      undo.push({ label: `stop ${service.name} (pid ${instance.pid})`, run: () => instance.stop() })
      running.set(service.name, { process: instance, ...(database ? { database } : {}) })
      say(
        `${service.name}: pid ${instance.pid} on ${instance.baseUrl}${database ? `, database ${database.name}` : ''}`,
      )
      if (!service.isGateway) {
        const registration = await registerInConsul(consul, {
          consulName: `${service.name}-api-fuzz-${runId}`,
          port: instance.port,
        })
        consulNames.set(service.name, registration.consulName)
        undo.push({ label: `deregister ${registration.consulName}`, run: () => registration.deregister() })
      }
    }

    // the gateway merges the documents of the instances it has found: wait until each service's paths are there
    const gateway = services.find((service) => service.isGateway)
    const gatewayProcess = gateway ? running.get(gateway.name)?.process : undefined
    const routedPaths: string[] = []
    if (gatewayProcess) {
      for (const [name, { process: service }] of running) {
        if (name === gatewayProcess.name) continue
        const paths = await ownPaths(service.baseUrl)
        routedPaths.push(...paths)
        if (paths.length === 0) continue
        await waitFor(
          `the gateway's document with ${name}'s paths`,
          async () => {
            const merged = await ownPaths(gatewayProcess.baseUrl)
            if (!paths.some((path) => merged.includes(path))) throw new Error(`no path of ${name} yet`)
          },
          { timeoutMs: 30_000, intervalMs: 500 },
        )
      }
    }

    const auth = running.get(identityProvider)
    if (!auth) say(`no ${identityProvider} service: operations that need credentials are fuzzed without them`)
    const targets = fuzzTargets({
      services: [...running.values()].map(({ process: service }) => ({
        name: service.name,
        baseUrl: service.baseUrl,
        isGateway: service.name === gateway?.name,
      })),
      routedPaths: [...new Set(routedPaths)],
    })

    // two targets at a time (MERIDIAN_FUZZ_PARALLEL): schemathesis and the service it fuzzes keep about a core
    // busy between them; each run has an administrator, a report and an examples database of its own. The gateway's
    // runs, the longest, go first (fuzzTargets' order).
    const outcomes: { target: FuzzTarget; outcome: FuzzOutcome }[] = []
    const queue = [...targets]
    const fuzzNext = async (): Promise<void> => {
      for (let target = queue.shift(); target && !interrupted; target = queue.shift()) await fuzz(target)
    }
    const fuzz = async (target: FuzzTarget): Promise<void> => {
      // a new administrator for every run: the one before may have been demoted or deleted by its own fuzzing
      const credentials: FuzzCredentials =
        auth?.database !== undefined
          ? await administratorCredentials({
              repoRoot,
              authDatabaseUrl: auth.database.url,
              redisUrl,
              authUrl: auth.process.baseUrl,
              label: target.name,
            })
          : {
              MERIDIAN_FUZZ_BEARER_TOKEN: 'no-credential',
              MERIDIAN_FUZZ_API_KEY: 'no-credential',
              MERIDIAN_FUZZ_SESSION: 'no-credential',
            }
      const reportFile = join(runDir, `${target.name}-report.json`)
      const logFile = join(runDir, `${target.name}-schemathesis.log`)
      const part = target.narrowing.includes('--include-path-regex') ? ', its routes, coverage phase' : ''
      say(
        `${target.name}: schemathesis on ${target.baseUrl}/docs/json (--max-examples ${budget.maxExamples}${part})`,
      )
      const outcome = await runSchemathesis({
        executable,
        args: schemathesisArguments(
          `${target.baseUrl}/docs/json`,
          budget,
          { reportFile, examplesDatabase: join(fuzzDir, `examples-${target.name}.db`) },
          target.narrowing,
        ),
        env: { ...process.env, ...credentials, MERIDIAN_FUZZ_SERVICE_CREDENTIAL: serviceCredential },
        cwd: runDir,
        logFile,
        reportFile,
        timeoutMs: budget.timeoutMs,
        onStart: (pid) =>
          undo.push({ label: `stop schemathesis (pid ${pid})`, run: () => stopPid(pid, 'SIGTERM', 5000) }),
      })
      if (interrupted) return
      const targetFailed = outcome.timedOut || outcome.exitCode !== 0
      failed ||= targetFailed
      process.stdout.write(`${outputToShow(readFileSync(logFile, 'utf8'), targetFailed)}\n`)
      if (outcome.timedOut) say(`${target.name}: schemathesis stopped after ${budget.timeoutMs / 1000} s`)
      if (targetFailed) {
        const log = running.get(target.service)?.process.logFile
        say(`${target.name}: FAILED; the service's log: ${log}; schemathesis' output: ${logFile}`)
      }
      outcomes.push({ target, outcome })
    }
    await Promise.all(Array.from({ length: parallel }, () => fuzzNext()))
    outcomes.sort((a, b) => targets.indexOf(a.target) - targets.indexOf(b.target))

    for (const { target, outcome } of outcomes) {
      const report = outcome.report
      const result = outcome.timedOut
        ? 'stopped (time budget)'
        : outcome.exitCode === 0
          ? 'passed'
          : `FAILED (${report ? `${report.failures} failures, ${report.errors} errors` : `exit ${outcome.exitCode}`})`
      say(
        `${target.name}: ${result}` +
          (report
            ? `: ${report.operations.tested} operations, ${report.testCases.generated} test cases, every check, ` +
              `${report.seconds.toFixed(0)} s, seed ${report.seed}`
            : ''),
      )
      // not a failure (a refused credential is documented), but what the credentials did not reach
      if (report && report.missingAuth.length > 0) {
        say(`${target.name}: only 401/403 from ${report.missingAuth.join(', ')}`)
      }
    }
  } catch (error) {
    failed = true
    // an interrupted run fails in whatever it was doing: that is no finding
    if (!interrupted) say(`FAILED: ${errorText(error)}`)
  } finally {
    await cleanUp()
  }
  // the logs of a failed run stay for reading; a passed run leaves nothing but the examples database
  if (failed) say(`logs of this run: ${runDir}`)
  else rmSync(runDir, { recursive: true, force: true })
  say(`${failed ? 'failed' : 'passed'} in ${((Date.now() - started) / 1000).toFixed(0)} s`)
  return failed ? 1 : 0
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    say(`FAILED: ${errorText(error)}`)
    process.exit(1)
  },
)
