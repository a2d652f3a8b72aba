// Engines with credentials and TLS (issue 45): the run's certificate authority and each engine's secure instance.
export { type CertificateAuthority, certificateAuthority, type IssuedCertificate } from './certificates.ts'
export {
  consulServiceRules,
  type SecureConsulInstance,
  type SecureConsulOptions,
  type SecureConsulPorts,
  startSecureConsul,
} from './consul.ts'
export type { SecureEngineInstance, SecureEngineOptions } from './engine.ts'
