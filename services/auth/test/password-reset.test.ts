// Password reset (issue 44, point 4) on the real engines and Mailpit: the link arrives by mail and sets the password
// once; every credential the user held stops working and a "your password was changed" notice arrives; an expired,
// reused, superseded, wrong or password-change-ended token is refused with one and the same answer; requests are
// limited per address (existing or not, the same answer) and per client; a request for an address nobody has takes
// as long as one for an account's (the medians of 50 each, interleaved, within 20 ms: the measure); and no
// token lands in a log line, the database or an event. With an SMTP server that never answers, the mail is retried,
// then dead (its link erased, logged without the address, counted). On the development Mailpit (testkit's mailpitEngine(): the one
// `./scripts/infra up` runs); without it the file fails, naming that command.
import { randomBytes, randomUUID } from 'node:crypto'
import { createServer } from 'node:net'
import { performance } from 'node:perf_hooks'
import { authNames } from '@meridian/contracts'
import { messageIdFor } from '@meridian/mail'
import { eventually, expectErrorEnvelope, type Mailbox } from '@meridian/testkit'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { invalidResetLinkMessage } from '../src/domain/password-reset.ts'
import { securityMailIdempotencyKey } from '../src/domain/security-mail-sender.ts'
import { type AuthTestApp, buildAuthTestApp } from './auth-app.ts'
import { createTestUser, login, randomAddress, setCookies, signedIn } from './identities.ts'
import { buildMailingAuthTestApp, linkToken } from './support/mailing-app.ts'

const resetSubject = 'Reset your Meridian password'
const changedSubject = 'Your Meridian password was changed'
const json = { 'content-type': 'application/json' }

const uniqueEmail = () => `reset.${randomUUID().slice(0, 12)}@example.com`

let auth: AuthTestApp
let box: Mailbox
beforeAll(async () => {
  ;({ auth, box } = await buildMailingAuthTestApp({
    PASSWORD_RESET_MAX_PER_ACCOUNT: '3',
    PASSWORD_RESET_MAX_PER_CLIENT: '5',
  }))
})
afterAll(async () => {
  await auth?.close()
})

const requestReset = (app: AuthTestApp, email: string, remoteAddress = randomAddress()) =>
  app.app.inject({
    method: 'POST',
    url: '/api/v1/password-resets',
    headers: json,
    payload: { email },
    remoteAddress,
  })

const useReset = (token: string, password: string, remoteAddress = randomAddress()) =>
  auth.app.inject({
    method: 'POST',
    url: `/api/v1/password-resets/${token}`,
    headers: json,
    payload: { password },
    remoteAddress,
  })

/** The token at the end of the link of a reset mail's text. */
const tokenOf = (text: string): string => linkToken(text, 'reset-password')

/** The tokens of the reset mails sent to `address`, newest first, once `count` of them arrived. */
async function resetTokens(address: string, count: number): Promise<string[]> {
  const query = `to:"${address}" subject:"${resetSubject}"`
  await eventually(`${count} reset mail(s) reached ${address}`, async () => {
    return (await box.search(query)).length >= count
  })
  const found = await box.search(query)
  return Promise.all(found.map(async (summary) => tokenOf((await box.message(summary.id)).text)))
}

const refusedAsInvalid = (response: Parameters<typeof expectErrorEnvelope>[0]) =>
  expect(expectErrorEnvelope(response, 400, 'BAD_REQUEST').message).toBe(invalidResetLinkMessage)

