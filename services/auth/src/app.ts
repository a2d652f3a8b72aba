// The auth service as a Fastify app: chassis, users, credentials, password reset, address verification and the
// security mails it sends, OAuth 2.0 / OIDC, API keys. Never listens; main.ts and tests build it.
/// <reference path="./oidc/oidc-provider.d.ts" />
import { type Sql, tracedRepository } from '@meridian/db'
import { registerServiceEvents, type ServiceEvents } from '@meridian/events'
import {
  createServiceApp,
  type LogStream,
  registerAuditTrail,
  registerVersionedApi,
  type ServiceApp,
  type ServiceClient,
  serviceAppOptions,
} from '@meridian/service-kit'
import type { onRequestHookHandler } from 'fastify'
import type { Redis } from 'ioredis'
import { createConfiguredKeyRing, registerAuthentication } from './authentication.ts'
import type { AuthConfig } from './config.ts'
import { createApiKeysRepository } from './data/api-keys-repository.ts'
import { createEmailVerificationsRepository } from './data/email-verifications-repository.ts'
import { createLoginFailureCounters } from './data/login-failures.ts'
import { createPasswordResetsRepository } from './data/password-resets-repository.ts'
import { createSessionStore } from './data/session-store.ts'
import { createUserPasswordsRepository } from './data/user-passwords-repository.ts'
import { createUsersRepository } from './data/users-repository.ts'
import { createAddressThrottle } from './domain/address-throttle.ts'
import { createApiKeyUseCases } from './domain/api-keys.ts'
import type { CredentialRevoker } from './domain/credential-revocation.ts'
import { createEmailVerification, type EmailVerification } from './domain/email-verification.ts'
import { createPasswordChange } from './domain/password-change.ts'
import { createPasswordReset } from './domain/password-reset.ts'
import type { SignIn } from './domain/sign-in.ts'
import type { KeyRing } from './domain/signing-keys.ts'
import { createUserUseCases } from './domain/users.ts'
import { oidcPlugin } from './oidc/oidc-plugin.ts'
import { apiKeysRoutes } from './routes/api-keys/index.ts'
import { emailVerificationRoutes } from './routes/email-verifications/index.ts'
import { internalRoutes } from './routes/internal/index.ts'
import { passwordResetRoutes } from './routes/password-resets/index.ts'
import { passwordRoutes } from './routes/passwords/index.ts'
import { usersGuards } from './routes/users/access.ts'
import { usersRoutes } from './routes/users/index.ts'
import { registerSecurityMails, type SecurityMails } from './security-mail-setup.ts'

export const serviceName = 'auth'

// what a process hosting the app needs besides buildApp (main.ts, the benchmark's server)
export { createConfiguredKeyRing } from './authentication.ts'
export { type AuthConfig, loadAuthConfig } from './config.ts'
export { migrateAuthDatabase } from './migrations.ts'

export interface AuthDependencies {
  config: AuthConfig
  sql: Sql
  redis: Redis
  /** tests read logs from here; stdout otherwise */
  logStream?: LogStream
  /**
   * the RSA signing keys, started by the caller once the database is migrated (main.ts, tests). OAuth 2.0 / OpenID
   * Connect (src/oidc) is served only when given; without one, RS256 logins fail (an unstarted ring has no key).
   */
  keyRing?: KeyRing
  /**
   * where credential revocations are delivered (their Redis key and announcement); `redis` when absent. Tests give
   * one that fails to prove a failed delivery is repeated.
   */
  revocationRedis?: Redis
  /** the event backbone (user events leave through the outbox): main.ts's `true`; none by default */
  events?: ServiceEvents
}

export async function buildApp({
  config,
  sql,
  redis,
  logStream,
  keyRing,
  revocationRedis,
  events,
}: AuthDependencies): Promise<ServiceApp> {
  const app = await createServiceApp(
    serviceAppOptions(
      { config, sql, redis, logStream },
      {
        name: serviceName,
        description: 'Identity: users, passwords, tokens, sessions, OAuth 2.0 / OpenID Connect, API keys',
        // auth verifies its own credentials (registerAuthentication below)
        authentication: false,
      },
    ),
  )
  // user.registered leaves through the outbox: one relay per database is active, the others stand by
  await registerServiceEvents(app, { service: serviceName, config, sql, events })

  const apiKeys = createApiKeyUseCases(tracedRepository('api_keys', createApiKeysRepository(sql)), sql)
  // login, refresh, logout, JWKS, and app.authenticate / app.requireRole for the routes below
  const { revoker, signIn } = await registerAuthentication(app, {
    config,
    sql,
    redis,
    keyRing: keyRing ?? createConfiguredKeyRing(config, sql),
    apiKeys,
    revocationRedis,
  })

  const guards = usersGuards(app)
  // the security mails auth sends itself (links, notices), from its own outbox
  const mails = registerSecurityMails(app, config, sql)
  // a link proving a registered address, and the change of one
  const emailVerification = await registerEmailVerification(app, {
    config,
    sql,
    redis,
    signIn,
    mails,
    guard: guards.write ?? [],
  })
  const users = createUserUseCases(
    tracedRepository('users', createUsersRepository(sql)),
    sql,
    revoker,
    emailVerification,
  )
  // its audit trail, for admins at /api/v1/admin/audit/<service> (service-kit's audit/)
  await registerAuditTrail(app, { sql, service: serviceName })
  await registerVersionedApi(app, usersRoutes, { users, guards })
  const passwordChange = createPasswordChange({
    sql,
    users: tracedRepository('users', createUsersRepository(sql)),
    passwords: tracedRepository('user_passwords', createUserPasswordsRepository(sql)),
    signIn,
    revoker,
    notices: mails.queue,
  })
  await registerVersionedApi(app, passwordRoutes, { passwordChange, guard: guards.write ?? [] })
  await registerPasswordReset(app, { config, sql, redis, revoker, mails })
  await registerVersionedApi(app, apiKeysRoutes, { apiKeys })
  // for the other services: whose is an API key (not routed by the gateway)
  await app.register(internalRoutes, { apiKeys })
  // OAuth 2.0 / OpenID Connect at the root: /authorize, /token, /userinfo, discovery, device flow (src/oidc)
  if (keyRing) await app.register(oidcPlugin, { config, sql, redis, keyRing })
  return app
}

