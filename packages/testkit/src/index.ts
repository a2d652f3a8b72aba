// What tests need: the real infrastructure's endpoints and per-file isolation on it, so that test files can run in
// parallel without seeing each other's rows, messages, keys or services; and the assertions every suite shares.
export {
  type ApiKeysStandIn,
  type StandInKeyOptions,
  startApiKeysStandIn,
} from './api-keys-stand-in.ts'
export { type AuthProcess, startAuthProcess } from './auth-process.ts'
export { closedPort } from './closed-port.ts'
export { consulApi, passingInConsul } from './consul.ts'
export { freshDatabase, type TestDatabase } from './database.ts'
export { type Endpoints, infraEndpoints } from './endpoints.ts'
export {
  type AnswerParts,
  type EnvelopeError,
  type EnvelopeErrorDetail,
  type ErrorEnvelopeOptions,
  expectErrorEnvelope,
  fetchedAnswer,
  type HttpAnswer,
  httpAnswer,
  rawHttpAnswer,
} from './error-envelope.ts'
export { eventually } from './eventually.ts'
export {
  cheapUniqueItems,
  expectInputsBounded,
  inputSchemasOf,
  unboundedIn,
} from './input-bounds-check.ts'
export {
  freshEventTopics,
  freshTopics,
  namedTopics,
  type TestEventTopics,
  type TestTopics,
  testKafka,
} from './kafka.ts'
export { captureLogs, type LogCapture } from './logs.ts'
export {
  type Mail,
  type MailAddress,
  type Mailbox,
  type MailHeading,
  type MailMatch,
  type MailSummary,
  mailbox,
} from './mailbox.ts'
export { type MailpitEngine, mailpitEngine } from './mailpit-engine.ts'
export { type DocumentedApp, openApiDocumentOf } from './openapi-document.ts'
export { rawExchange, rawJsonPost } from './raw-http.ts'
export { freshRedis, type TestRedis } from './redis.ts'
export { type RedisRelay, type RedisRelayOptions, startRedisRelay } from './redis-relay.ts'
export {
  type RotationDrill,
  type RotationOutcome,
  type RotationStep,
  rotateUnderTraffic,
} from './rolling-rotation.ts'
export {
  type CredentialOperation,
  credentialOperations,
  describeServiceScopes,
  documentedScopes,
  expectScopesDeclared,
  expectScopesPass,
  expectScopesRefused,
  type ScopedApp,
  type ScopeSweepOptions,
  type ServiceScopesSuite,
  type StateReader,
  type StoredStateOptions,
  storedStateDigest,
} from './scope-checks.ts'
export {
  buildServiceTestApp,
  type ClosablePool,
  type ServiceTestApp,
  type ServiceTestAppOptions,
  type ServiceTestContext,
  serviceProcessEnv,
  serviceTestEnv,
  type TestableApp,
} from './service-app.ts'
export {
  type ChassisExpectations,
  consulChecksOf,
  describeServiceChassis,
  expectChassisAnswers,
  expectConsulLifecycle,
  type InjectableApp,
  type ServiceChassisSuite,
} from './service-checks.ts'
export { type StatementCounter, statementCounter } from './statements.ts'
export {
  scaledMs,
  type TestTimeoutOptions,
  testTimeouts,
  testTimeScale,
  timeScaleVariable,
  waitMs,
} from './test-time.ts'
export { accessToken, asAdmin, asService, asUser, testServiceCredential, tokenEnv } from './tokens.ts'
export { type StoredSpan, type StoredTrace, type TraceStore, useTraceStore } from './trace-store.ts'
export {
  attributeOf,
  installTestTracing,
  parentIdOf,
  type ReadableSpan,
  type TestTracing,
  traceparentOf,
} from './tracing.ts'
export { uniqueName } from './unique-name.ts'