describe('password reset', () => {
  it('when a user asks for a reset and uses the mailed link, then the password is set once, every earlier credential stops, and the changed notice arrives', async () => {
    const user = await signedIn(auth, { email: uniqueEmail() })
    const session = setCookies((await login(auth, user.user, { query: '?mode=session' })).headers)[0]?.value

    // the address as login takes it: its case does not matter
    const asked = await requestReset(auth, user.user.email.toUpperCase())
    expect(asked.statusCode).toBe(202)
    const mail = await box.waitForMessage({ to: user.user.email, subject: resetSubject })
    const token = tokenOf(mail.text)
    expect(mail.text).toContain(`http://127.0.0.1:8080/console/#/reset-password/${token}`)
    expect(mail.text).toContain('30 minutes')
    const [row] = await auth.sql<{ id: string }[]>`
      select id from security_mails where user_id = ${user.user.id} and template = 'password_reset'`
    expect(mail.messageId).toBe(
      messageIdFor(securityMailIdempotencyKey(row?.id ?? ''), 'no-reply@meridian.test').slice(1, -1),
    )
    expect(mail.headers['List-Unsubscribe']).toBeUndefined()

    expect((await useReset(token, 'a fresh reset passphrase')).statusCode).toBe(204)

    const self = (headers: Record<string, string>, cookies: Record<string, string> = {}) =>
      auth.app.inject({ method: 'GET', url: `/api/v1/users/${user.user.id}`, headers, cookies })
    expectErrorEnvelope(await self(user.headers), 401, 'UNAUTHORIZED')
    expectErrorEnvelope(await self({}, { [authNames.sessionCookie]: session ?? '' }), 401, 'UNAUTHORIZED')
    const refreshed = await auth.app.inject({
      method: 'POST',
      url: '/refresh',
      headers: json,
      payload: { refreshToken: user.refreshToken },
    })
    expect(refreshed.statusCode).toBe(401)
    expect((await login(auth, user.user)).statusCode).toBe(401)
    const again = await login(auth, { email: user.user.email, password: 'a fresh reset passphrase' })
    expect(again.statusCode).toBe(200)

    const notice = await box.waitForMessage({ to: user.user.email, subject: changedSubject })
    expect(notice.text).toContain('was changed at')
    // used once: a second use is refused like any unknown token, and the password stays
    refusedAsInvalid(await useReset(token, 'someone else entirely'))
    expect(
      (await login(auth, { email: user.user.email, password: 'a fresh reset passphrase' })).statusCode,
    ).toBe(200)
  })

  it('when a reset link is used after it expired, then it is refused and the password is unchanged', async () => {
    const user = await createTestUser(auth, { email: uniqueEmail() })
    expect((await requestReset(auth, user.email)).statusCode).toBe(202)
    const [token = ''] = await resetTokens(user.email, 1)
    await auth.sql`update password_resets set expires_at = now() - interval '1 second' where user_id = ${user.id}`
    refusedAsInvalid(await useReset(token, 'too late for this one'))
    expect((await login(auth, user)).statusCode).toBe(200)
  })

  it('when a user asks twice, then the first link is superseded and refused, and the newer one works', async () => {
    const user = await createTestUser(auth, { email: uniqueEmail() })
    expect((await requestReset(auth, user.email)).statusCode).toBe(202)
    await resetTokens(user.email, 1)
    expect((await requestReset(auth, user.email)).statusCode).toBe(202)
    const [newer = '', older = ''] = await resetTokens(user.email, 2)
    expect(newer).not.toBe(older)
    refusedAsInvalid(await useReset(older, 'the superseded attempt'))
    expect((await useReset(newer, 'the newer link works')).statusCode).toBe(204)
  })

  it('when a token is no link at all (random, malformed, or of another form), then the same 400 answers', async () => {
    refusedAsInvalid(await useReset(randomBytes(32).toString('base64url'), 'whatever it may be'))
    refusedAsInvalid(await useReset('not-a-token', 'whatever it may be'))
    refusedAsInvalid(await useReset('x'.repeat(100), 'whatever it may be'))
    const weak = await useReset(randomBytes(32).toString('base64url'), 'short')
    expectErrorEnvelope(weak, 422, 'VALIDATION_ERROR')
  })

  it('when the user changes their password after asking, then the link is refused, and the change is told by mail', async () => {
    const user = await signedIn(auth, { email: uniqueEmail() })
    expect((await requestReset(auth, user.user.email)).statusCode).toBe(202)
    const [token = ''] = await resetTokens(user.user.email, 1)
    const changed = await auth.app.inject({
      method: 'PUT',
      url: `/api/v1/users/${user.user.id}/password`,
      headers: { ...json, ...user.headers },
      payload: { currentPassword: user.user.password, newPassword: 'changed by its owner' },
      remoteAddress: randomAddress(),
    })
    expect(changed.statusCode).toBe(204)
    refusedAsInvalid(await useReset(token, 'the link is void now'))
    await box.waitForMessage({ to: user.user.email, subject: changedSubject })
  })

  it('when nobody has the address, or the account is suspended, then the answer is the same 202 and no mail or reset is written', async () => {
    const missing = uniqueEmail()
    const suspended = await createTestUser(auth, { email: uniqueEmail(), status: 'suspended' })
    const answers = [await requestReset(auth, missing), await requestReset(auth, suspended.email)]
    const existing = await createTestUser(auth, { email: uniqueEmail() })
    const known = await requestReset(auth, existing.email)
    for (const answer of answers) {
      expect(answer.statusCode).toBe(202)
      expect(answer.body).toBe(known.body)
    }
    const [written] = await auth.sql<{ n: number }[]>`
      select count(*)::int as n from security_mails where recipient in (${missing}, ${suspended.email})`
    expect(written?.n).toBe(0)
  })
})

