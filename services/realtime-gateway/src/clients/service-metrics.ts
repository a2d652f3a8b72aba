// The HTTP traffic of the whole system for the live dashboard: every healthy instance of the watched services (found in
// Consul at each sample) scraped in parallel on its `/metrics?format=prometheus`, and the figures since the previous
// sample (domain/dashboard-metrics.ts). An instance that does not answer in time just does not count this round.
//
// Each client request is counted once: a request through the public gateway is answered by the gateway and again by
// the service it proxies it to, so when the gateway (the edge) has healthy instances, its figures alone are the
// clients' (every client request, its errors — 502/503/504 of a failed upstream among them — and the latency the
// client saw); the services' are left out. Without the edge (services reached directly), every service counts.
//
// Why Consul is asked at each sample rather than followed with blocking queries (createDiscovery): the dashboard only
// samples while someone watches it, and a service list that changes (new services in the catalogue) would need a
// discovery opened and closed per name; two small local calls per second cost less than that bookkeeping.
import { setTimeout as sleep } from 'node:timers/promises'
import { type ConsulClientOptions, createConsulClient, type RegistryLogger } from '@meridian/service-kit'
import {
  type InstanceTraffic,
  instanceTrafficOf,
  parsePrometheusText,
  type TrafficDelta,
  type TrafficFigures,
  trafficBetween,
  trafficFigures,
  trafficMetricNames,
} from '../domain/dashboard-metrics.ts'

export interface ServiceMetricsSourceOptions {
  consul: ConsulClientOptions
  /** the services to watch; default: every service of Consul's catalogue (but Consul itself) */
  services?: () => Promise<string[]> | string[]
  /** how long one round (Consul look-ups and scrapes) may take, ms; keep it below the dashboard's interval */
  timeoutMs: number
  log: RegistryLogger
  /**
   * a previous scrape older than this is no baseline (the dashboard slept in between), ms; default 10000. When no
   * round is that recent, sample() takes a baseline round first, `baselineWindowMs` before the real one.
   */
  staleAfterMs?: number
  /** default 250 ms */
  baselineWindowMs?: number
  /**
   * the Consul name of the public gateway: while it has healthy instances among the watched, only its traffic counts
   * (see above); default `gateway`
   */
  edgeService?: string
}

export interface ServiceMetricsSource {
  /** One scrape of every instance, and the figures since the previous sample (rejects when Consul cannot say). */
  sample(): Promise<TrafficFigures>
  /** closes the connections to Consul (once; later calls wait for the same) */
  close(): Promise<void>
}

interface Instance {
  key: string
  service: string
  origin: string
}

interface HealthEntry {
  Node?: { Address?: string }
  Service: { ID: string; Address?: string; Port: number }
}

interface Scrape {
  at: number
  traffic: InstanceTraffic
}

export const serviceMetricsDefaults = Object.freeze({
  staleAfterMs: 10_000,
  baselineWindowMs: 250,
  edgeService: 'gateway',
})

/**
 * The instances whose traffic is the clients' requests, each counted once: the edge's when it has any (every
 * request it proxies is answered again by a service behind it), else all of them.
 */
export function clientFacing<T extends { service: string }>(
  instances: readonly T[],
  edgeService: string,
): T[] {
  const edge = instances.filter((instance) => instance.service === edgeService)
  return edge.length > 0 ? edge : [...instances]
}

/** Consul's own entry in its catalogue: no /metrics of ours there. */
const consulItself = 'consul'

const originOf = (address: string, port: number) =>
  `http://${address.includes(':') ? `[${address}]` : address}:${port}`

