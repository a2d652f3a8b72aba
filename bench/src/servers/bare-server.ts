// Server B: bare Fastify doing the users resource's work (src/servers/bare-app.ts), same pool size as the chassis.
import { createDatabase } from '@meridian/db'
import { buildBareApp } from './bare-app.ts'
import { serveOverIpc } from './serve-over-ipc.ts'
import { readServerEnv } from './server-env.ts'

await serveOverIpc(async () => {
  const env = readServerEnv()
  const sql = createDatabase(env.databaseUrl, { max: env.poolMax, applicationName: 'bench-bare' })
  const app = buildBareApp(sql)
  await app.listen({ host: '127.0.0.1', port: 0 })
  const address = app.server.address()
  if (!address || typeof address === 'string') throw new Error('the bare app is not listening on TCP')
  return {
    port: address.port,
    async close() {
      await app.close()
      await sql.end({ timeout: 5 })
    },
  }
})