describe('password reset: limits', () => {
  it('when one address is asked for past its limit, then 429 RATE_LIMITED, the same for an account and for nobody', async () => {
    const existing = await createTestUser(auth, { email: uniqueEmail() })
    for (const email of [existing.email, uniqueEmail()]) {
      for (let attempt = 0; attempt < 3; attempt++)
        expect((await requestReset(auth, email)).statusCode).toBe(202)
      const refused = expectErrorEnvelope(await requestReset(auth, email), 429, 'RATE_LIMITED')
      expect(refused.message).toBe('Too many password reset requests for this address. Try again later.')
      expect(refused.retryAfter).toBeGreaterThan(0)
    }
  })

  it('when one client asks past its limit, then 429 RATE_LIMITED, for requests and for uses of links alike', async () => {
    const client = randomAddress()
    for (let attempt = 0; attempt < 5; attempt++) {
      expect((await requestReset(auth, uniqueEmail(), client)).statusCode).toBe(202)
    }
    expectErrorEnvelope(await requestReset(auth, uniqueEmail(), client), 429, 'RATE_LIMITED')
    const user = randomAddress()
    for (let attempt = 0; attempt < 5; attempt++) {
      refusedAsInvalid(await useReset(randomBytes(32).toString('base64url'), 'guessing tokens', user))
    }
    expectErrorEnvelope(
      await useReset(randomBytes(32).toString('base64url'), 'guessing', user),
      429,
      'RATE_LIMITED',
    )
  })
})

describe('password reset: enumeration', () => {
  let quiet: AuthTestApp
  beforeAll(async () => {
    // limits out of the way, and no sends during the measurement
    quiet = await buildAuthTestApp({
      EMAIL_SEND_INTERVAL_MS: '600000',
      PASSWORD_RESET_MAX_PER_ACCOUNT: '1000',
      PASSWORD_RESET_MAX_PER_CLIENT: '10000',
    })
  })
  afterAll(async () => {
    await quiet?.close()
  })

  const median = (values: number[]) => {
    const sorted = [...values].sort((a, b) => a - b)
    const middle = Math.floor(sorted.length / 2)
    return sorted.length % 2 === 0
      ? ((sorted[middle - 1] ?? 0) + (sorted[middle] ?? 0)) / 2
      : (sorted[middle] ?? 0)
  }

  it("when 50 requests for an account's address and 50 for nobody's are interleaved, then their median times differ by less than 20 ms", async () => {
    const existing = await createTestUser(quiet, { email: uniqueEmail() })
    const timed = async (email: string) => {
      const started = performance.now()
      const answer = await requestReset(quiet, email)
      expect(answer.statusCode).toBe(202)
      return performance.now() - started
    }
    // warm both paths up (statements prepared, connections open)
    for (let round = 0; round < 5; round++) await Promise.all([timed(existing.email), timed(uniqueEmail())])
    const forExisting: number[] = []
    const forMissing: number[] = []
    for (let round = 0; round < 50; round++) {
      // alternate which goes first, so neither always runs on a warmer process
      if (round % 2 === 0) {
        forExisting.push(await timed(existing.email))
        forMissing.push(await timed(uniqueEmail()))
      } else {
        forMissing.push(await timed(uniqueEmail()))
        forExisting.push(await timed(existing.email))
      }
    }
    expect(Math.abs(median(forExisting) - median(forMissing))).toBeLessThan(20)
  })
})

