// The gateway process: configuration, Redis, the app, the first instance lists, Consul registration, graceful shutdown.
import { ConfigError, createRedis, runService } from '@meridian/service-kit'
import { buildGatewayApp } from './app.ts'
import { loadGatewayConfig } from './config.ts'

/** How long startup waits for the first instance lists before listening anyway (requests then get 503 meanwhile). */
const discoveryStartupWaitMs = 5000

async function main(): Promise<void> {
  const config = loadGatewayConfig()
  const redis = createRedis(config.REDIS_URL, { connectionName: 'gateway' })
  const app = await buildGatewayApp({ config, redis })
  app.addHook('onClose', async () => {
    redis.disconnect()
  })
  await app.upstreams.ready(discoveryStartupWaitMs)
  await runService({ app, config })
}

main().catch((error: unknown) => {
  if (error instanceof ConfigError) {
    process.stderr.write(`gateway: ${error.message}\n`)
  } else {
    process.stderr.write(
      `gateway: failed to start: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
    )
  }
  process.exitCode = 1
})
