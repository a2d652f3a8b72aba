// Loaded before a service's own modules (`node --import`, the production launcher): turns tracing on when the OTEL_*
// variables ask for it, so that the instrumentations can patch ioredis, http and Socket.IO as they load.
//
// Tracing off (no OTLP endpoint, or OTEL_SDK_DISABLED=true), this module imports nothing of OpenTelemetry: no loader
// hook, no patching, no provider. The service's main validates the same variables again as part of its ServiceEnv.
import { register } from 'node:module'
import { loadConfig } from '../config.ts'
import { TracingEnv, tracesEndpoint } from './tracing-env.ts'

/** The modules the instrumentations patch: only these go through import-in-the-middle's loader hook. */
const patchedModules = ['http', 'https', 'node:http', 'node:https', 'ioredis', 'socket.io']

/** The variables, or undefined when one is wrong: main then names every bad variable as it loads ServiceEnv. */
function tracingConfig(): TracingEnv | undefined {
  try {
    return loadConfig(TracingEnv)
  } catch {
    return undefined
  }
}

const config = tracingConfig()
if (config !== undefined && tracesEndpoint(config) !== undefined) {
  // ESM imports reach the instrumentations through this hook; require() (CommonJS) through require-in-the-middle
  register(import.meta.resolve('@opentelemetry/instrumentation/hook.mjs'), {
    data: { include: patchedModules },
  })
  const { startTracing } = await import('./tracing.ts')
  startTracing({ config })
}
