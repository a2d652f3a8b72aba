// The GETs the gateway benchmark measures. The public key set is the cheapest answer auth has: against it a proxy's
// own cost decides everything. A user by id is a typical resource read: the bearer token checked (by the gateway for
// its rate-limit key, and by auth), one PostgreSQL query, the user's own record answered.
import { randomBytes } from 'node:crypto'

export interface GetScenario {
  name: string
  path: string
  headers: Record<string, string>
}

export const publicKeySet: GetScenario = {
  name: 'GET /.well-known/jwks.json',
  path: '/.well-known/jwks.json',
  headers: {},
}

async function json(response: Response, expected: number, what: string): Promise<Record<string, unknown>> {
  if (response.status !== expected) throw new Error(`${what}: ${response.status} ${await response.text()}`)
  return (await response.json()) as Record<string, unknown>
}

/** Registers a user of the run's own and signs it in, directly at auth. */
export async function userById(authUrl: string): Promise<GetScenario> {
  const email = `gateway-bench-${randomBytes(6).toString('hex')}@example.com`
  const password = `${randomBytes(12).toString('base64url')}Aa1!`
  const post = (path: string, body: unknown) =>
    fetch(`${authUrl}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(10_000),
    })
  const user = await json(
    await post('/api/v1/users', { name: 'Gateway Bench', email, password, age: 30 }),
    201,
    'POST /api/v1/users',
  )
  const tokens = await json(await post('/login', { email, password }), 200, 'POST /login')
  return {
    name: 'GET /api/v1/users/:id',
    path: `/api/v1/users/${String(user.id)}`,
    headers: { authorization: `Bearer ${String(tokens.accessToken)}` },
  }
}
