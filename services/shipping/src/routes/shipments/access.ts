// Who may do what with shipments: reading needs a credential (which shipments a caller sees is the use case's to
// decide); delivering is for admins, or for a carrier presenting one of the configured keys in X-Carrier-Key.
// Both run in onRequest, so a caller without credentials is 401 before any validation answers.
import { AppError, carrierKeyHeader } from '@meridian/contracts'
import { carrierKeyMatcher } from '@meridian/service-kit'
import type { FastifyInstance, onRequestHookHandler } from 'fastify'
import { isAdmin } from '../../domain/access.ts'
import type { ShipmentsGuards } from './index.ts'

/** Re-exported where shipping's tests and guards have always found it; the kit owns it. */
export { carrierKeyMatcher }

export const carrierKeyMessages = { invalid: 'Invalid carrier key' } as const

export function shipmentsGuards(app: FastifyInstance, carrierKeys: readonly string[]): ShipmentsGuards {
  const authenticate = app.authenticate as onRequestHookHandler
  const isCarrierKey = carrierKeyMatcher(carrierKeys)

  // a carrier key, when sent, is the credential: right, the carrier may deliver; wrong (or none configured), 401
  const carrierOrAdmin: onRequestHookHandler = async (request) => {
    const presented = request.headers[carrierKeyHeader]
    if (presented !== undefined) {
      if (!isCarrierKey(String(presented))) throw AppError.unauthorized(carrierKeyMessages.invalid)
      return
    }
    // no key: an admin's credential (401 without one, 403 for anyone else, the customer too)
    if (!isAdmin(await app.principalOf(request))) throw AppError.forbidden()
  }

  return { read: [authenticate], deliver: [carrierOrAdmin] }
}