export function createServiceMetricsSource(options: ServiceMetricsSourceOptions): ServiceMetricsSource {
  const { log, timeoutMs } = options
  const staleAfterMs = options.staleAfterMs ?? serviceMetricsDefaults.staleAfterMs
  const baselineWindowMs = options.baselineWindowMs ?? serviceMetricsDefaults.baselineWindowMs
  const edgeService = options.edgeService ?? serviceMetricsDefaults.edgeService
  const consul = createConsulClient({ ...options.consul, requestTimeoutMs: timeoutMs })
  /** the last scrape of each instance, by instance key */
  let baselines = new Map<string, Scrape>()
  let lastRoundAt: number | undefined
  let queue: Promise<unknown> = Promise.resolve()
  let closing: Promise<void> | undefined

  async function watchedServices(signal: AbortSignal): Promise<string[]> {
    if (options.services) return [...new Set(await options.services())]
    const { body } = await consul.get<Record<string, string[]>>('/v1/catalog/services', { signal })
    return Object.keys(body ?? {}).filter((name) => name !== consulItself)
  }

  async function instancesOf(service: string, signal: AbortSignal): Promise<Instance[]> {
    try {
      const { body } = await consul.get<HealthEntry[]>(`/v1/health/service/${encodeURIComponent(service)}`, {
        query: { passing: true },
        signal,
      })
      return (Array.isArray(body) ? body : []).map((entry) => {
        const address = entry.Service.Address || entry.Node?.Address || '127.0.0.1'
        const origin = originOf(address, entry.Service.Port)
        return { key: `${service} ${entry.Service.ID} ${origin}`, service, origin }
      })
    } catch (error) {
      log.debug(
        { err: error, watchedService: service },
        'dashboard: instances of a service not found this round',
      )
      return []
    }
  }

  async function scrape(instance: Instance, signal: AbortSignal): Promise<Scrape | undefined> {
    try {
      const response = await fetch(`${instance.origin}/metrics?format=prometheus`, {
        headers: { accept: 'text/plain' },
        signal,
      })
      if (!response.ok) {
        await response.body?.cancel()
        throw new Error(`answered ${response.status}`)
      }
      const text = await response.text()
      return { at: Date.now(), traffic: instanceTrafficOf(parsePrometheusText(text, trafficMetricNames)) }
    } catch (error) {
      log.debug(
        { err: error, watchedService: instance.service, instance: instance.origin },
        'dashboard: an instance was not scraped this round',
      )
      return undefined
    }
  }

  /** Scrapes every instance; the traffic of those with a recent baseline since it; the scrapes become the baselines. */
  async function round(): Promise<TrafficDelta[]> {
    const signal = AbortSignal.timeout(timeoutMs)
    const services = await watchedServices(signal)
    const found = (await Promise.all(services.map((service) => instancesOf(service, signal)))).flat()
    const instances = clientFacing(found, edgeService)
    const scrapes = await Promise.all(instances.map((instance) => scrape(instance, signal)))
    const now = Date.now()
    const next = new Map<string, Scrape>()
    // an instance that failed this round keeps its baseline for a while: its next scrape counts from there
    for (const [key, previous] of baselines) if (now - previous.at <= staleAfterMs) next.set(key, previous)
    const deltas: TrafficDelta[] = []
    for (const [index, current] of scrapes.entries()) {
      if (!current) continue
      const { key } = instances[index] as Instance
      const previous = next.get(key)
      if (previous && current.at > previous.at) {
        deltas.push(trafficBetween(previous.traffic, current.traffic, (current.at - previous.at) / 1000))
      }
      next.set(key, current)
    }
    baselines = next
    lastRoundAt = now
    return deltas
  }

  async function sample(): Promise<TrafficFigures> {
    if (lastRoundAt === undefined || Date.now() - lastRoundAt > staleAfterMs) {
      await round()
      await sleep(baselineWindowMs)
    }
    return trafficFigures(await round())
  }

  return {
    sample() {
      // one round at a time: two interleaved rounds would take each other's baselines
      const sampled = queue.then(sample)
      queue = sampled.catch(() => {})
      return sampled
    },
    close() {
      closing ??= consul.close()
      return closing
    },
  }
}
