export type { DestinationStream as LogStream } from 'pino'
export {
  bodyLimitBytes,
  chassisOptions,
  createServiceApp,
  maxPathParameterLength,
  registerVersionedApi,
  type ServiceApp,
  type ServiceAppOptions,
  type ServiceDependencies,
  serviceAppOptions,
} from './app.ts'
export {
  type AuditRecord,
  type AuditSource,
  actorOf,
  appendAudit,
  auditMigrationsDir,
  auditSourceOf,
  migrateAuditLog,
  nextAuditQuery,
  readAudit,
} from './audit/audit-log.ts'
export { registerAuditTrail } from './audit/audit-routes.ts'
export * from './auth/index.ts'
export {
  carrierKeyMatcher,
  carrierKeysIn,
  carrierKeysVariable,
  carrierOfKey,
  type NamedCarrierKey,
  namedCarrierKeysIn,
  namedCarrierKeysVariable,
} from './carrier-keys.ts'
export { checkedValue } from './checked-value.ts'
export {
  ConfigError,
  developmentOnlyDefault,
  exactOrigins,
  listOf,
  loadConfig,
  originProblems,
  ownStoresEnv,
  RedisSentinelEnv,
  RedisTlsEnv,
  ServiceEnv,
  serviceEnv,
} from './config.ts'
export { type EngineVariables, type PlaintextEngine, plaintextEngines } from './engine-transport.ts'
export {
  maxValidationDetails,
  moreProblems,
  sendError,
  toAppError,
  validationDetails,
} from './error-handler.ts'
export { createHealthRegistry, type HealthCheck, type HealthRegistry } from './health.ts'
export {
  assertIdempotencyKeyOnce,
  canonicalJson,
  fingerprintVersion,
  headerLines,
  idempotencyKeyChecked,
  idempotencyKeyOf,
  idempotencySecretVariable,
  legacyRequestFingerprint,
  type RequestFingerprints,
  requestFingerprints,
} from './idempotency.ts'
export {
  type BoundProblem,
  boundProblemAsAjvIssue,
  boundsExceeded,
  maxBoundProblems,
} from './input-bounds.ts'
export { jsonBodyMessages, jsonDepthExceeds, maxJsonDepth } from './json-body.ts'
export {
  loggableUrl,
  loggerOptions,
  redactedSegment,
  redactPaths,
  redactSecretPathSegments,
} from './logging.ts'
export { createServiceMetrics, type MetricsFormat, metricsFormat, type ServiceMetrics } from './metrics.ts'
export {
  chassisStatuses,
  type DeclaredScopes,
  declaredScopes,
  documentedErrorResponse,
  errorResponses,
  security,
  securitySchemes,
  takesCredential,
} from './openapi.ts'
export { type RuntimeState, type ServiceKitOptions, serviceKitPlugin } from './plugin.ts'
export {
  type SyncedCount,
  type SyncedRedisCounter,
  type SyncedRedisStoreOptions,
  syncedRedisCounter,
} from './rate-limit-store.ts'
export {
  createRedis,
  type RedisSentinelVariables,
  type RedisTlsFiles,
  redisTlsOptions,
  type ServiceRedisOptions,
  sentinelAddresses,
} from './redis.ts'
export {
  type ConsulCallOptions,
  type ConsulClient,
  type ConsulClientOptions,
  type ConsulQuery,
  ConsulRequestError,
  type ConsulResponse,
  type ConsulTls,
  consulBaseUrl,
  createConsulClient,
} from './registry/consul-client.ts'
export { consulDurationToMs } from './registry/consul-duration.ts'
export { type ConsulEnv, consulOptionsFromEnv } from './registry/consul-env.ts'
export type { RegistryLogger } from './registry/registry-logger.ts'
export {
  followRuntimeSettings,
  type Maintenance,
  maintenanceDefaults,
  parseMaintenance,
  type RuntimeSettings,
  type RuntimeSettingsOptions,
  type RuntimeSettingsWatch,
  runtimeSettingKeys,
  runtimeSettingsPrefix,
} from './registry/runtime-settings.ts'
export {
  createDiscovery,
  type DiscoveryOptions,
  type DiscoveryRetry,
  discoveryDefaults,
  type InstancesListener,
  type ServiceDiscovery,
  type ServiceInstance,
} from './registry/service-discovery.ts'
export {
  type RegisterServiceOptions,
  type RegistrationTiming,
  registerService,
  registrationDefaults,
  type ServiceMeta,
  type ServiceRegistration,
} from './registry/service-registration.ts'
export { requestIdFrom, requestIdHeader } from './request-id.ts'
export { type RoundsOptions, scheduleRounds } from './rounds.ts'
export {
  type RunningService,
  runMain,
  runService,
  type ServiceClient,
  type ServiceRunConfig,
  type StartServiceOptions,
  startService,
} from './run-service.ts'
export {
  type BuiltService,
  type DatabaseServiceDeclaration,
  type MainDependencies,
  type StatelessServiceDeclaration,
  serviceMain,
} from './service-main.ts'
// tracing as every service sees it; starting it (and the SDK it loads) is @meridian/service-kit/tracing's
export { activeTracing, type TracedService, type Tracing } from './tracing/active-tracing.ts'
export { requestIdAttribute } from './tracing/request-tracing.ts'
export {
  activeSpanIds,
  detachedFromTrace,
  injectTraceContext,
  inSpan,
  type SpanOptions,
  undiciCarriesTraceContext,
} from './tracing/spans.ts'
export { TracingEnv, tracesEndpoint } from './tracing/tracing-env.ts'
export {
  createDiscoveredUpstream,
  type DiscoveredUpstream,
  type DiscoveredUpstreamOptions,
} from './upstream/discovered-upstream.ts'
export {
  createUpstreamClient,
  type UpstreamClient,
  type UpstreamClientOptions,
  type UpstreamMethod,
  type UpstreamRequest,
  type UpstreamResponse,
  upstreamDefaults,
} from './upstream/upstream-client.ts'
export {
  appErrorForUpstreamStatus,
  UpstreamStatusError,
  UpstreamTimeoutError,
  upstreamUnavailable,
} from './upstream/upstream-failure.ts'
export { currentWork, registerWorkContext, type Work, withWork, workLogFields } from './work-context.ts'
