// @meridian/infra/secure: secure engines (TLS from a run's CA, a credential per service) for the tests of the
// services' clients and for `scripts/infra up --secure`.
export { type CertificateAuthority, certificateAuthority, type IssuedCertificate } from './certificates.ts'
export { randomSecret, type SecureEngineInstance, type SecureEngineOptions } from './engine.ts'
export { type SecurePostgresPorts, securePgHba, startSecurePostgres } from './postgres.ts'
