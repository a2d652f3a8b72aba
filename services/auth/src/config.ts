// The auth service's environment.
import { mailSenderEnv, smtpEnv } from '@meridian/mail'
import {
  ConfigError,
  developmentOnlyDefault,
  loadConfig,
  ownStoresEnv,
  serviceEnv,
} from '@meridian/service-kit'
import { type Static, Type } from 'typebox'
import { encryptionSecretsOf } from './domain/key-encryption.ts'

/** A confidential client's secret, or up to four comma-separated while it is rotated (each 32 to 512 characters). */
const clientSecretList = {
  minLength: 32,
  maxLength: 4 * 513,
  pattern: '^[^,\\s]{32,512}(?:,[^,\\s]{32,512}){0,3}$',
}

export const AuthEnv = serviceEnv({
  ...ownStoresEnv({ port: 3001, database: 'auth' }),
  // --- OAuth 2.0 / OpenID Connect (src/oidc) ---------------------------------------------------------------
  // The provider's public address is JWT_ISSUER (service-kit's, shared with every verifier): its issuer, and the
  // origin of every endpoint it advertises and redirects to, whatever address a request reached auth by.
  // The secrets' and redirect addresses' defaults are public development values: production refuses to start while
  // any of them is left (developmentOnlyDefault).
  /** comma-separated secrets signing the provider's cookies; the first signs, every one verifies (prepend to rotate) */
  OIDC_COOKIE_KEYS: Type.String({
    minLength: 32,
    ...developmentOnlyDefault('insecure-development-oidc-cookie-key-0001'),
  }),
  /** comma-separated, matched exactly: the public SPA client `meridian-spa` (PKCE, no secret) */
  OIDC_SPA_REDIRECT_URIS: Type.String({
    minLength: 1,
    // Vite's dev server, and the console as the gateway serves it (scripts/dev): a developer's machine
    ...developmentOnlyDefault(
      'http://localhost:5173/callback,http://localhost:5173/console/,http://127.0.0.1:8080/console/,http://localhost:8080/console/',
    ),
  }),
  /** comma-separated, matched exactly: the confidential web client `meridian-web` */
  OIDC_WEB_REDIRECT_URIS: Type.String({
    minLength: 1,
    ...developmentOnlyDefault('http://localhost:3000/callback'),
  }),
  /** its secret, or up to four comma-separated: every one is accepted (prepend a new one to rotate) */
  OIDC_WEB_CLIENT_SECRET: Type.String({
    ...clientSecretList,
    ...developmentOnlyDefault('insecure-development-meridian-web-secret'),
  }),
  /** `meridian-machine`: client_credentials only; its secret, or up to four as above */
  OIDC_MACHINE_CLIENT_SECRET: Type.String({
    ...clientSecretList,
    ...developmentOnlyDefault('insecure-development-meridian-machine-secret'),
  }),
  // --- end of OAuth 2.0 / OpenID Connect ---------------------------------------------------------------------

  // Tokens, sessions, signing keys and login throttling (POST /login, /refresh, /logout, /.well-known/jwks.json).
  /** lifetime of access tokens (spec: 15 to 60 minutes) */
  ACCESS_TOKEN_TTL_SECONDS: Type.Integer({ minimum: 900, maximum: 3600, default: 900 }),
  /** lifetime of each refresh token; every use rotates it and starts a new lifetime (default 14 days) */
  REFRESH_TOKEN_TTL_SECONDS: Type.Integer({ minimum: 3600, maximum: 7_776_000, default: 1_209_600 }),
  /** lifetime of a cookie session, in Redis and as the cookie's Max-Age (default 8 hours) */
  SESSION_TTL_SECONDS: Type.Integer({ minimum: 300, maximum: 604_800, default: 28_800 }),
  /**
   * replicas that must hold a new cookie session before the login answers (Redis' WAIT): a failover right after it
   * then keeps it. Default 1 with REDIS_SENTINELS, 0 (no wait) without.
   */
  SESSION_WAIT_REPLICAS: Type.Optional(Type.Integer({ minimum: 0, maximum: 9 })),
  /** how long a login waits for them, ms; past it the login answers anyway and the shortfall is logged */
  SESSION_WAIT_TIMEOUT_MS: Type.Integer({ minimum: 10, maximum: 10_000, default: 500 }),
  /**
   * encrypts the RSA private keys and the security mails' links at rest (AES-256-GCM, keys derived with HKDF-SHA-256): a
   * long random value, or a comma-separated list of them while it is rotated (the first encrypts; what is stored under
   * another is sealed again under the first). The default is for development only, is public, and is refused when
   * NODE_ENV=production.
   */
  SIGNING_KEY_ENCRYPTION_SECRET: Type.String({
    minLength: 32,
    maxLength: 4 * 4097,
    // one secret, or up to four (`new,old`) while it is rotated: the first encrypts, each decrypts (key-encryption.ts)
    pattern: '^[^,\\s]{32,4096}(?:,[^,\\s]{32,4096}){0,3}$',
    ...developmentOnlyDefault('insecure-development-only-signing-key-secret'),
  }),
  /** how long one RSA key signs before the next one takes over (default 30 days) */
  SIGNING_KEY_ROTATION_SECONDS: Type.Integer({ minimum: 86_400, default: 2_592_000 }),
  /** Cache-Control max-age of /.well-known/jwks.json; also part of the margin a new key is published ahead */
  JWKS_MAX_AGE_SECONDS: Type.Integer({ minimum: 0, maximum: 3600, default: 300 }),
  /** failed logins from one client address within the window before 429 */
  LOGIN_MAX_FAILURES_PER_ADDRESS: Type.Integer({ minimum: 1, default: 20 }),
  /** failed logins for one (normalised) email within the window before 429, whether the account exists or not */
  LOGIN_MAX_FAILURES_PER_ACCOUNT: Type.Integer({ minimum: 1, default: 5 }),
  LOGIN_FAILURE_WINDOW_SECONDS: Type.Integer({ minimum: 1, default: 900 }),
  /**
   * how often revocations not yet delivered to Redis (a failed delivery, a crash after the commit, create-admin's)
   * are delivered: the most a Redis outage delays one past its end
   */
  REVOCATION_DELIVERY_INTERVAL_MS: Type.Integer({ minimum: 50, maximum: 60_000, default: 1000 }),

  // --- Password reset and the security mails (docs/how-to/email.md) ---------------------------------------------------
  // auth mails a reset link, a password changed notice and an address to verify itself, over the SMTP server of
  // @meridian/mail's settings, from an outbox of its own (security_mails)
  ...smtpEnv(),
  PASSWORD_RESET_URL: Type.String({
    pattern: '^https?://[^\\s]{1,1900}$',
    maxLength: 1900,
    expectation: 'must be an http(s) address, e.g. https://shop.example/console/#/reset-password',
    // the console on a developer's machine (the gateway serves it): production refuses to start without its own
    ...developmentOnlyDefault('http://127.0.0.1:8080/console/#/reset-password'),
    description:
      "the page that sets a new password: a reset mail's link is this address, `/` and the token (in the fragment, as here, no server ever receives or logs it)",
  }),
  PASSWORD_RESET_TTL_MS: Type.Integer({
    minimum: 60_000,
    maximum: 86_400_000,
    default: 1_800_000,
    description:
      'how long a reset link works, ms (default 30 minutes); a newer link, a use or a password change end it sooner',
  }),
  EMAIL_VERIFICATION_URL: Type.String({
    pattern: '^https?://[^\\s]{1,1900}$',
    maxLength: 1900,
    expectation: 'must be an http(s) address, e.g. https://shop.example/console/#/verify-email',
    ...developmentOnlyDefault('http://127.0.0.1:8080/console/#/verify-email'),
    description:
      "the page that proves an address: a verification mail's link is this address, `/` and the token (in the fragment, as here, no server ever receives or logs it)",
  }),
  EMAIL_VERIFICATION_TTL_MS: Type.Integer({
    minimum: 60_000,
    maximum: 604_800_000,
    default: 86_400_000,
    description:
      'how long a link proving an address works, ms (default 24 hours); a newer link of the same kind ends it',
  }),
  PASSWORD_RESET_MAX_PER_ACCOUNT: Type.Integer({
    minimum: 1,
    maximum: 1000,
    default: 5,
    description:
      'reset requests for one (normalised) address within the window before 429, whether the account exists or not',
  }),
  PASSWORD_RESET_MAX_PER_CLIENT: Type.Integer({
    minimum: 1,
    maximum: 10_000,
    default: 20,
    description:
      'requests and uses of mailed links (password resets, address verifications and changes) from one client address within the window before 429',
  }),
  PASSWORD_RESET_WINDOW_SECONDS: Type.Integer({
    minimum: 1,
    maximum: 86_400,
    default: 3600,
    description: "the reset limits' window, s",
  }),
  ...mailSenderEnv('security-mail sender', 'meridian_auth_security_mails_total'),
})
export type AuthConfig = Static<typeof AuthEnv>

