// Starts the whole system once for the suite (every service as a process, its own databases, Kafka namespace and
// Consul names; the gateway on E2E_GATEWAY_PORT, 8080 by default) and stops it at the end.
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import {
  ensureSecureInfra,
  ensureTraceStore,
  freePort,
  holdTraceStore,
  infraEnv,
  nativeJaegerUiUrl,
  stopTraceStore,
} from '@meridian/infra'
import { demoSignInHint } from '@meridian/infra/demo'
import { downSecureEngines, freeSecurePorts, type SecureMachine } from '@meridian/infra/secure'
import {
  startSystem,
  systemFormFromEnv,
  systemRedisDatabase,
  withoutEngineCredentials,
  withRedisDatabase,
} from '@meridian/infra/system'
import { scaledMs } from '@meridian/testkit'
import type { TestProject } from 'vitest/node'
import { buildConsole, consoleDist } from './console-build.ts'
import type { E2eSystem } from './system-context.ts'

/**
 * The order saga's timings, shortened so that a step that gets no answer (the hanging card) is retried and given up
 * within a test's patience: 3 attempts of 4 s, compensations retried after 1 s, the sweep every 250 ms.
 */
export const sagaSettings = {
  SAGA_STEP_TIMEOUT_MS: '4000',
  SAGA_STEP_ATTEMPTS: '3',
  SAGA_COMPENSATION_BACKOFF_MS: '1000',
  SAGA_SWEEP_INTERVAL_MS: '250',
}

/**
 * A return's steps (its restock, its refund), shortened so that a refund the provider declines is asked again and
 * escalated within a test's patience: waits of 1, 2, 4 and 8 s (doubling), 4 attempts — a declined refund is escalated
 * about 7 s after the first, a step without answer about 15 s. And the carrier (`name=key`) whose key may mark
 * received the returns that name it (test/returns.test.ts sends it through the gateway).
 */
export const returnSettings = {
  RETURN_STEP_TIMEOUT_MS: '1000',
  RETURN_STEP_ATTEMPTS: '4',
  RETURNS_CARRIER_KEYS: 'e2e-post=e2e-carrier-returns-key-0001',
}

/** An exchange's goods may take 5 s to come back before operators are told (test/exchanges.test.ts waits it out). */
export const exchangeSettings = { EXCHANGE_RECEIPT_WAIT_MS: String(scaledMs(5000)) }

/**
 * The simulator's hanging card answers (and charges) after 20 s (times MERIDIAN_TEST_TIME_SCALE): past every deadline
 * of the saga above (it fails the order and compensates at about 12 s), so that only payment's charge reconciler can
 * find the late charge.
 */
export const simulatorSettings = { hangMs: scaledMs(20_000) }

/**
 * Payment's charge reconciler, quickened so that a late charge is refunded within a test's patience: a charge whose
 * outcome is unknown is asked again once it is 6 s old, every second.
 */
export const reconcileSettings = {
  PAYMENT_RECONCILE_INTERVAL_MS: '1000',
  PAYMENT_RECONCILE_AFTER_MS: '6000',
}

/**
 * 3-D Secure: the customer has 15 s (times MERIDIAN_TEST_TIME_SCALE) to authenticate a payment, so that one left
 * alone fails within a test's patience (test/three-d-secure.test.ts), and the provider's page sends the browser back
 * to the console on the run's gateway.
 */
export const authenticationSettings = (gatewayPort: number) => ({
  PAYMENT_AUTHENTICATION_TIMEOUT_MS: String(scaledMs(15_000)),
  PAYMENT_RETURN_URL: `http://127.0.0.1:${gatewayPort}/console/#/orders`,
})

/**
 * The realtime channel: every test client connects from 127.0.0.1, so the per-address limits (10 attempts a minute,
 * 5 at once; tested in the service's own suite) are lifted; a restart's notice is short.
 */
export const realtimeSettings = {
  REALTIME_CONNECTION_ATTEMPTS: '100000',
  REALTIME_MAX_CONNECTIONS_PER_ADDRESS: '100000',
  REALTIME_RESTART_NOTICE_MS: '500',
}

