// Settings an operator changes while a service runs, in Consul KV under meridian/<service>/: `maintenance` (every
// route but health and metrics answers 503 SERVICE_UNAVAILABLE with Retry-After) and `log-level`. Followed with
// blocking queries, applied without a restart; the last good settings are kept while Consul cannot be reached.
import { setTimeout as sleep } from 'node:timers/promises'
import { type ConsulClient, type ConsulClientOptions, consulClientFrom } from './consul-client.ts'
import { consulDurationToMs } from './consul-duration.ts'
import type { RegistryLogger } from './registry-logger.ts'
import { discoveryDefaults, nextBlockingIndex, retryDelayMs } from './service-discovery.ts'

/** The KV prefix of a service's runtime settings. */
export const runtimeSettingsPrefix = (service: string): string => `meridian/${service}/`

export const runtimeSettingKeys = { maintenance: 'maintenance', logLevel: 'log-level' } as const

export interface Maintenance {
  message: string
  retryAfterSeconds: number
}

export interface RuntimeSettings {
  /** undefined: serving as usual */
  maintenance: Maintenance | undefined
  /** a pino level name; undefined: the level the service started with */
  logLevel: string | undefined
}

export const maintenanceDefaults: Maintenance = Object.freeze({
  message: 'Service under maintenance',
  retryAfterSeconds: 60,
})

const offValues = new Set(['', 'off', 'false', '0', 'no'])
const onValues = new Set(['on', 'true', '1', 'yes'])

/**
 * The `maintenance` value: absent or `off`/`false`/`0` is off; `on`/`true`/`1` is on with the defaults; a JSON
 * object `{"message": "…", "retryAfter": 120}` is on with its own message and Retry-After. Anything else is on with
 * the defaults: an operator who wrote something meant maintenance.
 */
export function parseMaintenance(value: string | undefined): Maintenance | undefined {
  if (value === undefined) return undefined
  const trimmed = value.trim()
  if (offValues.has(trimmed.toLowerCase())) return undefined
  if (onValues.has(trimmed.toLowerCase()) || !trimmed.startsWith('{')) return { ...maintenanceDefaults }
  try {
    const parsed = JSON.parse(trimmed) as { message?: unknown; retryAfter?: unknown }
    return {
      message:
        typeof parsed.message === 'string' && parsed.message.trim() !== ''
          ? parsed.message.slice(0, 200)
          : maintenanceDefaults.message,
      retryAfterSeconds:
        Number.isInteger(parsed.retryAfter) && (parsed.retryAfter as number) > 0
          ? Math.min(parsed.retryAfter as number, 86_400)
          : maintenanceDefaults.retryAfterSeconds,
    }
  } catch {
    return { ...maintenanceDefaults }
  }
}

interface KvEntry {
  Key: string
  /** base64, or null for a key without a value */
  Value: string | null
}

/** The settings that the keys under `prefix` say. */
export function settingsFromKv(prefix: string, entries: readonly KvEntry[]): RuntimeSettings {
  const values = new Map<string, string>()
  for (const entry of entries) {
    if (!entry.Key.startsWith(prefix)) continue
    values.set(entry.Key.slice(prefix.length), Buffer.from(entry.Value ?? '', 'base64').toString('utf8'))
  }
  const logLevel = values.get(runtimeSettingKeys.logLevel)?.trim()
  return {
    maintenance: parseMaintenance(values.get(runtimeSettingKeys.maintenance)),
    logLevel: logLevel === undefined || logLevel === '' ? undefined : logLevel,
  }
}

export interface RuntimeSettingsOptions {
  consul: ConsulClient | ConsulClientOptions
  service: string
  logger: RegistryLogger
  /** called with the settings at the first answer and whenever they change */
  apply(settings: RuntimeSettings): void
  /** how long Consul may hold a blocking query (Consul duration); default '55s' */
  wait?: string
}

export interface RuntimeSettingsWatch {
  /** resolves after the first answer (applied), or when closed */
  ready(): Promise<void>
  close(): Promise<void>
}

/** Starts following the service's prefix at once. */
export function followRuntimeSettings(options: RuntimeSettingsOptions): RuntimeSettingsWatch {
  const { service, logger, apply } = options
  const prefix = runtimeSettingsPrefix(service)
  const wait = options.wait ?? discoveryDefaults.wait
  const waitMs = consulDurationToMs(wait)
  const { client: consul, owned } = consulClientFrom(options.consul)
  const stop = new AbortController()
  const path = `/v1/kv/${prefix.split('/').map(encodeURIComponent).join('/')}`
  let markReady: () => void = () => {}
  const firstAnswer = new Promise<void>((resolve) => {
    markReady = resolve
  })

  async function follow(): Promise<void> {
    let index = 0
    let failures = 0
    let current = ''
    while (!stop.signal.aborted) {
      try {
        const response = await consul.get<KvEntry[] | string>(path, {
          query: { recurse: true, index, wait },
          signal: stop.signal,
          timeoutMs: waitMs + Math.ceil(waitMs / 16) + 10_000,
          // no key under the prefix yet: Consul answers 404, with the index to block on
          accept: [404],
        })
        index = nextBlockingIndex(index, response.index)
        const entries = response.status === 404 || !Array.isArray(response.body) ? [] : response.body
        const settings = settingsFromKv(prefix, entries)
        const text = JSON.stringify(settings)
        if (failures > 0) logger.info({ prefix }, 'Consul reachable again; following runtime settings')
        failures = 0
        if (text !== current) {
          current = text
          logger.info({ prefix, ...settings }, 'runtime settings applied')
          apply(settings)
        }
        markReady()
        // Consul's advice: never the same query back to back faster than this
        await sleep(50, undefined, { signal: stop.signal })
      } catch (error) {
        if (stop.signal.aborted) break
        const delayMs = retryDelayMs(failures, discoveryDefaults.retry)
        failures += 1
        logger.warn(
          { prefix, err: error, failures, retryInMs: delayMs },
          'reading runtime settings from Consul failed; keeping the last ones',
        )
        try {
          await sleep(delayMs, undefined, { signal: stop.signal })
        } catch {
          break
        }
      }
    }
    markReady()
  }

  const following = follow()
  let closing: Promise<void> | undefined
  return {
    ready: () => firstAnswer,
    close() {
      closing ??= (async () => {
        stop.abort()
        await following
        if (owned) await consul.close()
      })()
      return closing
    },
  }
}
