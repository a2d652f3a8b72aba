// Secure engines (issue 45): the run's certificate authority, and each engine started with TLS and a credential per
// service.
export { type CertificateAuthority, certificateAuthority, type IssuedCertificate } from './certificates.ts'
export { instanceCredentials, type SecureEngineInstance, type SecureEngineOptions } from './engine.ts'
export { type SecureRedisOptions, startSecureRedis } from './redis.ts'
export { redisAclRules, redisAclTemplate, redisAdminUser, serviceCommandRules } from './redis-acl.ts'
export { redisTlsFromEnv } from './redis-tls.ts'
