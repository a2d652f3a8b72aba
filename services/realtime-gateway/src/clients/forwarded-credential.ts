// A connected user's credential as it was presented, and the headers that carry it to another service: the calls the
// channel makes on a user's behalf (clients/) go with the user's own rights there. Here, not in channels/, because
// clients/ never import channels/.
import { fastifyCookie } from '@fastify/cookie'
import { authNames } from '@meridian/contracts'
import type { PresentedCredential } from '@meridian/service-kit'

/**
 * A socket's credential as it was presented (the token or the session id itself, not a copy: a socket costs what it
 * keeps), for calls to other services on the user's behalf. Kept apart from `socket.data`, which travels between
 * instances.
 */
export type SocketCredential = Extract<PresentedCredential, { kind: 'bearer' | 'session' }>

/** The headers that carry a socket's credential to another service (the user's own rights there). */
export function forwardedHeaders(credential: SocketCredential): Record<string, string> {
  return credential.kind === 'bearer'
    ? { authorization: `Bearer ${credential.token}` }
    : { cookie: fastifyCookie.serialize(authNames.sessionCookie, credential.sessionId) }
}
