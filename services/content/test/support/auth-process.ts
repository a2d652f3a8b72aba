// The auth service as content meets it in production: a process of its own (its main.ts), on a fresh database,
// registered in Consul under a name of this test's own (content's AUTH_SERVICE_NAME), verifying and issuing the same
// HS256 test tokens. Content only talks to it over HTTP, found in Consul, as it does in production.
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { freePort } from '@meridian/infra'
import { type ServiceProcess, startServiceProcess } from '@meridian/infra/system'
import { consulApi, eventually, freshDatabase, infraEndpoints, tokenEnv, uniqueName } from '@meridian/testkit'

export interface AuthProcess {
  baseUrl: string
  /** its name in Consul: content's AUTH_SERVICE_NAME */
  consulName: string
  logTail(lines?: number): string
  /** SIGTERM (it leaves Consul), then its database and logs go */
  stop(): Promise<void>
}

const authDir = fileURLToPath(new URL('../../../auth', import.meta.url))

/** Whether Consul lists a passing instance of `name`. */
async function passingInConsul(name: string): Promise<boolean> {
  const { baseUrl, headers } = consulApi()
  const response = await fetch(`${baseUrl}/v1/health/service/${encodeURIComponent(name)}?passing=true`, {
    headers,
  })
  return response.status === 200 && ((await response.json()) as unknown[]).length > 0
}

export async function startAuthProcess(): Promise<AuthProcess> {
  const endpoints = infraEndpoints()
  const consulName = uniqueName('auth')
  const logDir = mkdtempSync(join(tmpdir(), 'content-auth-'))
  const database = await freshDatabase('auth')
  let auth: ServiceProcess | undefined
  try {
    auth = await startServiceProcess(
      { name: 'auth', dir: authDir, entry: 'src/main.ts' },
      {
        port: await freePort(),
        logFile: join(logDir, 'auth.log'),
        env: {
          PATH: process.env.PATH ?? '',
          HOME: process.env.HOME ?? '',
          NODE_ENV: 'test',
          LOG_LEVEL: 'warn',
          DATABASE_URL: database.url,
          REDIS_URL: endpoints.redisUrl,
          KAFKA_BROKERS: endpoints.kafkaBrokers,
          CONSUL_HTTP_ADDR: endpoints.consulHttpAddr,
          ...(endpoints.consulToken ? { CONSUL_HTTP_TOKEN: endpoints.consulToken } : {}),
          CONSUL_REGISTER: 'true',
          CONSUL_SERVICE_NAME: consulName,
          RATE_LIMIT_MAX: '100000',
          ...tokenEnv,
        },
      },
    )
    const started = auth
    await eventually(`${consulName} passes in Consul`, () => passingInConsul(consulName).catch(() => false))
    return {
      baseUrl: started.baseUrl,
      consulName,
      logTail: (lines) => started.logTail(lines),
      async stop() {
        await started.stop()
        await database.drop()
        rmSync(logDir, { recursive: true, force: true })
      },
    }
  } catch (error) {
    await auth?.stop()
    await database.drop()
    rmSync(logDir, { recursive: true, force: true })
    throw error
  }
}
