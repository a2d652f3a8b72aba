// Secure engines (issue 45): the run's certificate authority, and each engine started with TLS and a credential per
// service.
export { type CertificateAuthority, certificateAuthority, type IssuedCertificate } from './certificates.ts'
export { instanceCredentials, type SecureEngineInstance, type SecureEngineOptions } from './engine.ts'
export {
  kafkaAdminUser,
  type SecureKafkaInstance,
  type SecureKafkaOptions,
  type SecureKafkaPorts,
  startSecureKafka,
} from './kafka.ts'
