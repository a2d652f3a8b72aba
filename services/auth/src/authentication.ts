// Authentication inside auth: the chassis' authentication plugin on auth's own keys and sessions, and the routes
// that issue credentials (POST /login, /refresh, /api/auth/refresh, /logout, GET /.well-known/jwks.json).
import fastifyCookie from '@fastify/cookie'
import type { Sql } from '@meridian/db'
import { authPlugin, type ServiceApp, scheduleRounds } from '@meridian/service-kit'
import type { Redis } from 'ioredis'
import { type AuthConfig, sessionReplication } from './config.ts'
import { createCredentialRevocationsRepository } from './data/credential-revocations-repository.ts'
import { createCredentialRevocationsStore } from './data/credential-revocations-store.ts'
import { createLoginFailureCounters } from './data/login-failures.ts'
import { createProviderAccounts } from './data/oidc-payloads.ts'
import { createRefreshTokensRepository } from './data/refresh-tokens-repository.ts'
import { createSessionStore } from './data/session-store.ts'
import { createUsersRepository } from './data/users-repository.ts'
import { type AccessTokenSigning, createAccessTokenIssuer } from './domain/access-tokens.ts'
import type { ApiKeyUseCases } from './domain/api-keys.ts'
import {
  type CredentialRevoker,
  createCredentialRevoker,
  revocationKeepForMs,
} from './domain/credential-revocation.ts'
import { createLoginThrottle } from './domain/login-throttle.ts'
import { createRefreshTokens } from './domain/refresh-tokens.ts'
import { createSignIn, type SignIn } from './domain/sign-in.ts'
import {
  createKeyRing,
  type KeyRing,
  type KeyRingLogger,
  keyRingTiming,
  type ManagedKeyRing,
} from './domain/signing-keys.ts'
import { jwksRoutes } from './routes/jwks/index.ts'
import { sessionsRoutes } from './routes/sessions/index.ts'
import { tokensRoutes } from './routes/tokens/index.ts'

/** The key ring with the configured secret and timing (not started: the database may not be migrated yet). */
export function createConfiguredKeyRing(
  config: AuthConfig,
  sql: Sql,
  logger?: KeyRingLogger,
): ManagedKeyRing {
  return createKeyRing({
    sql,
    encryptionSecret: config.SIGNING_KEY_ENCRYPTION_SECRET,
    timing: keyRingTiming(config.SIGNING_KEY_ROTATION_SECONDS, config.JWKS_MAX_AGE_SECONDS),
    ...(logger ? { logger } : {}),
  })
}

export interface AuthenticationDependencies {
  config: AuthConfig
  sql: Sql
  redis: Redis
  keyRing: KeyRing
  /** resolves X-API-Key credentials */
  apiKeys: ApiKeyUseCases
  /** where credential revocations are delivered; `redis` when absent */
  revocationRedis?: Redis | undefined
}

/**
 * Registers the authentication plugin (app.authenticate, app.requireRole, request.principal) and the credential
 * routes. With JWT_ALGORITHM=HS256 tokens are signed and accepted with JWT_SECRET only; the JWKS still lists the
 * RSA keys, which sign OpenID Connect ID tokens either way. Returns what takes a user's credentials away and
 * the sign-in (the users resource and password changes use them).
 */