function portFromEnv(name: string, fallback: number): number {
  const raw = process.env[name]
  if (raw === undefined || raw === '') return fallback
  const port = Number(raw)
  if (!Number.isInteger(port) || port < 0 || port > 65535)
    throw new Error(`${name} must be a port (got '${raw}')`)
  return port
}

interface SecureEngines {
  machine: SecureMachine
  /** the environment without the shared engines' variables, with the administrator's of these */
  env: NodeJS.ProcessEnv
  stop(): Promise<void>
}

/**
 * MERIDIAN_E2E_SECURE=true: engines of the run's own with TLS and a credential per service, as `scripts/infra up
 * --secure` runs them, on free ports and in a state folder of their own beside the shared plaintext engines (which
 * stay as they are): each service of the system is given its own role, SCRAM user, ACL user and Consul token.
 */
async function startSecureEngines(): Promise<SecureEngines> {
  const dir = mkdtempSync(join(tmpdir(), 'meridian-e2e-secure-'))
  // the shared engines' credentials are not these engines' (their addresses are replaced below)
  const env: NodeJS.ProcessEnv = { ...withoutEngineCredentials(process.env), MERIDIAN_SECURE_DIR: dir }
  const stop = async () => {
    await downSecureEngines(dir)
    rmSync(dir, { recursive: true, force: true })
  }
  try {
    const machine = await ensureSecureInfra({
      env,
      // the system creates its namespace's topics: the declared ones would go unused
      declaredTopics: false,
      ports: await freeSecurePorts(),
    })
    const { postgres: pg, kafka, consul, redis: redisEngine } = machine.engines
    return {
      machine,
      env: { ...env, ...pg.adminEnv(), ...kafka.adminEnv(), ...consul.adminEnv(), ...redisEngine.adminEnv() },
      stop,
    }
  } catch (error) {
    await stop()
    throw error
  }
}

