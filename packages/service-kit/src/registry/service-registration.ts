// Registers a service instance in Consul with a TTL heartbeat (passed only while ready) and an HTTP readiness check.
import { randomBytes } from 'node:crypto'
import {
  type ConsulClient,
  type ConsulClientOptions,
  ConsulRequestError,
  consulClientFrom,
} from './consul-client.ts'
import { consulDurationToMs } from './consul-duration.ts'
import type { RegistryLogger } from './registry-logger.ts'

/** What the instance says about itself in the registry entry's meta (spec: registry entry). */
export interface ServiceMeta {
  version: string
  region: string
  az: string
  /** default 'http' */
  protocol?: string
  /** relative share of traffic, a non-negative integer; default 1 (sent as a string, as Consul meta requires) */
  weight?: number
}

/** Durations are Consul duration strings ('30s', '1m'); the heartbeat is in ms. */
export interface RegistrationTiming {
  /** TTL check window: without a pass within it the instance turns critical */
  ttl: string
  heartbeatIntervalMs: number
  /** path of the HTTP readiness check on the instance */
  readinessPath: string
  httpCheckInterval: string
  httpCheckTimeout: string
  /** consecutive failed HTTP probes before the check turns critical */
  failuresBeforeCritical: number
  /** how long a critical instance stays registered before Consul removes it */
  deregisterCriticalServiceAfter: string
}

/** The spec's registry check defaults (Limits). */
export const registrationDefaults: Readonly<RegistrationTiming> = Object.freeze({
  ttl: '30s',
  heartbeatIntervalMs: 10_000,
  readinessPath: '/health/ready',
  httpCheckInterval: '10s',
  httpCheckTimeout: '2s',
  failuresBeforeCritical: 3,
  deregisterCriticalServiceAfter: '60s',
})

export interface RegisterServiceOptions {
  /** a shared client, or the settings of one owned (and closed) by this registration */
  consul: ConsulClient | ConsulClientOptions
  /** logical service name, e.g. 'payment' */
  name: string
  /** where other processes (and the Consul agent's HTTP check) reach this instance */
  address: string
  port: number
  tags?: string[]
  meta: ServiceMeta
  /** whether the instance can take traffic now; the TTL check passes only while this resolves true */
  readiness: () => Promise<boolean>
  logger: RegistryLogger
  timing?: Partial<RegistrationTiming>
}

export interface ServiceRegistration {
  /** the unique instance id */
  readonly id: string
  readonly checkIds: { readonly ttl: string; readonly http: string }
  /** stops the heartbeat and removes the instance from Consul; calling it again does nothing more */
  deregister(): Promise<void>
}

/** Consul's registration body (PUT /v1/agent/service/register). */
export interface ConsulServiceDefinition {
  ID: string
  Name: string
  Address: string
  Port: number
  Tags: string[]
  Meta: Record<string, string>
  Checks: Record<string, string | number>[]
}

export function instanceId(name: string, address: string, port: number): string {
  const host = address.replace(/[^A-Za-z0-9.-]+/g, '-')
  return `${name}-${host}-${port}-${randomBytes(4).toString('hex')}`
}

/** The registration body: the instance, its meta, a TTL check and an HTTP readiness check. */
export function serviceDefinition(
  id: string,
  options: Pick<RegisterServiceOptions, 'name' | 'address' | 'port' | 'tags' | 'meta'>,
  timing: RegistrationTiming,
): ConsulServiceDefinition {
  const weight = options.meta.weight ?? 1
  if (!Number.isInteger(weight) || weight < 0) {
    throw new TypeError(`meta.weight must be a non-negative integer, got ${weight}`)
  }
  const host = options.address.includes(':') ? `[${options.address}]` : options.address
  return {
    ID: id,
    Name: options.name,
    Address: options.address,
    Port: options.port,
    Tags: options.tags ?? [],
    Meta: {
      version: options.meta.version,
      region: options.meta.region,
      az: options.meta.az,
      protocol: options.meta.protocol ?? 'http',
      weight: String(weight),
    },
    Checks: [
      {
        CheckID: `service:${id}:ttl`,
        Name: `${options.name} heartbeat`,
        Notes: 'passed by the instance while it is ready',
        TTL: timing.ttl,
        Status: 'critical',
        DeregisterCriticalServiceAfter: timing.deregisterCriticalServiceAfter,
      },
      {
        CheckID: `service:${id}:http`,
        Name: `${options.name} readiness`,
        HTTP: `http://${host}:${options.port}${timing.readinessPath}`,
        Method: 'GET',
        Interval: timing.httpCheckInterval,
        Timeout: timing.httpCheckTimeout,
        // Consul's first round of an HTTP check comes at a random moment within its interval (10 s): until then an
        // instance would count as down, and a rolling restart that stops the next instance as soon as this one is
        // ready would leave none. The heartbeat's TTL check, passed only while readiness holds, is what gates it.
        Status: 'passing',
        FailuresBeforeCritical: timing.failuresBeforeCritical,
        DeregisterCriticalServiceAfter: timing.deregisterCriticalServiceAfter,
      },
    ],
  }
}