/** The limit per client of the routes that take mailed links' tokens (PASSWORD_RESET_MAX_PER_CLIENT, _WINDOW_SECONDS). */
const perClientOf = (config: AuthConfig) => ({
  max: config.PASSWORD_RESET_MAX_PER_CLIENT,
  timeWindowMs: config.PASSWORD_RESET_WINDOW_SECONDS * 1000,
})

/**
 * The limit per address of the requests that mail it a link (PASSWORD_RESET_MAX_PER_ACCOUNT, _WINDOW_SECONDS), each kind
 * counted on its own.
 */
const perAddressOf = (
  config: AuthConfig,
  redis: Redis,
  { kind, refusal }: { kind: string; refusal: string },
) =>
  createAddressThrottle({
    counters: createLoginFailureCounters(redis, config.PASSWORD_RESET_WINDOW_SECONDS),
    kind,
    maxPerAddress: config.PASSWORD_RESET_MAX_PER_ACCOUNT,
    windowSeconds: config.PASSWORD_RESET_WINDOW_SECONDS,
    refusal,
  })

/** POST /api/v1/email-verifications/{token} and /api/v1/users/{id}/email-change; the use cases registration mails with. */
async function registerEmailVerification(
  app: ServiceApp,
  {
    config,
    sql,
    redis,
    signIn,
    mails,
    guard,
  }: {
    config: AuthConfig
    sql: Sql
    redis: Redis
    signIn: SignIn
    mails: SecurityMails
    guard: onRequestHookHandler[]
  },
): Promise<EmailVerification> {
  const emailVerification = createEmailVerification({
    sql,
    users: tracedRepository('users', createUsersRepository(sql)),
    verifications: tracedRepository('email_verifications', createEmailVerificationsRepository(sql)),
    mails: mails.repository,
    sealing: mails.sealing,
    signIn,
    throttle: perAddressOf(config, redis, {
      kind: 'email-verifications',
      refusal: 'Too many requests for a new link to this address. Try again later.',
    }),
    sessions: createSessionStore(redis),
    logger: app.log,
    settings: { verifyUrl: config.EMAIL_VERIFICATION_URL, ttlMs: config.EMAIL_VERIFICATION_TTL_MS },
  })
  await registerVersionedApi(app, emailVerificationRoutes, {
    emailVerification,
    guard,
    perClient: perClientOf(config),
  })
  return emailVerification
}

/** POST /api/v1/password-resets and /{token}: the reset, its limits (per client: the route's; per address: Redis). */
async function registerPasswordReset(
  app: ServiceApp,
  {
    config,
    sql,
    redis,
    revoker,
    mails,
  }: { config: AuthConfig; sql: Sql; redis: Redis; revoker: CredentialRevoker; mails: SecurityMails },
): Promise<void> {
  const passwordReset = createPasswordReset({
    sql,
    resets: tracedRepository('password_resets', createPasswordResetsRepository(sql)),
    passwords: tracedRepository('user_passwords', createUserPasswordsRepository(sql)),
    sealing: mails.sealing,
    notices: mails.queue,
    revoker,
    throttle: perAddressOf(config, redis, {
      kind: 'password-resets',
      refusal: 'Too many password reset requests for this address. Try again later.',
    }),
    settings: { resetUrl: config.PASSWORD_RESET_URL, ttlMs: config.PASSWORD_RESET_TTL_MS },
  })
  await registerVersionedApi(app, passwordResetRoutes, {
    passwordReset,
    perClient: perClientOf(config),
  })
}

/**
 * The app as main.ts runs it, on a migrated database: its signing keys loaded (the first instance creates one) and
 * checked for rotation every minute; the key ring stops after the app has closed, before the stores.
 */
export async function buildAuthService(
  dependencies: Omit<AuthDependencies, 'keyRing'>,
): Promise<{ app: ServiceApp; clients: ServiceClient[] }> {
  // logs through the app's logger, which exists by the time the key ring starts
  let app: ServiceApp | undefined
  const keyRing = createConfiguredKeyRing(dependencies.config, dependencies.sql, {
    info: (details, message) => app?.log.info(details, message),
    error: (details, message) => app?.log.error(details, message),
  })
  app = await buildApp({ ...dependencies, keyRing })
  await keyRing.start()
  return { app, clients: [keyRing] }
}
