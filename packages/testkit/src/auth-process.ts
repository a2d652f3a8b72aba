// The auth service as another service (or the gateway) meets it in production: a process of its own (its main.ts),
// on a fresh database, registered in Consul under a name of the test's own (the others' AUTH_SERVICE_NAME),
// verifying and issuing the same HS256 test tokens. The others only talk to it over HTTP, found in Consul.
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { freePort } from '@meridian/infra'
import { type SpawnedService, spawnService } from '@meridian/infra/system'
import { passingInConsul } from './consul.ts'
import { freshDatabase } from './database.ts'
import { eventually } from './eventually.ts'
import { serviceProcessEnv } from './service-app.ts'
import { uniqueName } from './unique-name.ts'

export interface AuthProcess {
  baseUrl: string
  /** its name in Consul: the AUTH_SERVICE_NAME of the services that call it */
  consulName: string
  logTail(lines?: number): string
  /** SIGTERM (it leaves Consul), then its database and logs go */
  stop(): Promise<void>
}

/** auth's folder in the repository: it is started as its own process, never imported */
const authDir = fileURLToPath(new URL('../../../services/auth', import.meta.url))

/** Starts auth; `env` adds to (or overrides) its environment. */
export async function startAuthProcess(env: Record<string, string> = {}): Promise<AuthProcess> {
  const consulName = uniqueName('auth')
  const logDir = mkdtempSync(join(tmpdir(), 'auth-process-'))
  const database = await freshDatabase('auth')
  let auth: SpawnedService | undefined
  try {
    auth = await spawnService(
      { name: 'auth', dir: authDir, entry: 'src/main.ts' },
      {
        port: await freePort(),
        logFile: join(logDir, 'auth.log'),
        env: { ...serviceProcessEnv({ databaseUrl: database.url, consulName }), ...env },
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
