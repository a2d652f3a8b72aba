// Address verification and change (issue 44, point 5) on the real engines and Mailpit: registration mails a link that
// proves the address (`emailVerified`, and `email_verified` in the OpenID claims and first-party access tokens); a
// used, expired or wrong link is refused with one answer; a signed-in user asks for a new link, which supersedes the
// older (409 once verified); your own address changes only with your password and through a link mailed to the new one,
// while the current one is told; PATCH of an address is an admin's, and leaves it unproved; a user's live cookie
// sessions say whether the address is verified, rewritten in place as it changes; no token is logged. On the
// development Mailpit (testkit's mailpitEngine()); without it the file fails, naming ./scripts/infra up.
import { randomBytes, randomUUID } from 'node:crypto'
import { authNames } from '@meridian/contracts'
import { eventually, expectErrorEnvelope, type Mailbox } from '@meridian/testkit'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { alreadyVerifiedMessage, invalidVerificationLinkMessage } from '../src/domain/email-verification.ts'
import { verificationLinkSentMessage } from '../src/routes/email-verifications/index.ts'
import type { AuthTestApp } from './auth-app.ts'
import { bearerFor, login, randomAddress, setCookies, signedIn } from './identities.ts'
import { buildMailingAuthTestApp, linkToken } from './support/mailing-app.ts'

const verifySubject = 'Confirm your e-mail address'
const changeNoticeSubject = 'A change of your Meridian address was asked for'
const json = { 'content-type': 'application/json' }

const uniqueEmail = () => `verify.${randomUUID().slice(0, 12)}@example.com`

let auth: AuthTestApp
let box: Mailbox
beforeAll(async () => {
  ;({ auth, box } = await buildMailingAuthTestApp())
})
afterAll(async () => {
  await auth?.close()
})

/** The token of the newest verification link mailed to `address`. */
async function verificationToken(address: string): Promise<string> {
  const mail = await box.waitForMessage({ to: address, subject: verifySubject })
  return linkToken(mail.text, 'verify-email')
}

const verify = (token: string) =>
  auth.app.inject({
    method: 'POST',
    url: `/api/v1/email-verifications/${token}`,
    remoteAddress: randomAddress(),
  })

const refusedAsInvalid = (response: Parameters<typeof expectErrorEnvelope>[0]) =>
  expect(expectErrorEnvelope(response, 400, 'BAD_REQUEST').message).toBe(invalidVerificationLinkMessage)

const register = async (email: string, password = 'registered passphrase') => {
  const created = await auth.app.inject({
    method: 'POST',
    url: '/api/v1/users',
    headers: json,
    payload: { name: 'Verified Person', email, password },
  })
  expect(created.statusCode).toBe(201)
  return { id: created.json().id as string, email, password }
}

/** The claims of a token (its signature is checked where it is used, not here). */
const claimsOf = (token: string): Record<string, unknown> =>
  JSON.parse(Buffer.from(token.split('.')[1] ?? '', 'base64url').toString('utf8'))

const userAs = async (id: string, headers: Record<string, string>) =>
  (await auth.app.inject({ method: 'GET', url: `/api/v1/users/${id}`, headers })).json()

describe('address verification', () => {
  it('when a registered user uses the mailed link, then the address is verified in the user and the OpenID claims, and the link works once', async () => {
    const user = await register(uniqueEmail())
    const pair = (await login(auth, user)).json()
    const bearer = { authorization: `Bearer ${pair.accessToken}` }
    expect((await userAs(user.id, bearer)).emailVerified).toBe(false)

    const token = await verificationToken(user.email)
    expect((await verify(token)).statusCode).toBe(204)
    expect((await userAs(user.id, bearer)).emailVerified).toBe(true)
    const claims = await auth.app.inject({ method: 'GET', url: '/userinfo', headers: bearer })
    expect(claims.json()).toMatchObject({ email: user.email, email_verified: true })
    refusedAsInvalid(await verify(token))
  })

  it('when a user signs in, then the access token says whether the address is verified; a refresh after the link says it is', async () => {
    const user = await register(uniqueEmail())
    const pair = (await login(auth, user)).json()
    expect(claimsOf(pair.accessToken).email_verified).toBe(false)
    expect((await verify(await verificationToken(user.email))).statusCode).toBe(204)
    const refreshed = await auth.app.inject({
      method: 'POST',
      url: '/refresh',
      headers: json,
      payload: { refreshToken: pair.refreshToken },
    })
    expect(refreshed.statusCode).toBe(200)
    expect(claimsOf(refreshed.json().accessToken).email_verified).toBe(true)
    expect(claimsOf((await login(auth, user)).json().accessToken).email_verified).toBe(true)
  })

  it('when a link is wrong, malformed or expired, then the same 400 answers and nothing is verified', async () => {
    refusedAsInvalid(await verify(randomBytes(32).toString('base64url')))
    refusedAsInvalid(await verify('not-a-token'))
    const user = await register(uniqueEmail())
    const token = await verificationToken(user.email)
    await auth.sql`update email_verifications set expires_at = now() - interval '1 second' where user_id = ${user.id}`
    refusedAsInvalid(await verify(token))
    expect((await userAs(user.id, bearerFor(auth, { role: 'admin' }))).emailVerified).toBe(false)
  })
})

