// Access tokens for a service's component tests: the test app verifies HS256 tokens with the secret below (its
// environment from `tokenEnv`), so the tests sign their own, with the claims auth issues, instead of running auth.
import { createHmac, randomUUID } from 'node:crypto'

const jwtSecret = 'meridian-component-tests-hs256-secret-of-32-characters-or-more'
const issuer = 'http://localhost:3001'
const audience = 'meridian'

/** The environment that makes a service's test app verify the tokens below. */
export const tokenEnv = {
  JWT_ALGORITHM: 'HS256',
  JWT_SECRET: jwtSecret,
  JWT_ISSUER: issuer,
  JWT_AUDIENCE: audience,
} as const

const base64url = (value: string | Buffer) => Buffer.from(value).toString('base64url')

/** The client an access token of the OpenID provider is issued to in these tests (the console's). */
const scopedTokenClient = 'meridian-spa'

/**
 * A signed access token of the user `subject` with `role`, valid for 15 minutes (or `expiresInSeconds`) from now,
 * issued now (or `issuedAgoSeconds` ago: a token from before a revocation). With `scopes`, it is one the OpenID
 * provider issued to a client (`client_id`, and `scope`): limited to those scopes. Without, it is POST /login's,
 * acting with the role alone.
 */
export function accessToken(
  role: 'user' | 'admin',
  subject: string = randomUUID(),
  {
    expiresInSeconds = 900,
    issuedAgoSeconds = 0,
    scopes,
    emailVerified,
  }: {
    expiresInSeconds?: number
    issuedAgoSeconds?: number
    scopes?: readonly string[]
    /** the `email_verified` claim auth's tokens carry; left out when not given */
    emailVerified?: boolean
  } = {},
): string {
  const now = Math.floor(Date.now() / 1000)
  const claims = {
    sub: subject,
    name: `${role} of the tests`,
    email: `${role}.${subject.slice(0, 8)}@example.com`,
    role,
    roles: [],
    iat: now - issuedAgoSeconds,
    exp: now + expiresInSeconds,
    iss: issuer,
    aud: audience,
    jti: randomUUID(),
    ...(scopes === undefined ? {} : { client_id: scopedTokenClient, scope: scopes.join(' ') }),
    ...(emailVerified === undefined ? {} : { email_verified: emailVerified }),
  }
  const input = `${base64url(JSON.stringify({ alg: 'HS256', typ: 'JWT' }))}.${base64url(JSON.stringify(claims))}`
  return `${input}.${base64url(createHmac('sha256', jwtSecret).update(input).digest())}`
}

/** Authorization headers of an admin, and of the user `subject`. */
export const asAdmin = () => ({ authorization: `Bearer ${accessToken('admin')}` })
export const asUser = (subject: string = randomUUID()) => ({
  authorization: `Bearer ${accessToken('user', subject)}`,
})

/**
 * The service credential of every service's test app (serviceTestEnv sets SERVICE_CREDENTIAL to it): what another
 * service sends to /internal/ routes. Not the public development default, so a test proves the configured one is used.
 */
export const testServiceCredential = 'meridian-component-tests-service-credential-0123456789'

/** The header of a call from another service: for a test that calls an /internal/ route itself. */
export const asService = () => ({ 'x-service-credential': testServiceCredential })
