// Follows the healthy instances of one service through Consul blocking queries, keeping the last good list on failure.
import { setTimeout as sleep } from 'node:timers/promises'
import { detachedFromTrace, inSpan } from '../tracing/spans.ts'
import { type ConsulClient, type ConsulClientOptions, consulClientFrom } from './consul-client.ts'
import { consulDurationToMs } from './consul-duration.ts'
import type { RegistryLogger } from './registry-logger.ts'

export interface ServiceInstance {
  id: string
  address: string
  port: number
  tags: string[]
  meta: Record<string, string>
  /** from meta.weight; 1 when absent or not a non-negative integer */
  weight: number
}

export interface DiscoveryRetry {
  /** delay before the first retry after a failed query, ms; default 250 */
  initialDelayMs: number
  /** the delay doubles on each further failure up to this, ms; default 10000 */
  maxDelayMs: number
}

export interface DiscoveryOptions {
  /** a shared client, or the settings of one owned (and closed) by this discovery */
  consul: ConsulClient | ConsulClientOptions
  /** the logical service name to follow */
  name: string
  logger: RegistryLogger
  /** how long Consul may hold a blocking query (Consul duration); default '55s' */
  wait?: string
  retry?: Partial<DiscoveryRetry>
}

export type InstancesListener = (instances: ServiceInstance[]) => void

export interface ServiceDiscovery {
  readonly name: string
  /** the healthy instances as last seen (a copy) */
  instances(): ServiceInstance[]
  /** resolves after the first successful query; rejects when closed before that */
  ready(): Promise<void>
  /** called with the new list each time the healthy instances change; returns the unsubscribe function */
  onChange(listener: InstancesListener): () => void
  /** stops following: aborts the blocking query in flight */
  close(): Promise<void>
}

export const discoveryDefaults = Object.freeze({
  wait: '55s',
  retry: Object.freeze({ initialDelayMs: 250, maxDelayMs: 10_000 }) as Readonly<DiscoveryRetry>,
})

/** Consul's rate-limit advice: never query the same endpoint back to back faster than this. */
const minimumQueryGapMs = 50

/**
 * The index to send with the next blocking query, following Consul's documented rules: reset to 0 when the index
 * goes backwards (or is missing), and never send an index below 1 after a successful query.
 */
export function nextBlockingIndex(previous: number, received: number | undefined): number {
  if (received === undefined || received < previous) return 0
  return Math.max(received, 1)
}

/** Capped exponential backoff with +/-20% jitter; attempt counts from 0. */
export function retryDelayMs(
  attempt: number,
  retry: DiscoveryRetry,
  random: () => number = Math.random,
): number {
  const capped = Math.min(retry.maxDelayMs, retry.initialDelayMs * 2 ** attempt)
  return Math.round(capped * (0.8 + 0.4 * random()))
}

interface HealthServiceEntry {
  Node?: { Address?: string }
  Service: {
    ID: string
    Address?: string
    Port: number
    Tags?: string[] | null
    Meta?: Record<string, string> | null
  }
}

/** One entry of GET /v1/health/service/<name> as an instance; the node's address stands in for an empty one. */
export function instanceFromHealthEntry(entry: HealthServiceEntry): ServiceInstance {
  const meta = entry.Service.Meta ?? {}
  const weight = /^\d+$/.test(meta.weight ?? '') ? Number(meta.weight) : 1
  return {
    id: entry.Service.ID,
    address: entry.Service.Address || entry.Node?.Address || '',
    port: entry.Service.Port,
    tags: [...(entry.Service.Tags ?? [])],
    meta: { ...meta },
    weight,
  }
}

function copyInstance(instance: ServiceInstance): ServiceInstance {
  return { ...instance, tags: [...instance.tags], meta: { ...instance.meta } }
}

function sameInstances(a: ServiceInstance[], b: ServiceInstance[]): boolean {
  return JSON.stringify(a) === JSON.stringify(b)
}

