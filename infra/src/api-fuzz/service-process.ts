// One service of the fuzzing run as a process of its own (system/service-process.ts), on a free port.
import { freePort } from '../free-port.ts'
import { type ServiceProcess, startServiceProcess as startOnPort } from '../system/service-process.ts'
import type { FuzzedService } from './services.ts'

export type { ServiceProcess }

export async function startServiceProcess(
  service: FuzzedService,
  options: { env: NodeJS.ProcessEnv; logFile: string; readyTimeoutMs?: number },
): Promise<ServiceProcess> {
  return startOnPort(service, { ...options, port: await freePort() })
}
