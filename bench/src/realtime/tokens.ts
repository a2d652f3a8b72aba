// Access tokens for bench:realtime, minted by the client processes: HS256 with the claims auth issues (as
// packages/testkit/src/tokens.ts signs them), verified by the realtime-gateway given the same JWT_SECRET, JWT_ISSUER
// and JWT_AUDIENCE. Each socket presents its own user's token, so the gateway verifies one token per connection.
import { createHmac, randomUUID } from 'node:crypto'

export interface TokenSettings {
  /** JWT_SECRET of the gateway: at least 32 characters */
  secret: string
  issuer: string
  audience: string
}

export interface TokenClaims {
  subject?: string
  role?: 'user' | 'admin'
  name?: string
  /** default one hour: no socket of a run reaches auth:expiring */
  expiresInSeconds?: number
  /** seconds since the epoch; default now */
  now?: number
}

const base64url = (value: string | Buffer) => Buffer.from(value).toString('base64url')

export function mintToken(settings: TokenSettings, claims: TokenClaims = {}): string {
  const subject = claims.subject ?? randomUUID()
  const role = claims.role ?? 'user'
  const now = claims.now ?? Math.floor(Date.now() / 1000)
  const payload = {
    sub: subject,
    name: claims.name ?? `bench ${role} ${subject.slice(0, 8)}`,
    email: `${role}.${subject.slice(0, 8)}@example.com`,
    role,
    roles: [],
    iat: now,
    exp: now + (claims.expiresInSeconds ?? 3600),
    iss: settings.issuer,
    aud: settings.audience,
    jti: randomUUID(),
  }
  const input = `${base64url(JSON.stringify({ alg: 'HS256', typ: 'JWT' }))}.${base64url(JSON.stringify(payload))}`
  return `${input}.${base64url(createHmac('sha256', settings.secret).update(input).digest())}`
}