/** Starts following `name` at once; call ready() to wait for the first list. */
export function createDiscovery(options: DiscoveryOptions): ServiceDiscovery {
  const { name, logger } = options
  const waitMs = consulDurationToMs(options.wait ?? discoveryDefaults.wait)
  const wait = options.wait ?? discoveryDefaults.wait
  const retry: DiscoveryRetry = { ...discoveryDefaults.retry, ...options.retry }
  const { client: consul, owned } = consulClientFrom(options.consul)
  const stop = new AbortController()
  const listeners = new Set<InstancesListener>()
  const path = `/v1/health/service/${encodeURIComponent(name)}`
  // Consul adds up to wait/16 of jitter to a blocking query; beyond that (plus slack) the answer is not coming
  const queryTimeoutMs = waitMs + Math.ceil(waitMs / 16) + 10_000

  let current: ServiceInstance[] = []
  let markReady: () => void = () => {}
  let failBeforeReady: (error: Error) => void = () => {}
  const firstList = new Promise<void>((resolve, reject) => {
    markReady = resolve
    failBeforeReady = reject
  })
  firstList.catch(() => {}) // a discovery closed before its first list is not an unhandled rejection

  function publish(instances: ServiceInstance[]): void {
    for (const listener of listeners) {
      try {
        listener(instances.map(copyInstance))
      } catch (error) {
        logger.error({ discoveredService: name, err: error }, 'a discovery change listener threw')
      }
    }
  }

  const ask = (index: number) =>
    consul.get<HealthServiceEntry[]>(path, {
      query: { passing: true, index, wait },
      signal: stop.signal,
      timeoutMs: queryTimeoutMs,
    })

  /**
   * One health query. A lookup (index 0: the first, or after Consul's index went back) is a span of its own; a
   * blocking query that waits for a change is not — it would be a minute-long trace of one span, every minute.
   */
  function query(index: number) {
    if (index !== 0) return ask(index)
    return inSpan(
      'consul.discovery',
      {
        kind: 'client',
        attributes: () => ({ 'meridian.discovered_service': name, 'peer.service': 'consul' }),
      },
      async (span) => {
        const response = await ask(index)
        if (Array.isArray(response.body)) span?.setAttribute('meridian.instances', response.body.length)
        return response
      },
    )
  }

  async function follow(): Promise<void> {
    let index = 0
    let failures = 0
    while (!stop.signal.aborted) {
      const startedAt = Date.now()
      try {
        const response = await query(index)
        if (!Array.isArray(response.body)) throw new Error('Consul answered a health query without a list')
        index = nextBlockingIndex(index, response.index)
        const instances = response.body.map(instanceFromHealthEntry).sort((a, b) => a.id.localeCompare(b.id))
        if (failures > 0)
          logger.info({ discoveredService: name }, 'Consul reachable again; discovery resumed')
        failures = 0
        const changed = !sameInstances(current, instances)
        current = instances
        markReady()
        if (changed) {
          logger.info({ discoveredService: name, instances: instances.length }, 'healthy instances changed')
          publish(instances)
        }
        const elapsed = Date.now() - startedAt
        if (elapsed < minimumQueryGapMs)
          await sleep(minimumQueryGapMs - elapsed, undefined, { signal: stop.signal })
      } catch (error) {
        if (stop.signal.aborted) break
        const delayMs = retryDelayMs(failures, retry)
        failures += 1
        logger.warn(
          {
            discoveredService: name,
            err: error,
            failures,
            retryInMs: delayMs,
            keptInstances: current.length,
          },
          'Consul health query failed; keeping the last known instances',
        )
        try {
          await sleep(delayMs, undefined, { signal: stop.signal })
        } catch {
          break // closed while waiting
        }
      }
    }
  }

  const following = detachedFromTrace(follow)
  let closing: Promise<void> | undefined

  return {
    name,
    instances: () => current.map(copyInstance),
    ready: () => firstList,
    onChange(listener) {
      listeners.add(listener)
      return () => {
        listeners.delete(listener)
      }
    },
    close() {
      closing ??= (async () => {
        stop.abort()
        failBeforeReady(new Error(`discovery of ${name} was closed before its first list`))
        listeners.clear()
        await following
        if (owned) await consul.close()
      })()
      return closing
    },
  }
}