describe('a new verification link on demand', () => {
  const askForLink = (
    headers: Record<string, string>,
    payload?: Record<string, unknown>,
    remoteAddress = randomAddress(),
  ) =>
    auth.app.inject({
      method: 'POST',
      url: '/api/v1/email-verifications',
      headers: payload === undefined ? headers : { ...json, ...headers },
      ...(payload === undefined ? {} : { payload }),
      remoteAddress,
    })

  /** How many links of the user wait to be used (written with their mail, in one transaction). */
  const pendingLinks = async (userId: string) =>
    (
      await auth.sql<
        { n: number }[]
      >`select count(*)::int as n from email_verifications where user_id = ${userId}`
    )[0]?.n

  /** The ids of the verification mails Mailpit holds for `address`, newest first. */
  const verificationMails = async (address: string) =>
    (await box.search(`to:"${address}" subject:"${verifySubject}"`)).map((mail) => mail.id)

  it('when an unverified user asks (no body, or {}), then a new link arrives, the older one is refused and the new one proves the address', async () => {
    const user = await register(uniqueEmail())
    const bearer = { authorization: `Bearer ${(await login(auth, user)).json().accessToken}` }
    const first = await verificationToken(user.email)

    const asked = await askForLink(bearer)
    expect(asked.statusCode).toBe(202)
    expect(asked.json()).toEqual({ message: verificationLinkSentMessage })
    await eventually(
      'the second link is delivered',
      async () => (await verificationMails(user.email)).length === 2,
    )
    const second = await verificationToken(user.email)
    expect(second).not.toBe(first)
    expect((await askForLink(bearer, {})).statusCode).toBe(202)
    await eventually(
      'the third link is delivered',
      async () => (await verificationMails(user.email)).length === 3,
    )
    const third = await verificationToken(user.email)

    refusedAsInvalid(await verify(first))
    refusedAsInvalid(await verify(second))
    expect((await verify(third)).statusCode).toBe(204)
    expect((await userAs(user.id, bearer)).emailVerified).toBe(true)
  })

  it('when the address is verified already, then 409 CONFLICT and no link is mailed', async () => {
    const user = await register(uniqueEmail())
    expect((await verify(await verificationToken(user.email))).statusCode).toBe(204)
    const bearer = { authorization: `Bearer ${(await login(auth, user)).json().accessToken}` }
    const refused = await askForLink(bearer)
    expect(expectErrorEnvelope(refused, 409, 'CONFLICT').message).toBe(alreadyVerifiedMessage)
    expect(await pendingLinks(user.id)).toBe(0)
    expect(await verificationMails(user.email)).toHaveLength(1)
  })

  it('when one address asks for new links from two clients past its limit, then 429 RATE_LIMITED from either, the answers before it as always, and another address still served', async () => {
    const user = await register(uniqueEmail())
    const bearer = { authorization: `Bearer ${(await login(auth, user)).json().accessToken}` }
    // two clients, each well within its own limit (PASSWORD_RESET_MAX_PER_CLIENT: 20); the address's is 5
    const clients = [randomAddress(), randomAddress()]
    for (let attempt = 0; attempt < 5; attempt++) {
      const asked = await askForLink(bearer, undefined, clients[attempt % 2])
      expect(asked.statusCode).toBe(202)
      expect(asked.json()).toEqual({ message: verificationLinkSentMessage })
    }
    for (const client of clients) {
      const refused = expectErrorEnvelope(await askForLink(bearer, undefined, client), 429, 'RATE_LIMITED')
      expect(refused.message).toBe('Too many requests for a new link to this address. Try again later.')
      expect(refused.retryAfter).toBeGreaterThan(0)
    }
    // one link waits (each supersedes the older); six mails, the registration's and the five asked for: the refused
    // requests wrote none
    expect(await pendingLinks(user.id)).toBe(1)
    const [mailed] = await auth.sql<{ n: number }[]>`
      select count(*)::int as n from security_mails where user_id = ${user.id} and template = 'verify_address'`
    expect(mailed?.n).toBe(6)

    // the limit is the address's: another account, from the same clients, is served
    const other = await register(uniqueEmail())
    const otherBearer = { authorization: `Bearer ${(await login(auth, other)).json().accessToken}` }
    expect((await askForLink(otherBearer, undefined, clients[0])).statusCode).toBe(202)
  })

  it('when no one is signed in or the body holds anything, then 401 or 422 and nothing is mailed', async () => {
    expectErrorEnvelope(await askForLink({}), 401, 'UNAUTHORIZED')
    const user = await signedIn(auth, { email: uniqueEmail() })
    expectErrorEnvelope(await askForLink(user.headers, { email: uniqueEmail() }), 422, 'VALIDATION_ERROR')
    expect(await pendingLinks(user.user.id)).toBe(0)
  })
})

