// Who is asking, for the resolvers: the kit's authentication (bearer token, API key, auth's session cookie), read
// only when a resolver asks, so an operation without credentials fails where it needs them (UNAUTHORIZED). Over
// WebSocket the credential is the `connection_init` payload's (`{authorization: 'Bearer …'}` or `{apiKey}`), else the
// upgrade's own headers and cookie; a connection whose token expires is closed then (4401); the protocol's own
// refusals are put in Meridian's terms (speakMeridian).
import { fastifyCookie } from '@fastify/cookie'
import { AppError, authNames, ErrorCode } from '@meridian/contracts'
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
    speakMeridian(socket, String(request.id))
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

/** The close code and reason graphql-transport-ws gives a refused connection_init. */
const forbidden = { code: 4403, reason: 'Forbidden' } as const

type Send = (data: string, callback?: (error?: Error) => void) => void

/**
 * mercurius answers some failures of the protocol itself outside Meridian's terms: an operation refused before it
 * runs (a query sent as a subscription, a document that does not parse) is an `error` message without a code, and a
 * refused connection_init is a `connection_error` message, which graphql-transport-ws does not have (it closes the
 * connection with 4403). Each such message is put right as it leaves: the code BAD_REQUEST and the request id, and
 * the close. (mercurius writes `type` first; other messages pass untouched and unparsed.)
 */
function speakMeridian(socket: WebSocket, requestId: string): void {
  const send = socket.send.bind(socket) as Send
  const replacement: Send = (data, callback) => {
    if (data.startsWith('{"type":"connection_error"') && socket.protocol === 'graphql-transport-ws') {
      socket.close(forbidden.code, forbidden.reason)
      callback?.()
      return
    }
    if (data.startsWith('{"type":"error"')) {
      const message = JSON.parse(data) as { payload?: unknown }
      if (Array.isArray(message.payload)) {
        message.payload = message.payload.map((error: { extensions?: Record<string, unknown> }) =>
          error.extensions?.code === undefined
            ? { ...error, extensions: { ...error.extensions, code: ErrorCode.BAD_REQUEST, requestId } }
            : error,
        )
        send(JSON.stringify(message), callback)
        return
      }
    }
    send(data, callback)
  }
  socket.send = replacement as WebSocket['send']
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
