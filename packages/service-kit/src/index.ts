export type { DestinationStream as LogStream } from 'pino'
export {
  bodyLimitBytes,
  createServiceApp,
  registerVersionedApi,
  type ServiceApp,
  type ServiceAppOptions,
} from './app.ts'
export { ConfigError, loadConfig, ServiceEnv, serviceEnv } from './config.ts'
export { sendError, toAppError, validationDetails } from './error-handler.ts'
export { createHealthRegistry, type HealthCheck, type HealthRegistry } from './health.ts'
export { loggerOptions, redactPaths } from './logging.ts'
export { createServiceMetrics, type ServiceMetrics } from './metrics.ts'
export { errorResponses, type ServiceKitOptions, serviceKitPlugin } from './plugin.ts'
export { requestIdFrom, requestIdHeader } from './request-id.ts'