export function loadAuthConfig(env: NodeJS.ProcessEnv = process.env): AuthConfig {
  const config = loadConfig(AuthEnv, env)
  // rules that span variables, which the per-variable schema cannot say
  const problems: string[] = []
  if (config.JWT_ALGORITHM === 'HS256' && !config.JWT_SECRET) {
    problems.push('JWT_SECRET: required when JWT_ALGORITHM is HS256')
  }
  try {
    encryptionSecretsOf(config.SIGNING_KEY_ENCRYPTION_SECRET)
  } catch (error) {
    problems.push(error instanceof Error ? error.message : String(error))
  }
  const issuerProblem = publicOriginProblem(config.JWT_ISSUER)
  if (issuerProblem) problems.push(`JWT_ISSUER: ${issuerProblem}`)
  if (problems.length > 0) throw new ConfigError(problems)
  return config
}

/**
 * Why a value cannot be the provider's public address, or undefined when it can: an http(s) origin (no path, query,
 * fragment or credentials), since the provider serves its endpoints at the root of that origin (the gateway's).
 */
export function publicOriginProblem(value: string): string | undefined {
  let url: URL
  try {
    url = new URL(value)
  } catch {
    return 'must be an absolute URL, e.g. https://api.example.com (the public address of the gateway)'
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return 'must be an http or https URL'
  if (
    url.username ||
    url.password ||
    url.search ||
    url.hash ||
    (url.pathname !== '/' && url.pathname !== '')
  ) {
    return 'must be an origin only (scheme, host and port), e.g. https://api.example.com'
  }
  if (value.endsWith('/')) return 'must not end with a slash (it is compared as written, e.g. in `iss`)'
  return undefined
}

/** How a new cookie session is made to outlive a Redis failover (session-store.ts): replicas to wait for, and how long. */
export function sessionReplication(config: AuthConfig): { replicas: number; timeoutMs: number } {
  return {
    replicas: config.SESSION_WAIT_REPLICAS ?? (config.REDIS_SENTINELS ? 1 : 0),
    timeoutMs: config.SESSION_WAIT_TIMEOUT_MS,
  }
}
