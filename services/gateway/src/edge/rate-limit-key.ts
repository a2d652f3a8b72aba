// Who an edge rate limit counts a request against: an API key (hashed), else a signed-in user, else the client address.
import { createHash } from 'node:crypto'
import { authNames } from '@meridian/contracts'
import type { FastifyRequest } from 'fastify'

export const rateLimitHeaderNames = [
  'x-ratelimit-limit',
  'x-ratelimit-remaining',
  'x-ratelimit-reset',
] as const

export interface RateLimitKeyOptions {
  /** the client address as the gateway determined it (trusted proxies considered) */
  clientAddress(request: FastifyRequest): string
  /**
   * the `sub` of a valid bearer token, undefined otherwise; an invalid token is not the gateway's to refuse (the
   * service answers 401), so it is simply counted by address
   */
  bearerSubject(request: FastifyRequest): Promise<string | undefined>
}

export function rateLimitKeyGenerator(
  options: RateLimitKeyOptions,
): (request: FastifyRequest) => Promise<string> {
  return async (request) => {
    const apiKey = request.headers[authNames.apiKeyHeader]
    if (typeof apiKey === 'string' && apiKey !== '') {
      // the key itself never becomes a Redis key name (it would be readable there)
      return `key:${createHash('sha256').update(apiKey).digest('base64url')}`
    }
    if (request.headers.authorization !== undefined) {
      const subject = await options.bearerSubject(request)
      if (subject !== undefined) return `user:${subject}`
    }
    return `ip:${options.clientAddress(request)}`
  }
}
