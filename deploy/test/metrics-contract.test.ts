// The metric names are the contract: every metric that deploy/observability's rules and dashboards read is exposed by
// a running service. The whole system starts (every service of services/ as a process on the engines, as ./scripts/dev
// runs them); each instance's /metrics is read as Prometheus text and its families (`# TYPE` lines) collected.
import { endpointsEnv, ensureInfra, freePort } from '@meridian/infra'
import { type MeridianSystem, startSystem } from '@meridian/infra/system'
import { scaledMs } from '@meridian/infra/test-time'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  dashboardExpressions,
  dashboardFiles,
  exposedFamilies,
  missingMetrics,
  ruleExpressions,
  rulesFile,
} from '../src/index.ts'

let system: MeridianSystem | undefined
/** service name -> its families (name -> type) */
const byService = new Map<string, Map<string, string>>()
/** every family of every service */
const exposed = new Map<string, string>()

beforeAll(async () => {
  const endpoints = await ensureInfra({ progress: () => {} })
  system = await startSystem({
    prefix: 'metrics',
    form: 'development',
    // ports of their own: a developer's system (8080, 3099) may be running
    gatewayPort: await freePort(),
    simulatorPort: 0,
    baseEnv: { ...process.env, ...endpointsEnv(endpoints) },
    log: (line) => process.stderr.write(`[deploy:metrics] ${line}\n`),
  })
  for (const service of Object.values(system.services)) {
    // ?format=prometheus: the gateway and the realtime channel answer the spec's JSON counters by default
    const response = await fetch(`${service.baseUrl}/metrics?format=prometheus`, {
      signal: AbortSignal.timeout(scaledMs(10_000)),
    })
    if (!response.ok) throw new Error(`${service.name}: /metrics answered ${response.status}`)
    const families = exposedFamilies(await response.text())
    byService.set(service.name, families)
    for (const [name, type] of families) exposed.set(name, type)
  }
}, scaledMs(600_000))

afterAll(async () => {
  await system?.close()
}, scaledMs(120_000))

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
