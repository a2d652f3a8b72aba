// Runtime settings from Consul KV (meridian/<service>/): maintenance and log level applied without a restart.
import { consulApi, expectErrorEnvelope, fetchedAnswer, infraEndpoints } from '@meridian/testkit'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  maintenanceDefaults,
  parseMaintenance,
  type RunningService,
  runtimeSettingsPrefix,
  startService,
} from '../src/index.ts'
import { buildChassisApp, type ChassisApp } from './chassis-app.ts'

const { baseUrl: consul, headers: consulHeaders } = consulApi()

describe('parseMaintenance', () => {
  it('when the value is absent or off, then there is no maintenance; on, then the defaults; JSON, then its message and Retry-After', () => {
    for (const off of [undefined, '', 'off', 'FALSE', '0', ' no '])
      expect(parseMaintenance(off)).toBeUndefined()
    for (const on of ['on', 'true', '1', 'yes', 'please'])
      expect(parseMaintenance(on)).toEqual(maintenanceDefaults)
    expect(parseMaintenance('{"message":"Upgrading the database","retryAfter":120}')).toEqual({
      message: 'Upgrading the database',
      retryAfterSeconds: 120,
    })
    expect(parseMaintenance('{"retryAfter":-5}')).toEqual(maintenanceDefaults)
    expect(parseMaintenance('{not json')).toEqual(maintenanceDefaults)
  })
})

describe('runtime settings followed in Consul KV', () => {
  let chassis: ChassisApp
  let running: RunningService
  let prefix: string
  // registered under a run's own Consul name, as a system run beside another registers (and so follows its own keys)
  let consulName: string

  beforeAll(async () => {
    chassis = await buildChassisApp()
    consulName = `${chassis.app.service.name}-run-${Date.now().toString(36)}`
    prefix = runtimeSettingsPrefix(consulName)
    running = await startService({
      app: chassis.app,
      config: {
        HOST: '127.0.0.1',
        PORT: 0,
        SERVICE_HOST: '127.0.0.1',
        CONSUL_HTTP_ADDR: infraEndpoints().consulHttpAddr,
        CONSUL_REGISTER: true,
        CONSUL_SERVICE_NAME: consulName,
        SERVICE_VERSION: '1.2.3',
        SERVICE_REGION: 'local',
        SERVICE_AZ: 'local-a',
        SERVICE_WEIGHT: 1,
      },
    })
  })
  afterAll(async () => {
    await running?.stop()
    await fetch(`${consul}/v1/kv/${prefix}?recurse=true`, { method: 'DELETE', headers: consulHeaders })
  })

  const put = (key: string, value: string, under = prefix) =>
    fetch(`${consul}/v1/kv/${under}${key}`, { method: 'PUT', headers: consulHeaders, body: value })
  const remove = (key: string, under = prefix) =>
    fetch(`${consul}/v1/kv/${under}${key}`, { method: 'DELETE', headers: consulHeaders })
  const call = (path: string) => fetch(`http://127.0.0.1:${running.port}${path}`)

  /** Calls `path` every 20 ms until it answers `status`; the time that took, ms (or Infinity after 5 s). */
  async function msUntil(path: string, status: number): Promise<number> {
    const started = Date.now()
    while (Date.now() - started < 5000) {
      const response = await call(path)
      await response.arrayBuffer()
      if (response.status === status) return Date.now() - started
      await new Promise((resolve) => setTimeout(resolve, 20))
    }
    return Number.POSITIVE_INFINITY
  }

  it('when the maintenance switch is put while a client keeps calling, then 503 with Retry-After within a second; health still answers; deleted, normal answers within a second', async () => {
    expect((await call('/api/v1/widgets/1')).status).toBe(200)

    await put('maintenance', '{"message":"Upgrading the database","retryAfter":120}')
    expect(await msUntil('/api/v1/widgets/1', 503)).toBeLessThan(1000)
    const refused = await call('/api/v1/widgets/1')
    expect(refused.headers.get('retry-after')).toBe('120')
    expect(expectErrorEnvelope(await fetchedAnswer(refused), 503, 'SERVICE_UNAVAILABLE')).toMatchObject({
      message: 'Upgrading the database',
      retryAfter: 120,
    })
    for (const path of ['/health/live', '/health/ready', '/metrics'])
      expect((await call(path)).status).toBe(200)

    await remove('maintenance')
    expect(await msUntil('/api/v1/widgets/1', 200)).toBeLessThan(1000)
  })

  it('when the switch is put under the logical name (another run of the service), then this instance keeps answering', async () => {
    const other = runtimeSettingsPrefix(chassis.app.service.name)
    try {
      await put('maintenance', 'on', other)
      await new Promise((resolve) => setTimeout(resolve, 500))
      expect((await call('/api/v1/widgets/1')).status).toBe(200)
    } finally {
      await remove('maintenance', other)
    }
  })

  it('when a log level is put, then the service logs at that level at once; deleted, it returns to its own', async () => {
    expect(chassis.app.log.level).toBe('info')
    await put('log-level', 'debug')
    const deadline = Date.now() + 1000
    while (chassis.app.log.level !== 'debug' && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 20))
    }
    expect(chassis.app.log.level).toBe('debug')

    await put('log-level', 'loudest')
    await new Promise((resolve) => setTimeout(resolve, 300))
    expect(chassis.app.log.level).toBe('debug')

    await remove('log-level')
    const back = Date.now() + 1000
    while (chassis.app.log.level !== 'info' && Date.now() < back) {
      await new Promise((resolve) => setTimeout(resolve, 20))
    }
    expect(chassis.app.log.level).toBe('info')
  })
})