export async function registerAuthentication(
  app: ServiceApp,
  { config, sql, redis, keyRing, apiKeys, revocationRedis }: AuthenticationDependencies,
): Promise<{ revoker: CredentialRevoker; signIn: SignIn }> {
  const hs256Secret = config.JWT_ALGORITHM === 'HS256' ? config.JWT_SECRET : undefined
  await app.register(authPlugin, {
    // auth verifies its own tokens from the key ring: no HTTP round trip to its own JWKS
    jwt: hs256Secret
      ? { algorithm: 'HS256', secret: hs256Secret }
      : { algorithm: 'RS256', keys: (kid: string) => keyRing.verificationKey(kid) },
    issuer: config.JWT_ISSUER,
    audience: config.JWT_AUDIENCE,
    sessions: { redis },
    // auth's own answer is read from the database every time: never one from before a revocation
    apiKeys: { verify: (key) => apiKeys.verifyApiKey(key) },
    revocations: { redis },
  })
  if (!app.hasPlugin('@fastify/cookie')) await app.register(fastifyCookie)

  const signing: AccessTokenSigning = hs256Secret
    ? { algorithm: 'HS256', secret: hs256Secret }
    : { algorithm: 'RS256', keyRing }
  const refreshTokensRepository = createRefreshTokensRepository(sql)
  const revoker = createCredentialRevoker({
    sql,
    revocations: createCredentialRevocationsRepository(sql),
    store: createCredentialRevocationsStore(revocationRedis ?? redis),
    local: app.credentialRevocations,
    refreshTokens: refreshTokensRepository,
    providerAccounts: createProviderAccounts(sql),
    keepForMs: revocationKeepForMs(config),
    logger: app.log,
  })
  // Each time the Redis the revocations are delivered to is ready (connected, or reconnected after an outage or a
  // failover), every revocation in force is delivered again: a promoted replica may lack the last ones it was sent
  const storeRedis = revocationRedis ?? redis
  const redeliver = () => {
    revoker.redeliverInForce().then(
      (done) => {
        if (done.delivered > 0)
          app.log.info(done, 'credential revocations in force delivered again (Redis ready)')
      },
      (error: unknown) =>
        app.log.warn({ err: error }, 'credential revocations: delivering again failed; the rounds go on'),
    )
  }
  storeRedis.on('ready', redeliver)
  app.addHook('onClose', async () => {
    storeRedis.off('ready', redeliver)
  })
  // revocations whose delivery failed, or that a crash or another process (create-admin) left undelivered
  scheduleRounds(app, {
    name: 'credential revocations',
    intervalMs: config.REVOCATION_DELIVERY_INTERVAL_MS,
    round: () => revoker.deliverPending(),
    describe: (done) => (done.delivered + done.lapsed > 0 ? done : undefined),
  })
  const signIn = createSignIn({
    users: createUsersRepository(sql),
    accessTokens: createAccessTokenIssuer({
      signing,
      issuer: config.JWT_ISSUER,
      audience: config.JWT_AUDIENCE,
      ttlSeconds: config.ACCESS_TOKEN_TTL_SECONDS,
    }),
    refreshTokens: createRefreshTokens({
      repository: refreshTokensRepository,
      sql,
      ttlSeconds: config.REFRESH_TOKEN_TTL_SECONDS,
      logger: app.log,
    }),
    sessions: createSessionStore(redis, {
      ...sessionReplication(config),
      unreplicated: (acknowledged, asked) =>
        app.log.warn(
          { acknowledged, asked },
          'a new session is not on the replicas asked for yet: a Redis failover now would sign its customer out',
        ),
    }),
    throttle: createLoginThrottle({
      counters: createLoginFailureCounters(redis, config.LOGIN_FAILURE_WINDOW_SECONDS),
      maxPerAddress: config.LOGIN_MAX_FAILURES_PER_ADDRESS,
      maxPerAccount: config.LOGIN_MAX_FAILURES_PER_ACCOUNT,
      windowSeconds: config.LOGIN_FAILURE_WINDOW_SECONDS,
    }),
    sessionTtlSeconds: config.SESSION_TTL_SECONDS,
    revoker,
  })

  const refreshTokenTtlSeconds = config.REFRESH_TOKEN_TTL_SECONDS
  await app.register(sessionsRoutes, { signIn, refreshTokenTtlSeconds })
  await app.register(tokensRoutes, { signIn, refreshTokenTtlSeconds })
  await app.register(jwksRoutes, { keyRing, maxAgeSeconds: config.JWKS_MAX_AGE_SECONDS })
  return { revoker, signIn }
}
