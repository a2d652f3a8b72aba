// What the auth tests share: an app on the chassis with the auth plugin, RSA keys, a JWKS server and token factories.
import { createHmac, generateKeyPairSync, type KeyObject, randomUUID, sign } from 'node:crypto'
import { captureLogs, uniqueName } from '@meridian/testkit'
import Fastify, { type FastifyInstance } from 'fastify'
import { type AuthPluginOptions, assertOwnerOrRole } from '../src/auth/index.ts'
import { createServiceApp, type ServiceApp } from '../src/index.ts'

export const issuer = 'http://auth.test'
export const audience = 'meridian'
export const hsSecret = 'a-shared-secret-of-at-least-32-characters!'

export interface AuthApp {
  app: ServiceApp
  logs: Record<string, unknown>[]
}

/** The chassis plus the auth plugin, with one route per kind of check. */
export async function buildAuthApp(
  options: Omit<AuthPluginOptions, 'issuer' | 'audience'> & Partial<AuthPluginOptions>,
): Promise<AuthApp> {
  const { stream: logStream, lines: logs } = captureLogs()
  const app = await createServiceApp({
    name: uniqueName('auth'),
    version: '1.0.0',
    environment: 'test',
    logLevel: 'info',
    logStream,
    rateLimit: false,
    authentication: { issuer, audience, ...options },
  })
  app.get('/public', async () => ({ ok: true }))
  app.get('/me', { preHandler: app.authenticate }, async (request) => request.principal)
  app.get('/admin', { preHandler: app.requireRole('admin') }, async (request) => request.principal)
  app.get('/users/:id', { preHandler: app.authenticate }, async (request) => {
    const { id } = request.params as { id: string }
    assertOwnerOrRole(request.principal, id, 'admin', 'support')
    return { id }
  })
  await app.ready()
  return { app, logs }
}

export interface RsaKey {
  kid: string
  privateKey: KeyObject
  publicKey: KeyObject
  /** the public key as a JWKS entry */
  jwk: Record<string, unknown>
}

export function rsaKey(kid: string = randomUUID()): RsaKey {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 })
  return {
    kid,
    privateKey,
    publicKey,
    jwk: { ...publicKey.export({ format: 'jwk' }), kid, alg: 'RS256', use: 'sig' },
  }
}

export interface JwksServer {
  url: string
  keys: Record<string, unknown>[]
  /** requests received, any path */
  requests: string[]
  close(): Promise<void>
}

/** A real HTTP server publishing a JWKS (the keys array can be changed while it runs). */
export async function startJwksServer(keys: Record<string, unknown>[]): Promise<JwksServer> {
  const server: FastifyInstance = Fastify()
  const state: JwksServer = {
    url: '',
    keys,
    requests: [],
    close: () => server.close(),
  }
  server.addHook('onRequest', async (request) => {
    state.requests.push(request.url)
  })
  server.get('/.well-known/jwks.json', async () => ({ keys: state.keys }))
  const address = await server.listen({ host: '127.0.0.1', port: 0 })
  state.url = `${address}/.well-known/jwks.json`
  return state
}

const base64url = (value: string | Buffer) => Buffer.from(value).toString('base64url')

/** A token assembled by hand, so that tests can forge any header, payload or signature. */
export function craftToken(
  header: Record<string, unknown>,
  payload: Record<string, unknown>,
  signer: ((input: string) => Buffer) | string = '',
): string {
  const input = `${base64url(JSON.stringify(header))}.${base64url(JSON.stringify(payload))}`
  const signature = typeof signer === 'string' ? signer : base64url(signer(input))
  return `${input}.${signature}`
}

export const rs256 = (privateKey: KeyObject) => (input: string) =>
  sign('sha256', Buffer.from(input), privateKey)
export const hs256 = (secret: string | Buffer) => (input: string) =>
  createHmac('sha256', secret).update(input).digest()

/** Claims of a valid user token; override any of them. */
export function claims(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  const now = Math.floor(Date.now() / 1000)
  return {
    sub: 'user-1',
    name: 'Ada',
    email: 'ada@example.com',
    role: 'user',
    roles: [],
    iat: now,
    exp: now + 900,
    iss: issuer,
    aud: audience,
    ...overrides,
  }
}

export const rsToken = (key: RsaKey, payload = claims(), header: Record<string, unknown> = {}) =>
  craftToken({ alg: 'RS256', typ: 'JWT', kid: key.kid, ...header }, payload, rs256(key.privateKey))

export const hsToken = (payload = claims(), secret = hsSecret, header: Record<string, unknown> = {}) =>
  craftToken({ alg: 'HS256', typ: 'JWT', ...header }, payload, hs256(secret))

export const bearer = (token: string) => ({ authorization: `Bearer ${token}` })
