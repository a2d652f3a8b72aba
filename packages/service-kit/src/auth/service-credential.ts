// The service credential: the secret the services share (SERVICE_CREDENTIAL), without which no /internal/ route
// answers. The gateway does not route /internal, but a route that trusts the network trusts anyone who reaches the
// port; the chassis puts this check on every such route (plugin.ts), and the upstream client sends the credential.
import { createHash, timingSafeEqual } from 'node:crypto'
import { AppError, authNames } from '@meridian/contracts'
import type { onRequestHookHandler, RouteOptions } from 'fastify'
import { listOf } from '../config.ts'

export const serviceCredentialHeader = authNames.serviceCredentialHeader

export const serviceCredentialMessages = {
  missing: 'Service credential required',
  invalid: 'Invalid service credential',
} as const

/** Whether a route is one only the services may call: its path is /internal or below it. */
export const isInternalPath = (url: string): boolean => url === '/internal' || url.startsWith('/internal/')

/** SERVICE_CREDENTIAL's credential to send: the first of its comma-separated list (the others are only accepted). */
export function sentServiceCredential(configured: string): string {
  const [current] = listOf(configured)
  if (current === undefined) throw new TypeError('SERVICE_CREDENTIAL holds no credential')
  return current
}

const digest = (value: string) => createHash('sha256').update(value).digest()

/**
 * Whether a presented value is one of the accepted credentials (SERVICE_CREDENTIAL: every entry of its list). Digests
 * of equal length are compared in constant time, and every accepted credential is compared, so neither the
 * presented value's length nor which entry matched shows in the time taken.
 */
export function serviceCredentialVerifier(configured: string): (presented: string) => boolean {
  const accepted = listOf(configured).map(digest)
  if (accepted.length === 0) throw new TypeError('SERVICE_CREDENTIAL holds no credential')
  return (presented) => {
    const candidate = digest(presented)
    let matched = false
    for (const credential of accepted) matched = timingSafeEqual(candidate, credential) || matched
    return matched
  }
}

/** The onRequest check of an /internal/ route: 401 in the envelope unless the request carries the credential. */
export function serviceCredentialCheck(configured: string): onRequestHookHandler {
  const verify = serviceCredentialVerifier(configured)
  return (request, _reply, done) => {
    const presented = request.headers[serviceCredentialHeader]
    // a repeated header is refused rather than one of its values picked
    if (presented === undefined || presented === '') {
      return done(AppError.unauthorized(serviceCredentialMessages.missing))
    }
    if (typeof presented !== 'string' || !verify(presented)) {
      return done(AppError.unauthorized(serviceCredentialMessages.invalid))
    }
    done()
  }
}

/**
 * The chassis' onRoute hook: every route under /internal/ gets the credential check first (before its body is read)
 * and documents it as its security. A service that serves such a route without a credential configured fails at
 * start rather than serving it open.
 */
export function guardInternalRoutes(configured: string | undefined): (route: RouteOptions) => void {
  const check = configured === undefined ? undefined : serviceCredentialCheck(configured)
  return (route) => {
    if (!isInternalPath(route.url)) return
    if (!check) {
      throw new Error(
        `${route.url} is an internal route, but the app has no service credential (serviceCredential: SERVICE_CREDENTIAL; chassisOptions passes it)`,
      )
    }
    const own = route.onRequest === undefined ? [] : [route.onRequest].flat()
    route.onRequest = [check, ...own]
    route.schema = { ...route.schema, security: [{ serviceCredential: [] }] }
  }
}
