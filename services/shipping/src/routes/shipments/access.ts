// Who may do what with shipments: reading needs a credential (which shipments a caller sees is the use case's to
// decide); delivering is for admins, or for a carrier presenting one of the configured keys in X-Carrier-Key.
// Both run in onRequest, so a caller without credentials is 401 before any validation answers.
import { createHash, timingSafeEqual } from 'node:crypto'
import { AppError, carrierKeyHeader } from '@meridian/contracts'
import type { FastifyInstance, onRequestHookHandler } from 'fastify'
import { isAdmin } from '../../domain/access.ts'
import type { ShipmentsGuards } from './index.ts'

const digestOf = (key: string): Buffer => createHash('sha256').update(key, 'utf8').digest()

/**
 * Whether a presented key is one of the carriers' keys. SHA-256 digests are compared (equal lengths whatever was
 * sent), each with timingSafeEqual and every one of them, so neither the answer's time nor an early exit tells how
 * much of a key was right, or which key.
 */
export function carrierKeyMatcher(keys: readonly string[]): (presented: string) => boolean {
  const digests = keys.map(digestOf)
  return (presented) => {
    const digest = digestOf(presented)
    let matched = false
    for (const each of digests) matched = timingSafeEqual(digest, each) || matched
    return matched
  }
}

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