describe('password reset: secrecy', () => {
  it('when a reset is asked for and used, then no log line, stored row or event holds its token, and the logged URL reads [redacted]', async () => {
    const user = await createTestUser(auth, { email: uniqueEmail() })
    expect((await requestReset(auth, user.email)).statusCode).toBe(202)
    const [token = ''] = await resetTokens(user.email, 1)
    expect((await useReset(token, 'kept out of every log')).statusCode).toBe(204)
    await box.waitForMessage({ to: user.email, subject: changedSubject })

    const logs = JSON.stringify(auth.logs)
    expect(logs).not.toContain(token)
    expect(logs).not.toContain('kept out of every log')
    const urls = auth.logs.map((line) => (line.req as { url?: string } | undefined)?.url)
    expect(urls).toContain('/api/v1/password-resets/[redacted]')

    const stored = JSON.stringify([
      await auth.sql`select * from password_resets`,
      await auth.sql`select * from security_mails`,
      await auth.sql`select * from outbox`,
    ])
    expect(stored).not.toContain(token)
    // once sent, a mail keeps no sealed link
    const [sealed] = await auth.sql<{ n: number }[]>`
      select count(*)::int as n from security_mails where user_id = ${user.id} and sealed_data is not null`
    expect(sealed?.n).toBe(0)
  })
})

describe('password reset: an SMTP server that never answers', () => {
  let unreachable: AuthTestApp
  beforeAll(async () => {
    // a port nothing listens on: every send fails to connect
    const server = createServer()
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    const { port } = server.address() as { port: number }
    await new Promise<void>((resolve) => server.close(() => resolve()))
    unreachable = await buildAuthTestApp({
      SMTP_URL: `smtp://127.0.0.1:${port}`,
      MAIL_SEND_TIMEOUT_MS: '1000',
      EMAIL_SEND_INTERVAL_MS: '50',
      EMAIL_MAX_ATTEMPTS: '2',
      EMAIL_RETRY_BASE_MS: '10',
      EMAIL_RETRY_MAX_MS: '20',
    })
  })
  afterAll(async () => {
    await unreachable?.close()
  })

  it('when every send fails, then the mail is retried, then dead: its link erased, an error line without the address, and the dead counted', async () => {
    const user = await createTestUser(unreachable, { email: uniqueEmail() })
    expect((await requestReset(unreachable, user.email)).statusCode).toBe(202)
    const rowOf = async () =>
      (
        await unreachable.sql<{ status: string; attempts: number; sealed: boolean }[]>`
          select status, attempts, sealed_data is not null as sealed from security_mails where user_id = ${user.id}`
      )[0]
    await eventually('the mail is dead', async () => (await rowOf())?.status === 'dead')
    expect(await rowOf()).toEqual({ status: 'dead', attempts: 2, sealed: false })
    const dead = unreachable.logs.filter((line) => line.msg === 'security mail: given up (dead)')
    expect(dead).toHaveLength(1)
    expect(dead[0]).toMatchObject({ template: 'password_reset', attempts: 2 })
    expect(JSON.stringify(unreachable.logs)).not.toContain(user.email)
    expect(unreachable.logs.some((line) => line.msg === 'security mail: failed; retried later')).toBe(true)
    const metrics = await unreachable.app.inject({
      method: 'GET',
      url: '/metrics',
      headers: { accept: 'text/plain' },
    })
    expect(metrics.body).toMatch(/meridian_auth_security_mails_total\{[^}]*outcome="dead"[^}]*\} 1/)
  })
})
