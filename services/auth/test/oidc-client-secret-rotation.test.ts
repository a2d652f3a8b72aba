// OIDC_MACHINE_CLIENT_SECRET rotated as docs/how-to/rotating-secrets.md says — the new secret added beside the old on
// every instance, the client moved to the new one, the old one removed — by rolling restarts of two auth instances
// while the machine client asks each for tokens all along (client_credentials, client_secret_basic): none is refused.
// With the old secret removed before the client moves, the same requests meet invalid_client. The web client's secret
// is the same list (OIDC_WEB_CLIENT_SECRET) and the same check.
import { type RotationStep, rotateUnderTraffic } from '@meridian/testkit'
import { describe, expect, it } from 'vitest'
import { loadAuthConfig } from '../src/config.ts'
import { type OidcTestApp, startOidcTestApp } from './oidc-browser.ts'

const oldSecret = 'the-old-machine-client-secret-0123456789abcdef'
const newSecret = 'the-new-machine-client-secret-0123456789abcdef'

/** POST /token as the machine client with `secret`: undefined when a token is issued, else the status and error. */
async function tokenRequest(instance: OidcTestApp, secret: string): Promise<string | undefined> {
  const response = await fetch(`${instance.issuer}/token`, {
    method: 'POST',
    headers: {
      authorization: `Basic ${Buffer.from(`meridian-machine:${secret}`).toString('base64')}`,
      'content-type': 'application/x-www-form-urlencoded',
    },
    body: 'grant_type=client_credentials',
  })
  const body = (await response.json()) as { access_token?: string; error?: string }
  return response.status === 200 && body.access_token
    ? undefined
    : `${secret.slice(4, 7)}: ${response.status} ${body.error}`
}

const rotate = (steps: RotationStep[], replicas = 2) =>
  rotateUnderTraffic<OidcTestApp>(
    {
      replicas,
      initial: { instances: oldSecret, clientSends: oldSecret },
      start: (secrets) => startOidcTestApp({ OIDC_MACHINE_CLIENT_SECRET: secrets }),
      stop: (instance) => instance.close(),
      visit: async (instance, _live, sent) => [await tokenRequest(instance, sent)],
    },
    steps,
  )

describe('a confidential client’s secret rotated under traffic', () => {
  it('when the new secret is added beside the old, the client moves to it, then the old is removed, then no token request is refused', async () => {
    const { refused, requests } = await rotate([
      { instances: `${newSecret},${oldSecret}` },
      { clientSends: newSecret },
      { instances: newSecret },
    ])
    expect(refused).toEqual([])
    // two rolling restarts of two replacements, each after at least 8 requests, and the move after 4
    expect(requests).toBeGreaterThanOrEqual(4 * 8 + 4)
  })

  it('when the old secret is removed before the client moves, then its token requests are refused as invalid_client', async () => {
    const { refused } = await rotate([{ instances: newSecret }, { clientSends: newSecret }], 1)
    expect(refused.length).toBeGreaterThan(0)
    expect(refused.every((line) => line === 'old: 401 invalid_client')).toBe(true)
  })

  it('when the variable holds a fifth secret or one of 31 characters, then the configuration is refused', () => {
    const five = Array.from({ length: 5 }, (_, index) => `secret-number-${index}-0123456789abcdefghij`).join(
      ',',
    )
    for (const value of [five, 'a'.repeat(31), `${newSecret}, ${oldSecret}`]) {
      expect(() => loadAuthConfig({ OIDC_MACHINE_CLIENT_SECRET: value }), value).toThrow(
        'OIDC_MACHINE_CLIENT_SECRET',
      )
    }
  })
})