/** The variables of `env` whose names match. */
const variablesOf = (env: NodeJS.ProcessEnv, pattern: RegExp): Record<string, string> =>
  Object.fromEntries(
    Object.entries(env).filter(
      (entry): entry is [string, string] => pattern.test(entry[0]) && entry[1] !== undefined,
    ),
  )

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const startedAt = Date.now()
  // the console the gateway serves at /console/ (test/console.test.ts drives it in Chromium)
  buildConsole()
  // a port of its own (a developer's simulator on 3099 does not stop the suite), known before the start: the
  // console's browser tokenizes its cards there
  const simulatorPort = portFromEnv('E2E_SIMULATOR_PORT', 0) || (await freePort())
  // MERIDIAN_SYSTEM_BUILD=production or images (pnpm e2e:production, e2e:images): the services' builds under
  // NODE_ENV=production, as processes or from their images. The
  // gateway serves its build's own console; a production gateway refuses the demo's sign-in hint, and production auth
  // the console's development address on 8080 (it is among the public defaults), so the gateway takes a free port.
  const production = systemFormFromEnv(process.env) !== 'development'
  const gatewayPort = portFromEnv('E2E_GATEWAY_PORT', production ? 0 : 8080) || (await freePort())
  // every service exports its traces to the development trace store, as under ./scripts/dev (test/tracing.test.ts
  // reads them back through its query API); one that ran before the suite (a developer's) runs after it too
  // (held for the suite: tests elsewhere that use the same Jaeger take turns with it)
  const letGoOfTraces = await holdTraceStore()
  const traceStoreBefore = await infraEnv()
    .then((lines) => lines.includes('OTEL_EXPORTER_OTLP_ENDPOINT='))
    .catch((error: unknown) => {
      letGoOfTraces()
      throw error
    })
  const stopTraces = async () => {
    try {
      if (!traceStoreBefore) await stopTraceStore()
    } finally {
      letGoOfTraces()
    }
  }
  const otlpEndpoint = await ensureTraceStore().catch(async (error: unknown) => {
    letGoOfTraces()
    throw error
  })
  const secure =
    process.env.MERIDIAN_E2E_SECURE === 'true'
      ? await startSecureEngines().catch(async (error: unknown) => {
          await stopTraces()
          throw error
        })
      : undefined
  const baseEnv = secure?.env ?? process.env
  const system = await startSystem({
    prefix: 'e2e',
    baseEnv,
    ...(secure ? { secureEngines: secure.machine } : {}),
    gatewayPort,
    simulatorPort,
    simulator: simulatorSettings,
    env: {
      // a finished span leaves its service within 200 ms instead of the default 5 s: the tests that read traces back
      // (tracing, readme) wait for what they look for, not for the batch's clock
      '*': { OTEL_EXPORTER_OTLP_ENDPOINT: otlpEndpoint, OTEL_BSP_SCHEDULE_DELAY: '200' },
      order: { ...sagaSettings, ...returnSettings, ...exchangeSettings },
      payment: { ...reconcileSettings, ...authenticationSettings(gatewayPort) },
      // the console's page is on the gateway's origin: the channel and GraphQL's subscriptions accept it
      'realtime-gateway': {
        ...realtimeSettings,
        REALTIME_ALLOWED_ORIGINS: `http://127.0.0.1:${gatewayPort}`,
      },
      content: { GRAPHQL_ALLOWED_ORIGINS: `http://127.0.0.1:${gatewayPort}` },
      // the console signs in with the provider and comes back to itself on the gateway; a password reset mail and an
      // address verification mail link the console's pages on the run's gateway (test/console-account.test.ts opens
      // them; a production run sets the same, productionSettings)
      auth: {
        OIDC_SPA_REDIRECT_URIS: `http://127.0.0.1:${gatewayPort}/console/`,
        PASSWORD_RESET_URL: `http://127.0.0.1:${gatewayPort}/console/#/reset-password`,
        EMAIL_VERIFICATION_URL: `http://127.0.0.1:${gatewayPort}/console/#/verify-email`,
      },
      gateway: {
        CONSOLE_PAYMENT_PROVIDER_URL: `http://127.0.0.1:${simulatorPort}`,
        ...(production
          ? {}
          : {
              CONSOLE_DIR: consoleDist,
              // what ./scripts/dev --demo shows on the sign-in page (test/console-first-visit.test.ts reads it)
              CONSOLE_SIGN_IN_HINT: demoSignInHint,
            }),
      },
    },
    // two instances of the channel (a client of the one that restarts reconnects to the other) and of content (a
    // post made on one reaches the subscribers of both)
    replicas: { 'realtime-gateway': 2, content: 2 },
  }).catch(async (error: unknown) => {
    await secure?.stop()
    await stopTraces()
    throw error
  })
  process.stderr.write(
    `[e2e] system ${system.runId} (${system.form}${secure ? ', on secure engines of its own' : ''}) up in ${((Date.now() - startedAt) / 1000).toFixed(1)} s: gateway ${system.gatewayUrl}, ` +
      `simulator ${system.simulatorUrl}, logs ${system.runDir}\n`,
  )
  if (!system.admin) {
    await system.close()
    await secure?.stop()
    await stopTraces()
    throw new Error('the system has no auth service, so no administrator: the end-to-end tests need one')
  }
  const provided: E2eSystem = {
    runId: system.runId,
    runDir: system.runDir,
    gatewayUrl: system.gatewayUrl,
    simulatorUrl: system.simulatorUrl,
    admin: system.admin,
    kafka: {
      brokers: baseEnv.KAFKA_BROKERS ?? '',
      namespace: system.kafkaNamespace,
      env: variablesOf(baseEnv, /^KAFKA_(BROKERS|TLS.*|SASL_.*)$/),
    },
    redisEnv: {
      ...variablesOf(baseEnv, /^REDIS_TLS_CA$/),
      REDIS_URL: withRedisDatabase(baseEnv.REDIS_URL ?? '', systemRedisDatabase),
    },
    secureEngines: secure !== undefined,
    traces: { otlpEndpoint, queryUrl: process.env.JAEGER_QUERY_URL || nativeJaegerUiUrl },
    services: Object.fromEntries(
      Object.entries(system.services).map(([name, service]) => [
        name,
        {
          ...(service.pid ? { pid: service.pid } : {}),
          port: service.port,
          baseUrl: service.baseUrl,
          logFile: service.logFile,
          ...(service.databaseUrl ? { databaseUrl: service.databaseUrl } : {}),
        },
      ]),
    ),
  }
  project.provide('system', provided)
  return async () => {
    await system.close()
    await secure?.stop()
    await stopTraces()
  }
}
