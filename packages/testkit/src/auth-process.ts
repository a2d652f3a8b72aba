// The auth service as content meets it in production: a process of its own (its main.ts), on a fresh database,
// registered in Consul under a name of this test's own (content's AUTH_SERVICE_NAME), verifying and issuing the same
// HS256 test tokens. Content only talks to it over HTTP, found in Consul, as it does in production.
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { freePort } from '@meridian/infra'
import { type ServiceProcess, startServiceProcess } from '@meridian/infra/system'
import { eventually, freshDatabase, passingInConsul, serviceProcessEnv, uniqueName } from '@meridian/testkit'

export interface AuthProcess {
  baseUrl: string
  /** its name in Consul: content's AUTH_SERVICE_NAME */
  consulName: string
  logTail(lines?: number): string
  /** SIGTERM (it leaves Consul), then its database and logs go */
  stop(): Promise<void>
}

const authDir = fileURLToPath(new URL('../../../auth', import.meta.url))

export async function startAuthProcess(): Promise<AuthProcess> {
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
        env: serviceProcessEnv({ databaseUrl: database.url, consulName }),
      },
    )
    const started = auth
    await eventually(`${consulName} passes in Consul`, () => passingInConsul(consulName))
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
