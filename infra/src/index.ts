// Real infrastructure for Meridian, obtained in the order docs/explanation/architecture.md gives ("Real infrastructure on any machine"):
// endpoints from the environment, else a reachable Docker engine, else native processes under the cache folder.
export {
  type ConsulSettings,
  consulBaseUrl,
  consulEnvOf,
  consulSettingsFromEnv,
} from './consul-http.ts'
export { infraDown, stopTraceStore } from './down.ts'
export { type EngineArtifacts, engineArtifacts } from './engine-artifacts.ts'
export { infraEnv, logFileOf } from './env.ts'
export { freePort } from './free-port.ts'
export { type Layout, layoutFromEnv, repoRoot } from './layout.ts'
export { MissingPrerequisite, prepareCommand } from './missing-prerequisite.ts'
export type { ComponentName, EngineName, OptionalComponentName, Progress } from './native/engine.ts'
export {
  jaegerBinary,
  jaegerUiAssetsDir,
  nativeJaegerUiUrl,
  nativeOtlpEndpoint,
  pinnedJaegerVersion,
} from './native/jaeger.ts'
export { mailpitBinary, nativeMailpitUrl, nativeSmtpUrl, pinnedMailpitVersion } from './native/mailpit.ts'
export {
  type ComponentPlan,
  components,
  type Endpoints,
  type EnginePlan,
  endpointsEnv,
  endpointsOf,
  endpointVariable,
  type InfraOptions,
  kafkaSecurityOf,
  type Mode,
  mailpitUrlVariable,
  optionalComponents,
  optionalEndpointVariable,
  planInfra,
  planMail,
  planTraceStore,
} from './plan.ts'
export {
  databaseOf,
  databaseOfService,
  databaseUrl,
  databaseVariableOf,
  editPostgresUrl,
  kafkaClient,
  kafkaClientOfEnv,
  type PostgresClientOptions,
  postgresClient,
  provisionServiceRoles,
  serviceDatabases,
} from './probes.ts'
export { run, runLogged } from './processes.ts'
export { type ComponentStatus, infraStatus, runningSecureMachine } from './status.ts'
export {
  scaledMs,
  type TestTimeoutOptions,
  testTimeouts,
  testTimeScale,
  timeScaleVariable,
  waitMs,
} from './test-time.ts'
export { deadLetterTopic, expandTopics, loadTopicDeclaration, retryTopic, type TopicSpec } from './topics.ts'
export { holdTraceStore } from './trace-store-lock.ts'
export { ensureInfra, ensureSecureInfra, ensureTraceStore, provision, provisionTopics } from './up.ts'
