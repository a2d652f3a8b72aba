// The metric names are the contract: every metric that deploy/observability's rules and dashboards read is exposed by
// a running service. Read from the suite's system (every service of services/ as a process, as ./scripts/dev runs
// them): each service's /metrics as Prometheus text and its families (`# TYPE` lines) collected. It was deploy's own
// test, which started a whole system of its own for this alone; the families a service registers are the same here.
import {
  dashboardExpressions,
  dashboardFiles,
  exposedFamilies,
  missingMetrics,
  ruleExpressions,
  rulesFile,
} from '@meridian/deploy'
import { scaledMs } from '@meridian/testkit'
import { beforeAll, describe, expect, inject, it } from 'vitest'
import '../src/system-context.ts'

const system = inject('system')
/** service name -> its families (name -> type), read from its first instance that runs (`<name>#<n>` are replicas) */
const byService = new Map<string, Map<string, string>>()
/** every family of every service */
const exposed = new Map<string, string>()

/** The families of the first instance of a service that answers: an earlier file may have stopped one for good. */
async function familiesOf(name: string, baseUrls: string[]): Promise<Map<string, string>> {
  const failures: string[] = []
  for (const baseUrl of baseUrls) {
    try {
      // ?format=prometheus: the gateway and the realtime channel answer the spec's JSON counters by default
      const response = await fetch(`${baseUrl}/metrics?format=prometheus`, {
        signal: AbortSignal.timeout(scaledMs(10_000)),
      })
      if (response.ok) return exposedFamilies(await response.text())
      failures.push(`${baseUrl}: ${response.status}`)
    } catch (error) {
      failures.push(`${baseUrl}: ${error instanceof Error ? (error.cause ?? error.message) : String(error)}`)
    }
  }
  throw new Error(`${name}: no instance answered /metrics (${failures.join('; ')})`)
}

beforeAll(async () => {
  const instances = new Map<string, string[]>()
  for (const [name, service] of Object.entries(system.services)) {
    const base = name.split('#')[0] ?? name
    instances.set(base, [...(instances.get(base) ?? []), service.baseUrl])
  }
  for (const [name, baseUrls] of instances) {
    const families = await familiesOf(name, baseUrls)
    byService.set(name, families)
    for (const [family, type] of families) exposed.set(family, type)
  }
})

describe('the metrics the rules and dashboards read are exposed by the services', () => {
  it('when every service of a running system is asked for /metrics, then each answers its HTTP histogram among its families', () => {
    expect([...byService.keys()].sort()).toEqual([
      'auth',
      'content',
      'gateway',
      'inventory',
      'notification',
      'order',
      'payment',
      'realtime-gateway',
      'shipping',
    ])
    for (const [name, families] of byService)
      expect(families.get('http_request_duration_seconds'), name).toBe('histogram')
    // the series the saga's and the channel's alerts stand on come from the services they describe
    expect(byService.get('order')?.get('meridian_saga_escalations_total')).toBe('counter')
    expect(byService.get('realtime-gateway')?.get('realtime_connections_active')).toBe('gauge')
    expect(byService.get('order')?.get('outbox_lag_seconds')).toBe('gauge')
  })

  it('when the alert and recording rules are read, then every metric they name is exposed', () => {
    const { expressions, recorded } = ruleExpressions(rulesFile)
    expect(missingMetrics(expressions, exposed, recorded)).toEqual([])
  })

  it.each(dashboardFiles())(
    'when %s is read, then every metric its panels and variables name is exposed',
    (file) => {
      expect(missingMetrics(dashboardExpressions(file), exposed)).toEqual([])
    },
  )
})