describe('cookie sessions say whether the address is verified', () => {
  /** A new cookie session of the user (POST /login?mode=session): its id and its Redis key. */
  async function sessionOf(user: { email: string; password: string }) {
    const response = await login(auth, user, { query: '?mode=session' })
    expect(response.statusCode).toBe(204)
    const sessionId = setCookies(response.headers)[0]?.value ?? ''
    return { sessionId, key: `${authNames.sessionKeyPrefix}${sessionId}` }
  }

  const recordAt = async (key: string) => JSON.parse((await auth.redis.get(key)) ?? 'null')

  it('when a user signs in with a session, then its record says the address is not verified; once the link is used, every live session says it is, in place, its time left kept', async () => {
    const user = await register(uniqueEmail())
    const other = await register(uniqueEmail())
    const first = await sessionOf(user)
    const second = await sessionOf(user)
    const others = await sessionOf(other)
    expect(await recordAt(first.key)).toEqual({
      userId: user.id,
      role: 'user',
      createdAt: expect.any(String),
      emailVerified: false,
    })
    const before = await recordAt(first.key)
    const ttlsBefore = [await auth.redis.pttl(first.key), await auth.redis.pttl(second.key)]

    expect((await verify(await verificationToken(user.email))).statusCode).toBe(204)
    expect(await recordAt(first.key)).toEqual({ ...before, emailVerified: true })
    expect((await recordAt(second.key)).emailVerified).toBe(true)
    const ttlsAfter = [await auth.redis.pttl(first.key), await auth.redis.pttl(second.key)]
    // KEEPTTL: each still ends when it did (a rewrite without it would make the record last for ever: -1)
    ttlsAfter.forEach((ttl, index) => {
      expect(ttl).toBeGreaterThan(0)
      expect(ttl).toBeLessThanOrEqual(ttlsBefore[index] ?? 0)
    })
    // the session still signs in, and another user's session is not touched
    expect(
      (await userAs(user.id, { cookie: `${authNames.sessionCookie}=${first.sessionId}` })).emailVerified,
    ).toBe(true)
    expect((await recordAt(others.key)).emailVerified).toBe(false)
  })

  it('when an admin PATCHes the address, then the live sessions say it is not verified; a session ended by logout is not written back', async () => {
    const user = await register(uniqueEmail())
    expect((await verify(await verificationToken(user.email))).statusCode).toBe(204)
    const live = await sessionOf(user)
    const ended = await sessionOf(user)
    expect((await recordAt(live.key)).emailVerified).toBe(true)
    const logout = await auth.app.inject({
      method: 'POST',
      url: '/logout',
      cookies: { [authNames.sessionCookie]: ended.sessionId },
    })
    expect(logout.statusCode).toBe(204)

    const patched = await auth.app.inject({
      method: 'PATCH',
      url: `/api/v1/users/${user.id}`,
      headers: { ...json, ...bearerFor(auth, { role: 'admin' }) },
      payload: { email: uniqueEmail() },
    })
    expect(patched.statusCode).toBe(200)
    expect((await recordAt(live.key)).emailVerified).toBe(false)
    expect(await auth.redis.pttl(live.key)).toBeGreaterThan(0)
    expect(await auth.redis.exists(ended.key)).toBe(0)
  })
})

