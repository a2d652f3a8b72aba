// One service of the fuzzing run as a process of its own (system/spawned-service.ts), on a free port.
import { freePort } from '../free-port.ts'
import { type SpawnedService, spawnService as startOnPort } from '../system/spawned-service.ts'
import type { FuzzedService } from './services.ts'

export type { SpawnedService }

export async function spawnService(
  service: FuzzedService,
  options: { env: NodeJS.ProcessEnv; logFile: string; readyTimeoutMs?: number },
): Promise<SpawnedService> {
  return startOnPort(service, { ...options, port: await freePort() })
}
