// The cookies auth sets, with their attributes in one place: the session cookie and the refresh-token cookie.
import type { CookieSerializeOptions } from '@fastify/cookie'
import { authNames } from '@meridian/contracts'
import type { FastifyReply } from 'fastify'

/** Sent on every request to this site, but not on cross-site subrequests or posts (Lax). No Domain: this host only. */
const sessionCookie: CookieSerializeOptions = { path: '/', httpOnly: true, secure: true, sameSite: 'lax' }

/** Sent only to the refresh endpoint, and never from another site (Strict). */
const refreshCookie: CookieSerializeOptions = {
  path: authNames.refreshCookiePath,
  httpOnly: true,
  secure: true,
  sameSite: 'strict',
}

export function setSessionCookie(reply: FastifyReply, sessionId: string, ttlSeconds: number): void {
  reply.setCookie(authNames.sessionCookie, sessionId, { ...sessionCookie, maxAge: ttlSeconds })
}

/** The same attributes, already expired: the browser drops the cookie. */
export function clearSessionCookie(reply: FastifyReply): void {
  reply.clearCookie(authNames.sessionCookie, sessionCookie)
}

export function setRefreshCookie(reply: FastifyReply, refreshToken: string, ttlSeconds: number): void {
  reply.setCookie(authNames.refreshCookie, refreshToken, { ...refreshCookie, maxAge: ttlSeconds })
}

export function clearRefreshCookie(reply: FastifyReply): void {
  reply.clearCookie(authNames.refreshCookie, refreshCookie)
}
