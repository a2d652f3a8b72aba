// Who may connect (spec: Authentication 10, Limits): the Origin allow-list, the connection attempts and concurrent
// connections of the client's address (counted across instances), and the credential — a bearer token (Socket.IO's
// `auth.token`, or an Authorization header on the upgrade) or auth's session cookie. Shared by Socket.IO's namespaces
// and /ws; each refusal carries exactly the spec's message. A credential limited to scopes must hold the one the
// namespace needs to connect (contracts' realtimeScopes).
import type { IncomingMessage } from 'node:http'
import { fastifyCookie } from '@fastify/cookie'
import {
  type ApiScope,
  AppError,
  authNames,
  namespaceScopeMessage,
  type RealtimeNamespace,
  realtimeMessages,
  realtimeScopes,
} from '@meridian/contracts'
import { authMessages, holdsScope, type PresentedCredential, type Principal } from '@meridian/service-kit'
import type { FastifyBaseLogger } from 'fastify'
import proxyAddr from 'proxy-addr'
import type { SocketCredential } from '../clients/forwarded-credential.ts'
import type { ConnectionLimits } from '../domain/live-state.ts'
import type { SocketUser } from './channel.ts'

/** What a refusal tells beside its code: which limit refused it (both carry the spec's one message), or which scope. */
type RefusalDetail = { limit: 'attempts' | 'concurrent' } | { scope: ApiScope }

/** A refused connection: the spec's message, and a code for clients that branch on it (connect_error's `data`). */
export class HandshakeRefusal extends Error {
  constructor(
    message: string,
    readonly code:
      | 'FORBIDDEN'
      | 'UNAUTHORIZED'
      | 'RATE_LIMITED'
      | 'SERVICE_UNAVAILABLE'
      | 'INSUFFICIENT_SCOPE',
    readonly detail?: RefusalDetail,
  ) {
    super(message)
    this.name = 'HandshakeRefusal'
  }
  /** connect_error's `data` on a Socket.IO client */
  get data(): { code: string; limit?: string; scope?: string } {
    return { code: this.code, ...this.detail }
  }
}

/** What a connection presents: the upgrade request and, on Socket.IO, the handshake's `auth.token`. */
export interface Presented {
  request: Pick<IncomingMessage, 'headers' | 'socket'>
  authToken?: unknown
}

export interface HandshakeOptions {
  verifyCredential(credential: PresentedCredential, log: FastifyBaseLogger): Promise<Principal>
  limits: ConnectionLimits
  allowedOrigins: readonly string[]
  /** TRUSTED_PROXIES (proxy-addr's syntax): the peers whose X-Forwarded-For is believed */
  trustedProxies: string
  log: FastifyBaseLogger
}

export interface Handshake {
  /** Refuses (HandshakeRefusal) an origin that is not allowed; a missing Origin passes here (see `credential`). */
  checkOrigin(presented: Presented): void
  /** the client's address: X-Forwarded-For as far as trusted proxies vouch for it, else the peer */
  addressOf(presented: Presented): string
  /** Counts an attempt of `address`; refuses the one over the window's limit. */
  countAttempt(address: string): Promise<void>
  /** The connecting user and their credential; refuses a missing, bad or (without Origin) cookie-only credential. */
  authenticate(presented: Presented): Promise<{ user: SocketUser; credential: SocketCredential }>
  /** Verifies a token sent later (auth:refresh). */
  verifyToken(token: string): Promise<SocketUser>
  /** Reads a cookie session again (at its end: it may have been extended). */
  verifySession(sessionId: string): Promise<SocketUser>
  /** Holds one of the address's concurrent slots for `connectionId` until `release`; refuses over the limit. */
  hold(address: string, connectionId: string): Promise<void>
  release(address: string, connectionId: string): Promise<void>
}

/** `Bearer ` and the spaces after it, in any case (spec: a leading `Bearer ` prefix is stripped). */
const bearerPrefix = /^bearer\s+/i

const tokenOf = (value: unknown): string | undefined => {
  if (typeof value !== 'string') return undefined
  const token = value.replace(bearerPrefix, '').trim()
  return token === '' ? undefined : token
}

const firstHeader = (value: string | string[] | undefined) => (Array.isArray(value) ? value[0] : value)

/** The user a principal is on the channel: the name shown to others is the token's name, else its e-mail's local part. */
export function socketUserOf(principal: Principal): SocketUser {
  const username = principal.name ?? principal.email?.split('@')[0] ?? `user-${principal.subject.slice(0, 8)}`
  return { userId: principal.subject, username, role: principal.role, principal }
}

