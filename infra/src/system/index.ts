// The whole system as processes (@meridian/infra/system): startSystem and the pieces it is made of.
export { type AdministratorRequest, makeAdministrator } from './administrator.ts'
export { createRunDatabase, type RunDatabase } from './databases.ts'
export { buildServices, productionSettings, systemFormFromEnv } from './production.ts'
export { systemRedisDatabase, withRedisDatabase } from './redis-database.ts'
export { discoverServices, gatewayName, identityProvider, type SystemService } from './services.ts'
export { type SpawnedService, type SystemForm, spawnService } from './spawned-service.ts'
export {
  developmentWebhookSecret,
  type MeridianSystem,
  paymentWebhookPath,
  type SystemCluster,
  type SystemHost,
  type SystemOptions,
  type SystemServiceInfo,
  startSystem,
  systemSettings,
  withoutEngineCredentials,
} from './system.ts'
