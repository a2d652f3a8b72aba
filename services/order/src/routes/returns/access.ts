// Who may do what with returns: asking for one and reading them needs a credential (whose order and which return is
// the use cases' to decide: the customer or an admin); marking the goods received is for admins, or for a carrier
// presenting its key of RETURNS_CARRIER_KEYS (`name=key`) in X-Carrier-Key (a wrong key is 401), which names the
// carrier: the use cases let it receive only the returns bound to it. Rejecting is for admins. All run in onRequest,
// so a caller without credentials is 401 before any validation answers.
import { AppError, carrierKeyHeader } from '@meridian/contracts'
import { carrierOfKey, holdsRole, type NamedCarrierKey } from '@meridian/service-kit'
import type { FastifyInstance, FastifyRequest, onRequestHookHandler } from 'fastify'
import { adminRole } from '../../domain/access.ts'
import type { Receiver } from '../../domain/returns.ts'

export interface ReturnsGuards {
  authenticated: onRequestHookHandler[]
  carrierOrAdmin: onRequestHookHandler[]
  admin: onRequestHookHandler[]
  /** after carrierOrAdmin: the carrier its key named, or the admin its credential proved */
  receiverOf: (request: FastifyRequest) => Promise<Receiver>
}

export function returnsGuards(app: FastifyInstance, carrierKeys: readonly NamedCarrierKey[]): ReturnsGuards {
  const authenticate = app.authenticate as onRequestHookHandler
  const carrierOf = carrierOfKey(carrierKeys)
  const carriers = new WeakMap<FastifyRequest, string>()
  const admin: onRequestHookHandler = async (request) => {
    const principal = await app.principalOf(request)
    if (!principal) throw AppError.unauthorized()
    if (!holdsRole(principal, [adminRole])) throw AppError.forbidden()
  }
  // a carrier key, when sent, is the credential: right, the carrier it names may; wrong (or none configured), 401
  const carrierOrAdmin: onRequestHookHandler = async (request, reply) => {
    const presented = request.headers[carrierKeyHeader]
    if (presented !== undefined) {
      const carrier = carrierOf(String(presented))
      if (carrier === undefined) throw AppError.unauthorized('Invalid carrier key')
      carriers.set(request, carrier)
      return
    }
    return admin.call(app, request, reply, () => undefined)
  }
  async function receiverOf(request: FastifyRequest): Promise<Receiver> {
    const carrier = carriers.get(request)
    if (carrier !== undefined) return { carrier }
    const principal = await app.principalOf(request)
    if (!principal) throw AppError.unauthorized()
    return { admin: principal }
  }
  return { authenticated: [authenticate], carrierOrAdmin: [carrierOrAdmin], admin: [admin], receiverOf }
}
