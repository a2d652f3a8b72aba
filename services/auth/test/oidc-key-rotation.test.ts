// A signing-key rotation rebuilds the OpenID provider: new ID tokens carry the new key, earlier tokens and grants
// (in PostgreSQL) stay valid, and the provider's JWKS follows the key ring.
import * as client from 'openid-client'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createKeyRing } from '../src/domain/signing-keys.ts'
import {
  createTestUser,
  type OidcTestApp,
  signInWithPkce,
  startOidcTestApp,
  type TestUser,
} from './oidc-browser.ts'

const spaRedirect = 'http://localhost:5173/callback'
const insecure = { execute: [client.allowInsecureRequests] }
const hour = 3600

describe('OpenID provider and signing-key rotation', () => {
  let auth: OidcTestApp
  let user: TestUser
  let now = Date.now()

  beforeAll(async () => {
    auth = await startOidcTestApp(
      {},
      {
        // rotation every hour on a clock the test moves
        keyRing: (sql, config) =>
          createKeyRing({
            sql,
            encryptionSecret: config.SIGNING_KEY_ENCRYPTION_SECRET,
            timing: {
              rotationPeriodSeconds: hour,
              tokenLifetimeSeconds: 60,
              cacheMarginSeconds: 60,
              checkIntervalMs: 3_600_000,
            },
            clock: () => now,
          }),
      },
    )
    user = await createTestUser(auth)
  })
  afterAll(async () => {
    await auth.close()
  })

  async function signInWithSpa(): Promise<Awaited<ReturnType<typeof client.authorizationCodeGrant>>> {
    const spa = await client.discovery(
      new URL(auth.issuer),
      'meridian-spa',
      undefined,
      client.None(),
      insecure,
    )
    const { callback, verifier, state } = await signInWithPkce(auth.issuer, spa, user, {
      redirect_uri: spaRedirect,
      scope: 'openid profile',
    })
    return client.authorizationCodeGrant(spa, callback, { pkceCodeVerifier: verifier, expectedState: state })
  }

  const kidOf = (jwt: string): string =>
    JSON.parse(Buffer.from(jwt.split('.')[0] ?? '', 'base64url').toString()).kid

  it('when the next key takes over, then new ID tokens are signed with it and tokens issued before still work', async () => {
    const before = await signInWithSpa()
    const firstKid = auth.keyRing.signingKey().kid
    expect(kidOf(before.id_token!)).toBe(firstKid)

    // the next key is published ahead of its turn, then signs once the rotation period has passed
    now += (hour - 60) * 1000
    await auth.keyRing.refresh()
    now += 120 * 1000
    await auth.keyRing.refresh()
    const secondKid = auth.keyRing.signingKey().kid
    expect(secondKid).not.toBe(firstKid)

    const jwks = (await (await fetch(`${auth.issuer}/oidc/jwks`)).json()) as { keys: { kid: string }[] }
    expect(jwks.keys.map((key) => key.kid)).toEqual([secondKid, firstKid])

    const after = await signInWithSpa()
    expect(kidOf(after.id_token!)).toBe(secondKid)

    const userinfo = await fetch(`${auth.issuer}/userinfo`, {
      headers: { authorization: `Bearer ${before.access_token}` },
    })
    expect(userinfo.status).toBe(200)
    expect(
      auth.logs.some((line) => line.msg === 'OpenID provider rebuilt with the rotated signing keys'),
    ).toBe(true)
  })
})
