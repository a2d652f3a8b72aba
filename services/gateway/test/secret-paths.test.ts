// A route whose path below its prefix is a secret (a password reset or address verification link's token): the gateway routes it to its
// service like any other, and its request log lines show [redacted] where the token was, under /api/v1 and the /api
// alias alike.
import { randomBytes } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startGateway, type TestGateway } from './support/gateway.ts'

let gateway: TestGateway
beforeAll(async () => {
  // the gateway's own table: no auth instance is registered under the test's Consul names, which is enough to log
  gateway = await startGateway({ env: { GATEWAY_SERVICE_NAMES: 'auth=secret-paths-absent-auth' } })
})
afterAll(async () => {
  await gateway?.close()
})

describe('secret paths at the gateway', () => {
  it('when a reset token is posted under /api/v1 and /api, then no log line holds it and the logged URLs read [redacted]', async () => {
    const tokens = [0, 1, 2].map(() => randomBytes(32).toString('base64url'))
    const paths = [
      `/api/v1/password-resets/${tokens[0]}`,
      `/api/password-resets/${tokens[1]}`,
      `/api/v1/email-verifications/${tokens[2]}`,
    ]
    for (const path of paths) {
      const response = await fetch(`${gateway.url}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ password: 'whatever it may be' }),
      })
      // routed to auth, which has no instance here
      expect(response.status).toBe(503)
      await response.body?.cancel()
    }
    const text = JSON.stringify(gateway.logs)
    for (const token of tokens) expect(text).not.toContain(token)
    const urls = gateway.logs.map((line) => (line.req as { url?: string } | undefined)?.url)
    expect(urls).toEqual(
      expect.arrayContaining([
        '/api/v1/password-resets/[redacted]',
        '/api/password-resets/[redacted]',
        '/api/v1/email-verifications/[redacted]',
      ]),
    )
  })
})
