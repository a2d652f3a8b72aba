// Runtime settings from Consul KV (meridian/<service>/): maintenance and log level applied without a restart.
import {
  consulApi,
  eventually,
  expectErrorEnvelope,
  fetchedAnswer,
  infraEndpoints,
  uniqueName,
} from '@meridian/testkit'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  followRuntimeSettings,
  maintenanceDefaults,
  parseMaintenance,
  type RunningService,
  type RuntimeSettings,
  runtimeSettingsPrefix,
  startService,
} from '../src/index.ts'
import { buildChassisApp, type ChassisApp } from './chassis-app.ts'

const { baseUrl: consul, headers: consulHeaders } = consulApi()
const { consulHttpAddr, consulToken } = infraEndpoints()
const consulSettings = { address: consulHttpAddr, ...(consulToken ? { token: consulToken } : {}) }

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

  /** Calls `path` until it answers `status`. */
  const answersWith = (path: string, status: number) =>
    eventually(
      `${path} answers ${status}`,
      async () => {
        const response = await call(path)
        await response.arrayBuffer()
        return response.status === status
      },
      undefined,
      20,
    )

  /** Whether the follower logged that it applied settings in which `field` is `value`. */
  const appliedWith = (field: string, value: unknown) =>
    chassis.logs.some((line) => line.msg === 'runtime settings applied' && line[field] === value)

  it('when the maintenance switch is put while a client keeps calling, then 503 with Retry-After as Consul answers the follow; health still answers; deleted, normal answers again', async () => {
    expect((await call('/api/v1/widgets/1')).status).toBe(200)

    await put('maintenance', '{"message":"Upgrading the database","retryAfter":120}')
    await answersWith('/api/v1/widgets/1', 503)
    const refused = await call('/api/v1/widgets/1')
    expect(refused.headers.get('retry-after')).toBe('120')
    expect(expectErrorEnvelope(await fetchedAnswer(refused), 503, 'SERVICE_UNAVAILABLE')).toMatchObject({
      message: 'Upgrading the database',
      retryAfter: 120,
    })
    for (const path of ['/health/live', '/health/ready', '/metrics'])
      expect((await call(path)).status).toBe(200)

    await remove('maintenance')
    await answersWith('/api/v1/widgets/1', 200)
  })

  it('when the switch is put under the logical name (another run of the service), then this instance keeps answering', async () => {
    const other = runtimeSettingsPrefix(chassis.app.service.name)
    try {
      await put('maintenance', 'on', other)
      // a change under its own name, written after: once the follower has applied it, the other write was there to see
      await put('log-level', 'warn')
      await eventually('the own log level is applied', () => appliedWith('logLevel', 'warn'))
      expect((await call('/api/v1/widgets/1')).status).toBe(200)
    } finally {
      await remove('maintenance', other)
      await remove('log-level')
      await eventually('the log level is back', () => chassis.app.log.level === 'info')
    }
  })

  it('when a log level is put, then the service logs at that level at once; deleted, it returns to its own', async () => {
    expect(chassis.app.log.level).toBe('info')
    await put('log-level', 'debug')
    await eventually('the level is debug', () => chassis.app.log.level === 'debug', undefined, 20)

    await put('log-level', 'loudest')
    await eventually('the unknown level is refused', () =>
      chassis.logs.some(
        (line) =>
          line.msg === 'unknown log level in the runtime settings; the level is unchanged' &&
          line.logLevel === 'loudest',
      ),
    )
    expect(chassis.app.log.level).toBe('debug')

    await remove('log-level')
    await eventually('the level is info again', () => chassis.app.log.level === 'info', undefined, 20)
  })

  it('when a setting is put while the follower holds a blocking query of 10 minutes, then it is applied as Consul answers the change, not when the wait ends', async () => {
    const service = uniqueName('settings-follow')
    const applied: RuntimeSettings[] = []
    const watch = followRuntimeSettings({
      consul: consulSettings,
      service,
      logger: chassis.app.log,
      apply: (settings) => applied.push(settings),
      wait: '10m',
    })
    try {
      await watch.ready()
      expect(applied).toEqual([{ maintenance: undefined, logLevel: undefined }])
      await put('maintenance', 'on', runtimeSettingsPrefix(service))
      // eventually's deadline is far below the 10 minutes: only a query answered because the key changed gets here
      await eventually('the maintenance is applied', () =>
        applied.some((settings) => settings.maintenance !== undefined),
      )
      expect(applied.at(-1)).toEqual({ maintenance: maintenanceDefaults, logLevel: undefined })
    } finally {
      await watch.close()
      await remove('maintenance', runtimeSettingsPrefix(service))
    }
  })
})
