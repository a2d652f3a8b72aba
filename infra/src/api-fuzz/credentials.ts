// Credentials for a fuzzing run, obtained as an operator and a client would: an administrator made with auth's own
// create-admin (what scripts/create-admin runs, called in this process: ten runs of the script were ten Node starts,
// ~2 s of CPU each) in the run's auth database, then a token pair, an API key holding every scope of the catalogue
// (so that every operation is reached with it) and a cookie session through auth's public API. One administrator per
// schemathesis run: a run may demote, suspend or delete the one it was given.
import { randomBytes } from 'node:crypto'
import { join } from 'node:path'
import { makeAdministrator } from '../system/administrator.ts'

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

interface AuthDocument {
  paths?: Record<string, Record<string, { requestBody?: { content?: Record<string, { schema?: KeyBody }> } }>>
}
interface KeyBody {
  properties?: { scopes?: { items?: { enum?: unknown[] } } }
}

/**
 * Every scope an API key can be made with, as auth's own OpenAPI document states it (the enum of POST
 * /api/v1/api-keys' `scopes`): the catalogue of @meridian/contracts, read where the run's auth publishes it.
 */
export async function everyKeyScope(authUrl: string): Promise<string[]> {
  const response = await fetch(`${authUrl}/docs/json`, { signal: AbortSignal.timeout(10_000) })
  if (!response.ok) throw new Error(`GET ${authUrl}/docs/json: ${response.status}`)
  return keyScopesOf((await response.json()) as AuthDocument)
}

export function keyScopesOf(document: AuthDocument): string[] {
  const schema =
    document.paths?.['/api/v1/api-keys']?.post?.requestBody?.content?.['application/json']?.schema
  const scopes = schema?.properties?.scopes?.items?.enum ?? []
  if (scopes.length === 0 || !scopes.every((scope) => typeof scope === 'string')) {
    throw new Error("auth's document names no scope an API key can be made with (POST /api/v1/api-keys)")
  }
  return scopes as string[]
}

export async function administratorCredentials(options: {
  repoRoot: string
  /** the run's auth: its database (for create-admin) and where it answers */
  authDatabaseUrl: string
  /** the Redis the run's services follow credential revocations in */
  redisUrl: string
  authUrl: string
  label: string
}): Promise<FuzzCredentials> {
  const email = `api-fuzz-${options.label}-${randomBytes(4).toString('hex')}@example.com`
  const password = randomBytes(18).toString('base64url')
  await makeAdministrator(join(options.repoRoot, 'services', 'auth'), {
    databaseUrl: options.authDatabaseUrl,
    redisUrl: options.redisUrl,
    email,
    name: 'API fuzzing',
    password,
  })
  const login = `${options.authUrl}/login`
  const pair = await call(login, { method: 'POST', body: { email, password } })
  const accessToken = String(pair.body?.accessToken ?? '')
  const key = await call(`${options.authUrl}/api/v1/api-keys`, {
    method: 'POST',
    token: accessToken,
    body: { name: `api fuzzing ${options.label}`, scopes: await everyKeyScope(options.authUrl) },
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
