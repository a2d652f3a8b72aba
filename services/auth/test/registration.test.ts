// The auth process in Consul: registered with its metadata and checks on start, out of discovery after shutdown.
import { createDiscovery, startService } from '@meridian/service-kit'
import { consulApi, infraEndpoints, uniqueName } from '@meridian/testkit'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { loadAuthConfig } from '../src/config.ts'
import { type AuthTestApp, buildAuthTestApp } from './auth-app.ts'
import { bearerFor } from './identities.ts'

describe('auth in Consul', () => {
  let auth: AuthTestApp
  beforeAll(async () => {
    // a unique service name keeps this file's instances apart from any other auth in the same agent
    auth = await buildAuthTestApp()
    auth.app.service.name = uniqueName('auth')
  })
  afterAll(async () => {
    await auth.close().catch(() => {})
  })

  it('when the service starts, then it is a passing instance with its metadata; when it shuts down, then it leaves discovery', async () => {
    const config = loadAuthConfig({
      NODE_ENV: 'test',
      PORT: '0',
      HOST: '127.0.0.1',
      SERVICE_HOST: '127.0.0.1',
      CONSUL_HTTP_ADDR: infraEndpoints().consulHttpAddr,
      SERVICE_VERSION: '1.4.0',
      SERVICE_REGION: 'eu-west',
      SERVICE_AZ: 'eu-west-1b',
      SERVICE_WEIGHT: '7',
    })
    const running = await startService({
      app: auth.app,
      config,
      registrationTiming: { heartbeatIntervalMs: 300, ttl: '5s' },
    })
    const name = auth.app.service.name
    const discovery = createDiscovery({
      consul: { address: infraEndpoints().consulHttpAddr },
      name,
      logger: auth.app.log,
      wait: '5s',
    })
    try {
      await discovery.ready()
      await expect.poll(() => discovery.instances().map((i) => i.port)).toEqual([running.port])
      const [instance] = discovery.instances()
      expect(instance).toMatchObject({ id: running.registration?.id, address: '127.0.0.1', weight: 7 })
      expect(instance?.meta).toMatchObject({
        version: '1.4.0',
        region: 'eu-west',
        az: 'eu-west-1b',
        protocol: 'http',
        weight: '7',
      })

      const { baseUrl, headers } = consulApi()
      const checks = (await (await fetch(`${baseUrl}/v1/health/checks/${name}`, { headers })).json()) as {
        Type: string
        Status: string
      }[]
      expect(checks.map((c) => c.Type).sort()).toEqual(['http', 'ttl'])

      const response = await fetch(`http://127.0.0.1:${running.port}/api/v1/users`, {
        headers: bearerFor(auth, { role: 'admin' }),
      })
      expect(response.status).toBe(200)

      await running.stop()
      await expect.poll(() => discovery.instances()).toEqual([])
      const catalogue = (await (
        await fetch(`${baseUrl}/v1/catalog/service/${name}`, { headers })
      ).json()) as unknown[]
      expect(catalogue).toEqual([])
    } finally {
      await discovery.close()
      await running.stop()
    }
  })
})
