// Credentials for a fuzzing run, obtained as an operator and a client would: an administrator made with
// scripts/create-admin in the run's auth database, then a token pair, an API key and a cookie session through auth's
// public API. One administrator per schemathesis run: a run may demote, suspend or delete the one it was given.
import { randomBytes } from 'node:crypto'
import { join } from 'node:path'
import { run } from '../processes.ts'

/** What schemathesis.toml reads (auth.openapi.*): one value per security scheme of the documents. */
export interface FuzzCredentials {
  MERIDIAN_FUZZ_BEARER_TOKEN: string
  MERIDIAN_FUZZ_API_KEY: string
  MERIDIAN_FUZZ_SESSION: string
}

async function call(url: string, init: { method: string; body?: unknown; token?: string }) {
  const response = await fetch(url, {
    method: init.method,
    headers: {
      'content-type': 'application/json',
      ...(init.token ? { authorization: `Bearer ${init.token}` } : {}),
    },
    body: JSON.stringify(init.body ?? {}),
    signal: AbortSignal.timeout(10_000),
  })
  const text = await response.text()
  if (!response.ok) throw new Error(`${init.method} ${url}: ${response.status} ${text}`)
  return { response, body: text === '' ? undefined : (JSON.parse(text) as Record<string, unknown>) }
}

export async function administratorCredentials(options: {
  repoRoot: string
  /** the run's auth: its database (for create-admin) and where it answers */
  authDatabaseUrl: string
  authUrl: string
  label: string
  env: NodeJS.ProcessEnv
}): Promise<FuzzCredentials> {
  const email = `api-fuzz-${options.label}-${randomBytes(4).toString('hex')}@example.com`
  const password = randomBytes(18).toString('base64url')
  await run(join(options.repoRoot, 'scripts', 'create-admin'), ['--email', email, '--name', 'API fuzzing'], {
    env: { ...options.env, AUTH_DATABASE_URL: options.authDatabaseUrl, MERIDIAN_ADMIN_PASSWORD: password },
  })
  const login = `${options.authUrl}/login`
  const pair = await call(login, { method: 'POST', body: { email, password } })
  const accessToken = String(pair.body?.accessToken ?? '')
  const key = await call(`${options.authUrl}/api/v1/api-keys`, {
    method: 'POST',
    token: accessToken,
    body: { name: `api fuzzing ${options.label}`, scopes: [] },
  })
  const session = await call(`${login}?mode=session`, { method: 'POST', body: { email, password } })
  const cookie = session.response.headers.getSetCookie().find((line) => line.startsWith('meridian_session='))
  const sessionId = cookie?.slice('meridian_session='.length).split(';')[0] ?? ''
  const credentials = {
    MERIDIAN_FUZZ_BEARER_TOKEN: accessToken,
    MERIDIAN_FUZZ_API_KEY: String(key.body?.key ?? ''),
    MERIDIAN_FUZZ_SESSION: sessionId,
  }
  const missing = Object.entries(credentials).filter(([, value]) => value === '')
  if (missing.length > 0) throw new Error(`auth gave no ${missing.map(([name]) => name).join(', ')}`)
  return credentials
}
