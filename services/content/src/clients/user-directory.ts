// Auth's users directory as content reaches it: auth's REST API (POST /api/v1/users) found in Consul with the kit's
// discovered upstream client, called with the caller's own credential, so auth decides who may create a user (an
// admin: a user without a password is created `invited`). Auth's refusals are the caller's own errors (401, 403,
// 409 for an email in use, 422, 429); auth unreachable or failing is 503 or 502.
import type { CreateUserArgs, User } from '@meridian/contracts'
import type { DiscoveredUpstream } from '@meridian/service-kit'

export interface UserDirectory {
  /** Creates the user without a password (status `invited`); auth's answer. */
  invite(input: CreateUserArgs, on: { credential: Record<string, string>; requestId: string }): Promise<User>
}

/** The statuses of auth that answer the caller rather than tell of auth failing. */
const callersOwnStatuses = [400, 401, 403, 409, 422, 429] as const

export function createUserDirectory({ upstream }: Pick<DiscoveredUpstream, 'upstream'>): UserDirectory {
  return {
    async invite({ name, email }, { credential, requestId }) {
      const { body } = await upstream.request<User>({
        method: 'POST',
        path: '/api/v1/users',
        body: { name, email },
        headers: credential,
        requestId,
        relayStatuses: callersOwnStatuses,
      })
      return body
    },
  }
}