describe('address change', () => {
  const changeEmail = (id: string, headers: Record<string, string>, payload: Record<string, unknown>) =>
    auth.app.inject({
      method: 'POST',
      url: `/api/v1/users/${id}/email-change`,
      headers: { ...json, ...headers },
      payload,
      remoteAddress: randomAddress(),
    })

  it('when a user asks with their password, then the current address is told, and the address changes, verified, only when the new one’s link is used', async () => {
    const user = await signedIn(auth, { email: uniqueEmail() })
    const newAddress = uniqueEmail()
    const asked = await changeEmail(user.user.id, user.headers, {
      email: newAddress.toUpperCase(),
      password: user.user.password,
    })
    expect(asked.statusCode).toBe(202)
    await box.waitForMessage({ to: user.user.email, subject: changeNoticeSubject })
    const token = await verificationToken(newAddress)
    expect((await userAs(user.user.id, user.headers)).email).toBe(user.user.email)

    expect((await verify(token)).statusCode).toBe(204)
    const changed = await userAs(user.user.id, bearerFor(auth, { role: 'admin' }))
    expect(changed).toMatchObject({ email: newAddress, emailVerified: true })
    expect((await login(auth, { email: newAddress, password: user.user.password })).statusCode).toBe(200)
    expect((await login(auth, user.user)).statusCode).toBe(401)
  })

  it('when the password is wrong, the account is another’s, or the user PATCHes their address, then 403 and nothing is mailed', async () => {
    const user = await signedIn(auth, { email: uniqueEmail() })
    const other = await signedIn(auth, { email: uniqueEmail() })
    const newAddress = uniqueEmail()
    const wrong = await changeEmail(user.user.id, user.headers, {
      email: newAddress,
      password: 'not it at all',
    })
    expect(expectErrorEnvelope(wrong, 403, 'FORBIDDEN').message).toBe('The current password is incorrect')
    expectErrorEnvelope(
      await changeEmail(other.user.id, user.headers, { email: newAddress, password: user.user.password }),
      403,
      'FORBIDDEN',
    )
    const patched = await auth.app.inject({
      method: 'PATCH',
      url: `/api/v1/users/${user.user.id}`,
      headers: { ...json, ...user.headers },
      payload: { email: newAddress },
    })
    expect(expectErrorEnvelope(patched, 403, 'FORBIDDEN').message).toContain('/email-change')
    // PATCH counts against the service's limit, not the address change's (the routes share their guard array)
    expect(patched.headers['x-ratelimit-limit']).toBe(auth.config.RATE_LIMIT_MAX.toString())
    expect(await box.search(`to:"${newAddress}"`)).toEqual([])
  })

  it('when an admin PATCHes a verified address, then it changes and is unproved again', async () => {
    const user = await register(uniqueEmail())
    expect((await verify(await verificationToken(user.email))).statusCode).toBe(204)
    const admin = bearerFor(auth, { role: 'admin' })
    const newAddress = uniqueEmail()
    const patched = await auth.app.inject({
      method: 'PATCH',
      url: `/api/v1/users/${user.id}`,
      headers: { ...json, ...admin },
      payload: { email: newAddress },
    })
    expect(patched.statusCode).toBe(200)
    expect(patched.json()).toMatchObject({ email: newAddress, emailVerified: false })
  })

  it('when links are used, then no log line holds a token and the logged URLs read [redacted]', async () => {
    const user = await register(uniqueEmail())
    const token = await verificationToken(user.email)
    expect((await verify(token)).statusCode).toBe(204)
    expect(JSON.stringify(auth.logs)).not.toContain(token)
    const urls = auth.logs.map((line) => (line.req as { url?: string } | undefined)?.url)
    expect(urls).toContain('/api/v1/email-verifications/[redacted]')
  })
})
