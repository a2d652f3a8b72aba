export {
  type AccessTokenOptions,
  clockToleranceMs,
  type JwtVerification,
} from './access-token.ts'
export {
  type ApiKeysAtAuth,
  type ApiKeysFromAuth,
  type ApiKeysFromAuthOptions,
  apiKeysFromAuth,
  apiKeysFromAuthDefaults,
  apiKeysFromDiscoveredAuth,
} from './api-keys-from-auth.ts'
export {
  type AuthPluginOptions,
  authMessages,
  authPlugin,
  hasApiKeyInQuery,
  type PresentedCredential,
} from './auth-plugin.ts'
export {
  type CredentialRevocations,
  type FollowRevocationsOptions,
  followCredentialRevocations,
  sessionIdHash,
} from './credential-revocations.ts'
export { authOptionsFromEnv } from './env-options.ts'
export { jwksDefaults } from './jwks-key-source.ts'
export {
  assertOwnerOrRole,
  assertScopes,
  authenticatedPrincipal,
  holdsRole,
  holdsScope,
  type Principal,
  principalFromClaims,
} from './principal.ts'
export {
  isInternalPath,
  sentServiceCredential,
  serviceCredentialHeader,
  serviceCredentialMessages,
  serviceCredentialVerifier,
} from './service-credential.ts'
