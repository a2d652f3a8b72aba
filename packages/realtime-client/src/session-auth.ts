// The session's credentials on the channel (spec: Authentication 10–11): a fresh token in every handshake, and an
// answer to `auth:expiring` with `auth:refresh`.

import type { Socket } from 'socket.io-client'
import type { ConnectionEventEmitter } from './connection-events.ts'
import type { RealtimeNamespace, SessionClientEvents, SessionServerEvents } from './contracts.ts'
import { request } from './request.ts'

/** A namespace socket seen through the events every namespace shares. */
export type SessionSocket = Socket<SessionServerEvents, SessionClientEvents>

/** socket.io-client's `auth` option as a callback: called on every connect and reconnect of the namespace. */
export type AuthCallback = (send: (data: object) => void) => void

/**
 * The handshake's `auth`: `{ token }` from a fresh call of `token()`, or `{}` without one (cookie sessions). When
 * `token()` fails the failure is reported as `error` and the handshake goes without a token, so the server's
 * `Authentication required` arrives as `connect_error` instead of the socket hanging in "connecting".
 */
export function handshakeAuth(
  namespace: RealtimeNamespace,
  token: (() => string | Promise<string>) | undefined,
  events: ConnectionEventEmitter,
): AuthCallback {
  return (send) => {
    if (!token) {
      send({})
      return
    }
    Promise.resolve()
      .then(token)
      .then(
        (fresh) => send({ token: fresh }),
        (cause: unknown) => {
          events.emit('error', namespace, asError(cause, 'token() failed'))
          send({})
        },
      )
  }
}

/**
 * Answers `auth:expiring` on the socket that heard it: gets a token from `refreshToken()` (one call serves every
 * namespace that hears the notice at the same time) and sends `auth:refresh { token }`, waiting for the ack. When
 * `refreshToken()` fails, nothing is sent and `error` reports it; the server then sends `auth:failed` and
 * disconnects when the old token expires. Without `refreshToken`, notices are left to that same outcome.
 */
export function createTokenRefresh(refreshToken: () => Promise<string>, events: ConnectionEventEmitter) {
  let inFlight: Promise<string> | undefined

  function freshToken(): Promise<string> {
    inFlight ??= Promise.resolve()
      .then(refreshToken)
      .finally(() => {
        inFlight = undefined
      })
    return inFlight
  }

  return async function answerExpiring(namespace: RealtimeNamespace, socket: SessionSocket): Promise<void> {
    let token: string
    try {
      token = await freshToken()
    } catch (cause) {
      events.emit('error', namespace, asError(cause, 'refreshToken() failed'))
      return
    }
    try {
      await request(socket, 'auth:refresh', { token })
    } catch (error) {
      events.emit('error', namespace, asError(error, 'auth:refresh failed'))
    }
  }
}

function asError(cause: unknown, message: string): Error {
  return cause instanceof Error ? cause : new Error(message, { cause })
}
