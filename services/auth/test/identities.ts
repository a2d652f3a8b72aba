// Test factories for people who sign in: users written straight to the database, and their logins through the API.
import { randomUUID } from 'node:crypto'
import type { UserRole, UserStatus } from '@meridian/contracts'
import { createUsersRepository } from '../src/data/users-repository.ts'
import { createAccessTokenIssuer } from '../src/domain/access-tokens.ts'
import { hashPassword } from '../src/domain/passwords.ts'
import type { AuthTestApp } from './auth-app.ts'

export interface TestUser {
  id: string
  name: string
  email: string
  password: string
  role: UserRole
  status: UserStatus
}

/** A client address of its own, so the per-address login throttle of one test never counts another's failures. */
export const randomAddress = (): string =>
  `10.${Math.floor(Math.random() * 250)}.${Math.floor(Math.random() * 250)}.${1 + Math.floor(Math.random() * 250)}`

export async function createTestUser(
  auth: AuthTestApp,
  overrides: Partial<Omit<TestUser, 'id'>> = {},
): Promise<TestUser> {
  const password = overrides.password ?? `pw-${randomUUID()}`
  const user = {
    name: overrides.name ?? 'Test Person',
    email: overrides.email ?? `person.${randomUUID().slice(0, 8)}@example.com`,
    role: overrides.role ?? 'user',
    status: overrides.status ?? 'active',
  }
  const created = await createUsersRepository(auth.sql).insert({
    ...user,
    passwordHash: await hashPassword(password),
    age: null,
  })
  return { id: created.id, ...user, password }
}

export function login(
  auth: AuthTestApp,
  credentials: { email: string; password: string },
  options: { query?: string; remoteAddress?: string } = {},
) {
  return auth.app.inject({
    method: 'POST',
    url: `/login${options.query ?? ''}`,
    headers: { 'content-type': 'application/json' },
    payload: { email: credentials.email, password: credentials.password },
    remoteAddress: options.remoteAddress ?? randomAddress(),
  })
}

export interface SignedIn {
  user: TestUser
  accessToken: string
  refreshToken: string
  /** Authorization: Bearer … */
  headers: { authorization: string }
}

/** A user (role and status as asked) with a fresh token pair from POST /login. */
export async function signedIn(
  auth: AuthTestApp,
  overrides: Partial<Omit<TestUser, 'id'>> = {},
): Promise<SignedIn> {
  const user = await createTestUser(auth, overrides)
  const response = await login(auth, user)
  if (response.statusCode !== 200) throw new Error(`login failed: ${response.statusCode} ${response.body}`)
  const { accessToken, refreshToken } = response.json()
  return { user, accessToken, refreshToken, headers: { authorization: `Bearer ${accessToken}` } }
}

export interface ParsedCookie {
  name: string
  value: string
  /** attribute name (lower case) -> value ('' for flags) */
  attributes: Record<string, string>
}

/** Every Set-Cookie of a response, parsed. */
export function setCookies(headers: Record<string, unknown>): ParsedCookie[] {
  const raw = headers['set-cookie']
  const lines = raw === undefined ? [] : Array.isArray(raw) ? raw.map(String) : [String(raw)]
  return lines.map((line) => {
    const [pair = '', ...attributes] = line.split(';').map((part) => part.trim())
    const separator = pair.indexOf('=')
    return {
      name: pair.slice(0, separator),
      value: pair.slice(separator + 1),
      attributes: Object.fromEntries(
        attributes.map((attribute) => {
          const eq = attribute.indexOf('=')
          return eq === -1
            ? [attribute.toLowerCase(), '']
            : [attribute.slice(0, eq).toLowerCase(), attribute.slice(eq + 1)]
        }),
      ),
    }
  })
}

/**
 * Authorization headers for someone who is not in the database (a token signed like a login's): lets a test act as
 * an admin without adding a user that list counts would see.
 */
export function bearerFor(
  auth: Pick<AuthTestApp, 'config' | 'keyRing'>,
  subject: { id?: string; role: UserRole; name?: string; email?: string },
): { authorization: string } {
  const issuer = createAccessTokenIssuer({
    signing:
      auth.config.JWT_ALGORITHM === 'HS256'
        ? { algorithm: 'HS256', secret: auth.config.JWT_SECRET ?? '' }
        : { algorithm: 'RS256', keyRing: auth.keyRing },
    issuer: auth.config.JWT_ISSUER,
    audience: auth.config.JWT_AUDIENCE,
    ttlSeconds: auth.config.ACCESS_TOKEN_TTL_SECONDS,
  })
  const { accessToken } = issuer.issue({
    id: subject.id ?? randomUUID(),
    name: subject.name ?? `Synthetic ${subject.role}`,
    email: subject.email ?? `synthetic.${randomUUID().slice(0, 8)}@example.com`,
    role: subject.role,
  })
  return { authorization: `Bearer ${accessToken}` }
}
