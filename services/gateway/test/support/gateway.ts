// Builds and starts a gateway for a test on an ephemeral port, against the real Consul and Redis.

import type { ServiceApp } from '@meridian/service-kit'
import {
  captureLogs,
  freshRedis,
  infraEndpoints,
  scaledMs,
  testServiceCredential,
  waitMs,
} from '@meridian/testkit'
import type { Redis } from 'ioredis'
import { buildGatewayApp, type GatewayRoute, loadGatewayConfig } from '../../src/app.ts'

export interface TestGateway {
  app: ServiceApp
  url: string
  port: number
  logs: Record<string, unknown>[]
  close(): Promise<void>
}

export async function startGateway(options: {
  /** default: the gateway's own (publicRoutes of its NODE_ENV) */
  routes?: GatewayRoute[]
  env?: Record<string, string>
  /** shared by several gateways (rate limits); a fresh prefixed client otherwise */
  redis?: Redis
}): Promise<TestGateway> {
  const { redisUrl, consulHttpAddr, consulToken } = infraEndpoints()
  const { stream, lines } = captureLogs()
  const config = loadGatewayConfig({
    NODE_ENV: 'test',
    LOG_LEVEL: 'info',
    // what the services' stand-ins and test apps accept at their /internal/ routes (API keys' introspection)
    SERVICE_CREDENTIAL: testServiceCredential,
    CONSUL_HTTP_ADDR: consulHttpAddr,
    ...(consulToken ? { CONSUL_HTTP_TOKEN: consulToken } : {}),
    REDIS_URL: redisUrl,
    CONSUL_REGISTER: 'false',
    UPSTREAM_TIMEOUT_MS: '1500',
    EJECT_BASE_MS: '3000',
    RATE_LIMIT_MAX: '10000',
    ...options.env,
  })
  const owned = options.redis ? undefined : freshRedis('gateway')
  const redis = options.redis ?? owned!.redis
  const app = await buildGatewayApp({
    config,
    redis,
    ...(options.routes ? { routes: options.routes } : {}),
    logStream: stream,
  })
  await app.listen({ host: '127.0.0.1', port: 0 })
  await app.upstreams.ready(scaledMs(waitMs))
  const address = app.server.address()
  const port = typeof address === 'object' && address ? address.port : 0
  return {
    app,
    url: `http://127.0.0.1:${port}`,
    port,
    logs: lines,
    async close() {
      await app.close()
      await owned?.cleanup()
    },
  }
}

/** Polls until `condition` holds (or fails the test after `timeoutMs`, the tests' scaled wait by default). */
export async function eventually(
  condition: () => boolean | Promise<boolean>,
  timeoutMs = scaledMs(waitMs),
): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms`)
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}
