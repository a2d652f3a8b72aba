// Engines with credentials and TLS (issue 45): the run's certificate authority and each engine's secure instance.
export { type CertificateAuthority, certificateAuthority, type IssuedCertificate } from './certificates.ts'
export {
  consulServiceRules,
  type SecureConsulInstance,
  type SecureConsulOptions,
  type SecureConsulPorts,
  startSecureConsul,
} from './consul.ts'
export {
  instanceCredentials,
  instanceSecrets,
  randomSecret,
  type SecureEngineInstance,
  type SecureEngineOptions,
} from './engine.ts'
export {
  kafkaAdminUser,
  type SecureKafkaInstance,
  type SecureKafkaOptions,
  type SecureKafkaPorts,
  startSecureKafka,
} from './kafka.ts'
export {
  downSecureEngines,
  freeSecurePorts,
  runningSecureEngines,
  type SecureMachine,
  type SecureMachinePorts,
  type SecureUpOptions,
  secureMachine,
  securePortsFromEnv,
  securePrincipals,
  secureStateDir,
  standardSecurePorts,
  upSecureEngines,
} from './machine.ts'
export { type SecurePostgresPorts, securePgHba, startSecurePostgres } from './postgres.ts'
export { type SecureRedisOptions, startSecureRedis } from './redis.ts'
export { redisAclRules, redisAclTemplate, redisAdminUser, serviceCommandRules } from './redis-acl.ts'
export { redisTlsFromEnv } from './redis-tls.ts'
