// Starting and stopping a service process: listen, register in Consul, and on a signal drain, deregister and close.
import type { AddressInfo } from 'node:net'
import { hostname } from 'node:os'
import { setTimeout as sleep } from 'node:timers/promises'
import closeWithGrace from 'close-with-grace'
import type { ServiceApp } from './app.ts'
import { ConfigError, type ServiceEnv } from './config.ts'
import { consulOptionsFromEnv } from './registry/consul-env.ts'
import { followRuntimeSettings } from './registry/runtime-settings.ts'
import {
  type RegistrationTiming,
  registerService,
  type ServiceRegistration,
} from './registry/service-registration.ts'
import type { ServiceClient } from './service-client.ts'
import { activeTracing } from './tracing/active-tracing.ts'
import { currentWork, workLogFields } from './work-context.ts'

export type { ServiceClient }

export type ServiceRunConfig = Pick<
  ServiceEnv,
  | 'HOST'
  | 'PORT'
  | 'SERVICE_HOST'
  | 'CONSUL_HTTP_ADDR'
  | 'CONSUL_HTTP_TOKEN'
  | 'CONSUL_CACERT'
  | 'CONSUL_CLIENT_CERT'
  | 'CONSUL_CLIENT_KEY'
  | 'CONSUL_REGISTER'
  | 'CONSUL_SERVICE_NAME'
  | 'SERVICE_VERSION'
  | 'SERVICE_REGION'
  | 'SERVICE_AZ'
  | 'SERVICE_WEIGHT'
> &
  Partial<Pick<ServiceEnv, 'DRAIN_PAUSE_MS'>>

async function closeClient(client: ServiceClient): Promise<void> {
  if ('end' in client) await client.end({ timeout: 5 })
  else if ('disconnect' in client) await client.disconnect()
  else await client.stop()
}

export interface StartServiceOptions {
  app: ServiceApp
  config: ServiceRunConfig
  /** closed in this order after the app has closed; one that fails is logged and the others still close */
  clients?: readonly ServiceClient[]
  tags?: string[]
  /** shorter checks for tests; the defaults are the spec's */
  registrationTiming?: Partial<RegistrationTiming>
}

/** How long a stopping service waits for its last spans to reach the collector (within the 30 s of the drain). */
const tracingFlushMs = 5000

export interface RunningService {
  port: number
  registration?: ServiceRegistration
  /** readiness goes not_ready, the instance leaves Consul, in-flight requests finish, then everything closes */
  stop(): Promise<void>
}

export async function startService({
  app,
  config,
  clients = [],
  tags = [],
  registrationTiming,
}: StartServiceOptions): Promise<RunningService> {
  await app.listen({ host: config.HOST, port: config.PORT })
  const { port } = app.server.address() as AddressInfo
  let registration: ServiceRegistration | undefined
  if (config.CONSUL_REGISTER) {
    registration = await registerService({
      consul: consulOptionsFromEnv(config),
      name: config.CONSUL_SERVICE_NAME ?? app.service.name,
      address: config.SERVICE_HOST,
      port,
      tags: [...tags, `version-${config.SERVICE_VERSION}`],
      meta: {
        version: config.SERVICE_VERSION,
        region: config.SERVICE_REGION,
        az: config.SERVICE_AZ,
        protocol: 'http',
        weight: config.SERVICE_WEIGHT,
      },
      // a heartbeat passes only while this instance's own readiness is ok
      readiness: async () => !app.health.draining && (await app.health.run()).healthy,
      logger: app.log,
      ...(registrationTiming ? { timing: registrationTiming } : {}),
    })
  }

  // spans name the instance as Consul knows it, so that a trace and the registry agree on which one served it
  activeTracing()?.registered(registration?.id ?? `${hostname()}-${process.pid}`)

  // an instance in Consul also follows its runtime settings there (maintenance, log level), under the name it is
  // registered by: a system run beside another on one Consul (its own CONSUL_SERVICE_NAME) has switches of its own
  const settings = config.CONSUL_REGISTER
    ? followRuntimeSettings({
        consul: consulOptionsFromEnv(config),
        service: config.CONSUL_SERVICE_NAME ?? app.service.name,
        logger: app.log,
        apply: (current) => app.runtime.apply(current),
      })
    : undefined
  await settings?.ready()

  let stopping: Promise<void> | undefined
  return {
    port,
    ...(registration ? { registration } : {}),
    stop() {
      stopping ??= (async () => {
        app.health.draining = true
        await registration?.deregister()
        await settings?.close()
        // still serving, not ready and out of Consul, until those who route here have noticed
        if (config.DRAIN_PAUSE_MS) await sleep(config.DRAIN_PAUSE_MS)
        try {
          await app.close()
        } finally {
          for (const client of clients) {
            await closeClient(client).catch((err: unknown) =>
              app.log.error({ err }, 'closing a client failed'),
            )
          }
          // the spans of the drain itself (last requests, the relay's last batch) go out before the process ends
          await activeTracing()?.flush(tracingFlushMs)
        }
      })()
      return stopping
    },
  }
}

/**
 * For main.ts: installs the signal handling, then starts the service. On SIGINT/SIGTERM (or a fatal error) it drains
 * and closes; if that takes longer than the spec's 30 s, the process is forced to exit. The handling is in place
 * before the service listens: a SIGTERM in the moment after it listens (a deployment stopping a pod that just came up)
 * drains it like any other, where the default action used to end the process undrained. A signal during the start
 * waits for the start, then drains; when the start fails, the handling is removed and runMain reports the failure.
 */
export async function runService(
  options: StartServiceOptions & { shutdownDelayMs?: number },
): Promise<RunningService> {
  const { app } = options
  let starting: Promise<RunningService> | undefined
  const grace = closeWithGrace(
    { delay: options.shutdownDelayMs ?? 30_000, logger: app.log },
    async ({ signal, err }) => {
      // read before anything is awaited: close-with-grace calls this from the error's own handler, where the work
      // that threw or rejected is still the current one
      if (err) app.log.error({ err, ...workLogFields(currentWork()) }, 'fatal error; shutting down')
      else app.log.info({ signal }, 'shutting down')
      const running = await starting?.catch(() => undefined)
      await running?.stop()
      await activeTracing()?.shutdown(tracingFlushMs)
    },
  )
  starting = startService(options)
  try {
    return await starting
  } catch (error) {
    grace.uninstall()
    throw error
  }
}

/** How long a process whose start failed may take to let go of its handles before it is made to exit. */
const failedStartExitDelayMs = 5000

/**
 * The last line of a service's main.ts: runs `main`; when it fails, says why on stderr (a configuration error by its
 * message alone, naming every bad variable; anything else with its stack) and sets the exit code, so that the
 * process ends once its handles are closed, or after a few seconds if a client it opened keeps reconnecting.
 */
export function runMain(serviceName: string, main: () => Promise<unknown>): void {
  main().catch((error: unknown) => {
    const reason =
      error instanceof ConfigError
        ? error.message
        : `failed to start: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`
    process.stderr.write(`${serviceName}: ${reason}\n`)
    process.exitCode = 1
    setTimeout(() => process.exit(1), failedStartExitDelayMs).unref()
  })
}
