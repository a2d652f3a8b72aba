// Who is asking, for the resolvers: the kit's authentication (bearer token, API key, auth's session cookie), read
// only when a resolver asks, so an operation without credentials fails where it needs them (UNAUTHORIZED). Over
// WebSocket the credential is the `connection_init` payload's (`{authorization: 'Bearer …'}` or `{apiKey}`), else the
// upgrade's own headers and cookie; a connection whose token expires is closed then (4401).
import { fastifyCookie } from '@fastify/cookie'
import { AppError, authNames } from '@meridian/contracts'
import { authMessages, type Principal } from '@meridian/service-kit'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import type { WebSocket } from 'ws'

/** What every resolver's context holds beyond mercurius's own. */
export interface ContentContext {
  requestId: string
  /** the caller; rejects with UNAUTHORIZED (401) without a valid credential */
  principal(): Promise<Principal>
  /** the caller's credential as headers, for a call content makes on their behalf (createUser in auth) */
  credentialHeaders(): Record<string, string>
}

declare module 'mercurius' {
  interface MercuriusContext extends ContentContext {}
}

/** The headers that carry the request's credential: Authorization, X-API-Key, and auth's session cookie alone. */
function credentialHeaders(request: FastifyRequest): Record<string, string> {
  const headers: Record<string, string> = {}
  const { authorization } = request.headers
  const apiKey = request.headers[authNames.apiKeyHeader]
  const session = request.cookies?.[authNames.sessionCookie]
  if (typeof authorization === 'string') headers.authorization = authorization
  if (typeof apiKey === 'string') headers[authNames.apiKeyHeader] = apiKey
  if (session !== undefined) headers.cookie = fastifyCookie.serialize(authNames.sessionCookie, session)
  return headers
}

/** The context of an operation over HTTP. */
export function httpContext(app: FastifyInstance) {
  return (request: FastifyRequest): ContentContext => ({
    requestId: String(request.id),
    principal: () => app.principalOf(request),
    credentialHeaders: () => credentialHeaders(request),
  })
}

/** WebSocket close code of a connection whose credential expired (graphql-transport-ws leaves 4400-4499 to servers). */
export const credentialExpiredCloseCode = 4401

/**
 * The context of a subscription connection. The credential is read at the connection's first operation (mercurius
 * has then merged the `connection_init` payload's headers into the upgrade's) and kept for the connection; when it
 * expires, the connection is closed, so that a client cannot listen on with a token that no longer counts.
 */
export function subscriptionContext(app: FastifyInstance) {
  return (socket: WebSocket, request: FastifyRequest): ContentContext => {
    let expiry: NodeJS.Timeout | undefined
    socket.once('close', () => clearTimeout(expiry))
    return {
      requestId: String(request.id),
      async principal() {
        const principal = await app.principalOf(request)
        const left = principal.expiresAt === undefined ? undefined : principal.expiresAt - Date.now()
        if (left !== undefined && left <= 0) throw AppError.unauthorized(authMessages.invalidToken)
        if (left !== undefined && expiry === undefined) {
          expiry = setTimeout(() => socket.close(credentialExpiredCloseCode, authMessages.invalidToken), left)
          expiry.unref()
        }
        return principal
      },
      credentialHeaders: () => credentialHeaders(request),
    }
  }
}

/** A string field of the connection_init payload, when it is one. */
const stringField = (payload: Record<string, unknown>, name: string): string | undefined =>
  typeof payload[name] === 'string' ? payload[name] : undefined

/**
 * mercurius's onConnect: reads the credential of the `connection_init` payload — `authorization` (or
 * `Authorization`) and `apiKey` (or `x-api-key`), at the top or under `headers` — and leaves only those, as the
 * headers mercurius merges into the upgrade's (where the upgrade has none of its own). A payload that is not an
 * object, or a credential that is not a string, refuses the connection.
 */
export function readConnectionInit(data: { payload?: unknown }): boolean {
  const payload = data.payload ?? {}
  if (typeof payload !== 'object' || payload === null || Array.isArray(payload)) return false
  const fields = payload as Record<string, unknown>
  const nested = fields.headers
  const source =
    typeof nested === 'object' && nested !== null && !Array.isArray(nested)
      ? (nested as Record<string, unknown>)
      : fields
  const authorization = stringField(source, 'authorization') ?? stringField(source, 'Authorization')
  const apiKey = stringField(source, 'apiKey') ?? stringField(source, authNames.apiKeyHeader)
  for (const name of ['authorization', 'Authorization', 'apiKey', authNames.apiKeyHeader]) {
    if (source[name] !== undefined && typeof source[name] !== 'string') return false
  }
  const headers: Record<string, string> = {}
  if (authorization !== undefined) headers.authorization = authorization
  if (apiKey !== undefined) headers[authNames.apiKeyHeader] = apiKey
  data.payload = { headers }
  return true
}