/**
 * Refuses (INSUFFICIENT_SCOPE, naming the scope) a user whose credential is limited to scopes without the one the
 * namespace needs to connect: at the handshake, and when auth:refresh brings another token. First-party credentials
 * pass (they act with the user's role).
 */
export function assertNamespaceScope(path: RealtimeNamespace, user: SocketUser): void {
  const scope = realtimeScopes.namespaces[path].connect
  if (scope !== null && !holdsScope(user.principal, scope)) {
    throw new HandshakeRefusal(namespaceScopeMessage(scope), 'INSUFFICIENT_SCOPE', { scope })
  }
}

export function createHandshake(options: HandshakeOptions): Handshake {
  const { verifyCredential, limits, log } = options
  const allowed = new Set(options.allowedOrigins.map((origin) => origin.toLowerCase()))
  const trusted = options.trustedProxies
    .split(',')
    .map((entry) => entry.trim())
    .filter(Boolean)
  const trust = proxyAddr.compile(trusted)

  async function verify(credential: PresentedCredential): Promise<SocketUser> {
    try {
      return socketUserOf(await verifyCredential(credential, log))
    } catch (error) {
      if (error instanceof AppError && error.statusCode === 401) {
        throw new HandshakeRefusal(
          error.message === authMessages.invalidSession
            ? realtimeMessages.invalidSession
            : realtimeMessages.invalidToken,
          'UNAUTHORIZED',
        )
      }
      if (error instanceof AppError && error.statusCode === 503) {
        throw new HandshakeRefusal(realtimeMessages.serviceUnavailable, 'SERVICE_UNAVAILABLE')
      }
      throw error
    }
  }

  return {
    checkOrigin({ request }) {
      const origin = firstHeader(request.headers.origin)
      if (origin !== undefined && !allowed.has(origin.toLowerCase())) {
        throw new HandshakeRefusal(realtimeMessages.originNotAllowed, 'FORBIDDEN')
      }
    },

    addressOf({ request }) {
      return proxyAddr(request as IncomingMessage, trust)
    },

    async countAttempt(address) {
      if (!(await limits.attempt(address))) {
        throw new HandshakeRefusal(realtimeMessages.tooManyAttempts, 'RATE_LIMITED', { limit: 'attempts' })
      }
    },

    async authenticate({ request, authToken }) {
      const token = tokenOf(authToken) ?? tokenOf(firstHeader(request.headers.authorization))
      if (token !== undefined) {
        return {
          user: await verify({ kind: 'bearer', token }),
          credential: { kind: 'bearer', token },
        }
      }
      const cookieHeader = firstHeader(request.headers.cookie)
      if (cookieHeader === undefined) {
        throw new HandshakeRefusal(realtimeMessages.authenticationRequired, 'UNAUTHORIZED')
      }
      const sessionId = fastifyCookie.parse(cookieHeader)[authNames.sessionCookie]
      if (sessionId === undefined) throw new HandshakeRefusal(realtimeMessages.noSession, 'UNAUTHORIZED')
      // a browser always sends Origin on a WebSocket upgrade; a cookie without one is another page's (or a script's)
      // borrowed cookie, never accepted on its own (cross-site WebSocket hijacking)
      if (firstHeader(request.headers.origin) === undefined) {
        throw new HandshakeRefusal(realtimeMessages.authenticationRequired, 'UNAUTHORIZED')
      }
      return {
        user: await verify({ kind: 'session', sessionId }),
        credential: { kind: 'session', sessionId },
      }
    },

    verifyToken(token) {
      const bare = tokenOf(token)
      if (bare === undefined) {
        return Promise.reject(new HandshakeRefusal(realtimeMessages.invalidToken, 'UNAUTHORIZED'))
      }
      return verify({ kind: 'bearer', token: bare })
    },

    verifySession(sessionId) {
      return verify({ kind: 'session', sessionId })
    },

    async hold(address, connectionId) {
      if (!(await limits.acquire(address, connectionId))) {
        // the spec names one message for both limits (Errors rule 6); `limit` tells them apart
        throw new HandshakeRefusal(realtimeMessages.tooManyAttempts, 'RATE_LIMITED', { limit: 'concurrent' })
      }
    },

    release(address, connectionId) {
      return limits.release(address, connectionId)
    },
  }
}
