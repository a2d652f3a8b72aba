// The kit's Consul code against an agent with ACLs (default deny) and TLS only (issue 45): a secure agent of this
// file's own (@meridian/infra/secure), each service configured from the variables it would be given (envFor), read
// by the kit's one reader (consulOptionsFromEnv). Registration, discovery and runtime settings go through; another
// service's name, no token, plain HTTP and an untrusted CA do not.
import { once } from 'node:events'
import { mkdtempSync, rmSync } from 'node:fs'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { freePort } from '@meridian/infra'
import { certificateAuthority, type SecureConsulInstance, startSecureConsul } from '@meridian/infra/secure'
import { eventually } from '@meridian/testkit'
import { pino } from 'pino'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { ServiceEnv } from '../src/config.ts'
import {
  type ConsulClientOptions,
  ConsulRequestError,
  createConsulClient,
} from '../src/registry/consul-client.ts'
import { consulOptionsFromEnv } from '../src/registry/consul-env.ts'
import { followRuntimeSettings, type RuntimeSettings } from '../src/registry/runtime-settings.ts'
import { createDiscovery } from '../src/registry/service-discovery.ts'
import { registerService, type ServiceRegistration } from '../src/registry/service-registration.ts'

const root = mkdtempSync(join(tmpdir(), 'meridian-kit-secure-consul-'))
let consul: SecureConsulInstance
let readiness: Server
let readinessPort: number
const registrations: ServiceRegistration[] = []
const logger = pino({ level: 'silent' })
const shortTiming = { ttl: '5s', heartbeatIntervalMs: 500, httpCheckInterval: '2s', httpCheckTimeout: '1s' }

beforeAll(async () => {
  const ca = await certificateAuthority(join(root, 'ca'))
  const ports = { https: await freePort(), serfLan: await freePort(), server: await freePort() }
  consul = await startSecureConsul({
    dir: join(root, 'consul'),
    ca,
    host: '127.0.0.1',
    ports,
    principals: ['order', 'payment', 'gateway'],
  })
  // what the agent's HTTP readiness check of every instance registered here asks
  readiness = createServer((_request, response) => response.end('ok'))
  readiness.listen(0, '127.0.0.1')
  await once(readiness, 'listening')
  readinessPort = (readiness.address() as AddressInfo).port
})

afterAll(async () => {
  for (const registration of registrations) await registration.deregister().catch(() => {})
  readiness?.close()
  await consul?.stop()
  rmSync(root, { recursive: true, force: true })
})

/** The Consul settings of a service configured with the variables the agent gives `principal`. */
function settingsOf(principal: string): ConsulClientOptions {
  const env = consul.envFor(principal)
  const config: Pick<ServiceEnv, 'CONSUL_HTTP_ADDR' | 'CONSUL_HTTP_TOKEN' | 'CONSUL_CACERT'> = {
    CONSUL_HTTP_ADDR: env.CONSUL_HTTP_ADDR ?? '',
    CONSUL_HTTP_TOKEN: env.CONSUL_HTTP_TOKEN ?? '',
    CONSUL_CACERT: env.CONSUL_CACERT ?? '',
  }
  return consulOptionsFromEnv(config)
}

async function register(consulSettings: ConsulClientOptions, name: string): Promise<ServiceRegistration> {
  const registration = await registerService({
    consul: consulSettings,
    name,
    address: '127.0.0.1',
    port: readinessPort,
    meta: { version: 'test', region: 'local', az: 'local-a' },
    readiness: async () => true,
    logger,
    timing: shortTiming,
  })
  registrations.push(registration)
  return registration
}

describe('the kit against a Consul with ACLs and TLS', () => {
  it("when order's token registers order and order-run1, then both are in; once payment registered, order discovers it", async () => {
    const order = settingsOf('order')
    expect(order.address).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/)
    await register(order, 'order')
    await register(order, 'order-run1')
    const payment = await register(settingsOf('payment'), 'payment')

    const discovery = createDiscovery({ consul: order, name: 'payment', logger })
    try {
      await discovery.ready()
      await eventually("payment discovered with order's token", () => discovery.instances().length > 0)
      expect(discovery.instances().map((instance) => instance.id)).toEqual([payment.id])
    } finally {
      await discovery.close()
    }
  })

  it("when order's token registers payment, or no token registers order, then Consul refuses with 403", async () => {
    const payment = await register(settingsOf('order'), 'payment').catch((error: unknown) => error)
    expect(payment).toBeInstanceOf(ConsulRequestError)
    expect(payment).toMatchObject({ statusCode: 403 })
    expect((payment as Error).message).toMatch(/Permission denied/i)

    const { token: _token, ...anonymous } = settingsOf('order')
    const refused = await register(anonymous, 'order').catch((error: unknown) => error)
    expect(refused).toMatchObject({ statusCode: 403 })
  })

  it("when the gateway turns order-run1's maintenance on, then order-run1's runtime settings (followed with order's token) say so", async () => {
    let latest: RuntimeSettings | undefined
    const watch = followRuntimeSettings({
      consul: settingsOf('order'),
      service: 'order-run1',
      logger,
      apply: (settings) => {
        latest = settings
      },
      wait: '5s',
    })
    const gateway = createConsulClient(settingsOf('gateway'))
    const order = createConsulClient(settingsOf('order'))
    try {
      await watch.ready()
      expect(latest?.maintenance).toBeUndefined()
      await gateway.put('/v1/kv/meridian/order-run1/maintenance', { body: 'on' })
      await eventually('maintenance followed', () => latest?.maintenance !== undefined)
      const denied = await order
        .put('/v1/kv/meridian/order-run1/maintenance', { body: 'off' })
        .catch((error: unknown) => error)
      expect(denied).toMatchObject({ statusCode: 403 })
    } finally {
      await watch.close()
      await Promise.all([gateway.close(), order.close()])
    }
  })

  it('when the kit speaks plain HTTP to the agent, then no answer of Consul comes back', async () => {
    const { tls: _tls, ...order } = settingsOf('order')
    const plain = createConsulClient({ ...order, address: order.address.replace(/^https:/, 'http:') })
    try {
      const error = await plain.get('/v1/status/leader').catch((caught: unknown) => caught)
      expect(error).toMatchObject({ statusCode: 400 })
      expect((error as Error).message).toMatch(/HTTPS server/)
    } finally {
      await plain.close()
    }
  })

  it('when the kit does not trust the CA (the system CAs, another CA), then the call fails on the certificate', async () => {
    const { tls: _tls, ...order } = settingsOf('order')
    const otherCa = await certificateAuthority(join(root, 'other-ca'))
    for (const tls of [undefined, { ca: otherCa.caPem() }]) {
      const client = createConsulClient({ ...order, ...(tls ? { tls } : {}) })
      try {
        const error = await client.get('/v1/status/leader').catch((caught: unknown) => caught)
        expect(error).toBeInstanceOf(ConsulRequestError)
        expect(error).toMatchObject({ statusCode: undefined })
        expect((error as Error).message).toMatch(/certificate/i)
      } finally {
        await client.close()
      }
    }
  })
})