function validateTiming(timing: RegistrationTiming): void {
  const ttlMs = consulDurationToMs(timing.ttl)
  for (const duration of [
    timing.httpCheckInterval,
    timing.httpCheckTimeout,
    timing.deregisterCriticalServiceAfter,
  ]) {
    consulDurationToMs(duration)
  }
  if (!(timing.heartbeatIntervalMs > 0 && timing.heartbeatIntervalMs < ttlMs)) {
    throw new TypeError(
      `heartbeatIntervalMs (${timing.heartbeatIntervalMs}) must be positive and shorter than the TTL (${timing.ttl})`,
    )
  }
}

/**
 * Registers the instance, then keeps its TTL check in step with readiness(): passed while it resolves true, marked
 * failing (with a note) otherwise. A heartbeat that Consul refuses is logged at warn and tried again on the next
 * beat; when Consul no longer knows the instance (agent restarted, or reaped after being critical), it is
 * registered again.
 */
export async function registerService(options: RegisterServiceOptions): Promise<ServiceRegistration> {
  const timing: RegistrationTiming = { ...registrationDefaults, ...options.timing }
  validateTiming(timing)
  const { logger, readiness } = options
  const id = instanceId(options.name, options.address, options.port)
  const definition = serviceDefinition(id, options, timing)
  const checkIds = { ttl: `service:${id}:ttl`, http: `service:${id}:http` }
  const { client: consul, owned } = consulClientFrom(options.consul)
  const log = { registeredService: options.name, serviceId: id }

  try {
    await consul.put('/v1/agent/service/register', { body: definition })
  } catch (error) {
    if (owned) await consul.close()
    throw error
  }
  logger.info({ ...log, address: options.address, port: options.port }, 'registered in Consul')

  let stopped = false
  let timer: NodeJS.Timeout | undefined
  let wasReady: boolean | undefined
  let mustRegisterAgain = false
  // the heartbeat's Consul call in flight, so that deregistering is never overtaken by a late re-registration
  let heartbeatUpdate: Promise<void> | undefined

  async function beat(): Promise<void> {
    let ready = false
    let note: string
    try {
      ready = (await readiness()) === true
      note = ready ? 'ready' : 'not ready: readiness check returned false'
    } catch (error) {
      note = `not ready: readiness check threw: ${error instanceof Error ? error.message : String(error)}`
    }
    if (stopped) return
    if (ready !== wasReady) {
      logger.info(
        { ...log, ready },
        ready ? 'instance is ready' : 'instance is not ready; TTL check marked failing',
      )
      wasReady = ready
    }
    heartbeatUpdate = updateConsul(ready, note)
    await heartbeatUpdate
    heartbeatUpdate = undefined
  }

  async function updateConsul(ready: boolean, note: string): Promise<void> {
    try {
      if (mustRegisterAgain) {
        await consul.put('/v1/agent/service/register', { body: definition })
        mustRegisterAgain = false
        logger.info(log, 'registered in Consul again')
      }
      const outcome = ready ? 'pass' : 'fail'
      await consul.put(`/v1/agent/check/${outcome}/${encodeURIComponent(checkIds.ttl)}`, { query: { note } })
    } catch (error) {
      if (stopped) return
      if (error instanceof ConsulRequestError && error.statusCode === 404) mustRegisterAgain = true
      logger.warn({ ...log, err: error }, 'Consul heartbeat failed; trying again on the next beat')
    }
  }

  function scheduleNextBeat(): void {
    if (stopped) return
    timer = setTimeout(() => {
      void beat().finally(scheduleNextBeat)
    }, timing.heartbeatIntervalMs)
    // the heartbeat alone never keeps the process alive
    timer.unref()
  }

  await beat()
  scheduleNextBeat()

  let deregistering: Promise<void> | undefined
  async function removeFromConsul(): Promise<void> {
    stopped = true
    clearTimeout(timer)
    await heartbeatUpdate
    try {
      await consul.put(`/v1/agent/service/deregister/${encodeURIComponent(id)}`)
      logger.info(log, 'deregistered from Consul')
    } catch (error) {
      // already gone (reaped after being critical, or removed by an operator): that is the goal
      if (!(error instanceof ConsulRequestError && error.statusCode === 404)) throw error
    }
    if (owned) await consul.close()
  }

  return {
    id,
    checkIds,
    deregister() {
      deregistering ??= removeFromConsul().catch((error: unknown) => {
        deregistering = undefined // a later call may try again
        throw error
      })
      return deregistering
    },
  }
}
