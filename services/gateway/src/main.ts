// The gateway process: configuration, Redis, the app, the first instance lists, Consul registration, graceful shutdown.
import { createRedis, runMain, runService } from '@meridian/service-kit'
import { buildGatewayApp } from './app.ts'
import { loadGatewayConfig } from './config.ts'

/** How long startup waits for the first instance lists before listening anyway (requests then get 503 meanwhile). */
const discoveryStartupWaitMs = 5000

async function main(): Promise<void> {
  const config = loadGatewayConfig()
  const redis = createRedis(config.REDIS_URL, { connectionName: 'gateway' })
  const app = await buildGatewayApp({ config, redis })
  await app.upstreams.ready(discoveryStartupWaitMs)
  await runService({ app, config, clients: [redis] })
}

runMain('gateway', main)
