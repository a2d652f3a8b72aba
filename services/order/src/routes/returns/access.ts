// Who may do what with returns: asking for one and reading them needs a credential (whose order and which return is
// the use cases' to decide: the customer or an admin); marking the goods received is for admins, or for a carrier
// presenting one of RETURNS_CARRIER_KEYS in X-Carrier-Key (a wrong key is 401); rejecting is for admins. All run in
// onRequest, so a caller without credentials is 401 before any validation answers.
import { AppError, carrierKeyHeader } from '@meridian/contracts'
import { carrierKeyMatcher, holdsRole } from '@meridian/service-kit'
import type { FastifyInstance, onRequestHookHandler } from 'fastify'
import { adminRole } from '../../domain/access.ts'

export interface ReturnsGuards {
  authenticated: onRequestHookHandler[]
  carrierOrAdmin: onRequestHookHandler[]
  admin: onRequestHookHandler[]
}

export function returnsGuards(app: FastifyInstance, carrierKeys: readonly string[]): ReturnsGuards {
  const authenticate = app.authenticate as onRequestHookHandler
  const isCarrierKey = carrierKeyMatcher(carrierKeys)
  const admin: onRequestHookHandler = async (request) => {
    const principal = await app.principalOf(request)
    if (!principal) throw AppError.unauthorized()
    if (!holdsRole(principal, [adminRole])) throw AppError.forbidden()
  }
  // a carrier key, when sent, is the credential: right, the carrier may; wrong (or none configured), 401
  const carrierOrAdmin: onRequestHookHandler = async (request, reply) => {
    const presented = request.headers[carrierKeyHeader]
    if (presented !== undefined) {
      if (!isCarrierKey(String(presented))) throw AppError.unauthorized('Invalid carrier key')
      return
    }
    return admin.call(app, request, reply, () => undefined)
  }
  return { authenticated: [authenticate], carrierOrAdmin: [carrierOrAdmin], admin: [admin] }
}
