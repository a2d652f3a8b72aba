// An upstream client of another service found in Consul: a healthy instance per call, round robin, and a 503 when
// Consul lists none (or does not answer in time). What every service that calls another one builds on.
import { setTimeout as sleep } from 'node:timers/promises'
import { AppError, ErrorCode, unavailableDependencyHeader } from '@meridian/contracts'
import type { ConsulClientOptions } from '../registry/consul-client.ts'
import type { RegistryLogger } from '../registry/registry-logger.ts'
import { createDiscovery } from '../registry/service-discovery.ts'
import type { ServiceClient } from '../service-client.ts'
import { createUpstreamClient, type UpstreamClient } from './upstream-client.ts'

export interface DiscoveredUpstreamOptions {
  consul: ConsulClientOptions
  /** the logical name errors carry (e.g. 'inventory') */
  name: string
  /** its name in Consul (CONSUL_SERVICE_NAME of that service; the logical name by default) */
  serviceName?: string
  logger: RegistryLogger
  /** how long a call waits for Consul's first list of instances, ms */
  discoveryWaitMs: number
  /** code of the upstream's 402 and 502 errors (see createUpstreamClient) */
  errorCode?: string
  /** deadline of a whole call, ms (default 5000) */
  timeoutMs?: number
  /** SERVICE_CREDENTIAL: sent on the calls to the upstream's /internal/ routes (createUpstreamClient) */
  serviceCredential: string
}

export interface DiscoveredUpstream {
  upstream: UpstreamClient
  /** for runService's clients: the upstream client's connections, then the discovery's blocking query */
  clients: ServiceClient[]
}

export function createDiscoveredUpstream(options: DiscoveredUpstreamOptions): DiscoveredUpstream {
  const discovery = createDiscovery({
    consul: options.consul,
    name: options.serviceName ?? options.name,
    logger: options.logger,
  })
  let turn = 0

  async function resolveOrigin(): Promise<string> {
    // the first list comes with the first Consul answer; a Consul that does not answer is an unavailable upstream
    const listed = await Promise.race([
      discovery.ready().then(() => true),
      sleep(options.discoveryWaitMs, false, { ref: false }),
    ])
    const instances = listed ? discovery.instances() : []
    if (instances.length === 0) {
      throw new AppError(503, ErrorCode.SERVICE_UNAVAILABLE, {
        message: `${options.name} is unavailable: no healthy instance`,
        retryAfter: 5,
        headers: { [unavailableDependencyHeader]: options.name },
      })
    }
    const instance = instances[turn++ % instances.length]!
    const host = instance.address.includes(':') ? `[${instance.address}]` : instance.address
    return `http://${host}:${instance.port}`
  }

  const upstream = createUpstreamClient({
    name: options.name,
    resolveOrigin,
    serviceCredential: options.serviceCredential,
    ...(options.errorCode ? { errorCode: options.errorCode } : {}),
    ...(options.timeoutMs ? { timeoutMs: options.timeoutMs } : {}),
  })
  return { upstream, clients: [{ stop: () => upstream.close() }, { stop: () => discovery.close() }] }
}
