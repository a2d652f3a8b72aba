// Test helpers for the OpenID provider: the auth app listening on its issuer URL, users in the database, and a
// minimal browser (cookies, manual redirects, the login/consent/device forms) driven with fetch.
import { createServer } from 'node:net'
import * as client from 'openid-client'
import { hashPassword } from '../src/domain/passwords.ts'
import { type AuthTestApp, type AuthTestAppOptions, buildAuthTestApp } from './auth-app.ts'

export interface OidcTestApp extends AuthTestApp {
  issuer: string
}

async function freePort(): Promise<number> {
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const address = server.address()
  await new Promise<void>((resolve) => server.close(() => resolve()))
  if (!address || typeof address === 'string') throw new Error('no port')
  return address.port
}

/**
 * The issuer must be the URL clients reach, and the provider takes it at construction: a free port is chosen
 * first, the app built with JWT_ISSUER on it, then listened on it.
 */
export async function startOidcTestApp(
  env: Record<string, string> = {},
  options: AuthTestAppOptions = {},
): Promise<OidcTestApp> {
  const port = await freePort()
  const issuer = `http://127.0.0.1:${port}`
  const auth = await buildAuthTestApp(
    {
      JWT_ISSUER: issuer,
      // the per-address counter lives in the shared Redis, where every test file fails logins from 127.0.0.1
      LOGIN_MAX_FAILURES_PER_ADDRESS: '100000',
      ...env,
    },
    options,
  )
  await auth.app.listen({ port, host: '127.0.0.1' })
  return { ...auth, issuer }
}

export interface TestUser {
  id: string
  name: string
  email: string
  password: string
}

let userCount = 0

export async function createTestUser(
  auth: AuthTestApp,
  overrides: Partial<Omit<TestUser, 'id'>> & { status?: string } = {},
): Promise<TestUser> {
  userCount += 1
  const name = overrides.name ?? `Ada Lovelace ${userCount}`
  const email = overrides.email ?? `ada${userCount}.${Date.now()}@example.com`
  const password = overrides.password ?? 'correct horse battery staple'
  const [row] = await auth.sql<{ id: string }[]>`
    insert into users (name, email, password_hash, status)
    values (${name}, ${email}, ${await hashPassword(password)}, ${overrides.status ?? 'active'})
    returning id`
  if (!row) throw new Error('user not created')
  return { id: row.id, name, email, password }
}

const formValue = (html: string, name: string): string | undefined =>
  new RegExp(`name="${name}" value="([^"]*)"`).exec(html)?.[1]

/** A cookie jar and manual redirects: what a browser does, to the extent the provider's flows need it. */
export class TestBrowser {
  readonly cookies = new Map<string, string>()
  constructor(readonly issuer: string) {}

  async request(url: string | URL, init: RequestInit = {}): Promise<Response> {
    const headers = new Headers(init.headers)
    headers.set('accept', 'text/html')
    if (this.cookies.size > 0) {
      headers.set('cookie', [...this.cookies].map(([name, value]) => `${name}=${value}`).join('; '))
    }
    const response = await fetch(new URL(url, this.issuer), { ...init, headers, redirect: 'manual' })
    for (const cookie of response.headers.getSetCookie()) {
      const [pair = '', ...attributes] = cookie.split(';')
      const separator = pair.indexOf('=')
      const name = pair.slice(0, separator).trim()
      const value = pair.slice(separator + 1).trim()
      const expired = attributes.some(
        (attribute) =>
          /^\s*expires=/i.test(attribute) && new Date(attribute.split('=')[1] ?? '') < new Date(),
      )
      if (!value || expired) this.cookies.delete(name)
      else this.cookies.set(name, value)
    }
    return response
  }

  postForm(url: string | URL, fields: Record<string, string>): Promise<Response> {
    return this.request(url, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams(fields).toString(),
    })
  }

  /**
   * Follows the provider's redirects and answers its pages (login with these credentials, consent: allow) until
   * the browser leaves the issuer (the client's callback, returned) or a page no step knows is shown.
   */
  async signIn(
    start: string | URL,
    user: { email: string; password: string },
  ): Promise<{ callback?: URL; page?: Response; html?: string }> {
    let response = await this.request(start)
    for (let step = 0; step < 20; step += 1) {
      const location = response.headers.get('location')
      if (location) {
        const next = new URL(location, this.issuer)
        if (next.origin !== new URL(this.issuer).origin) return { callback: next }
        response = await this.request(next)
        continue
      }
      const html = await response.text()
      const action = /action="(\/interaction\/[^"]+\/(login|confirm))"/.exec(html)
      if (response.status === 200 && action?.[2] === 'login') {
        response = await this.postForm(action[1]!, { email: user.email, password: user.password })
      } else if (response.status === 200 && action?.[2] === 'confirm') {
        response = await this.postForm(action[1]!, {})
      } else {
        return { page: response, html }
      }
    }
    throw new Error('too many steps')
  }

  /** Signs in as `user` from `start` and stops at the consent page: its HTML, not yet answered. */
  async consentPageOf(start: string | URL, user: { email: string; password: string }): Promise<string> {
    let response = await this.request(start)
    for (let step = 0; step < 20; step += 1) {
      const location = response.headers.get('location')
      if (location) {
        response = await this.request(new URL(location, this.issuer))
        continue
      }
      const html = await response.text()
      const action = /action="(\/interaction\/[^"]+\/(login|confirm))"/.exec(html)
      if (response.status === 200 && action?.[2] === 'login') {
        response = await this.postForm(action[1]!, { email: user.email, password: user.password })
      } else if (action?.[2] === 'confirm') {
        return html
      } else {
        throw new Error(`no consent page: ${response.status} ${html}`)
      }
    }
    throw new Error('too many steps')
  }

  /** The device flow's page: enter the code, confirm it, then sign in and consent. */
  async confirmDevice(
    verificationUri: string,
    userCode: string,
    user: { email: string; password: string },
  ): Promise<{ page?: Response; html?: string; callback?: URL }> {
    const input = await this.request(verificationUri)
    const inputHtml = await input.text()
    const xsrf = formValue(inputHtml, 'xsrf')
    if (!xsrf) throw new Error(`no xsrf field on the code page: ${inputHtml}`)
    const confirm = await this.postForm(verificationUri, { xsrf, user_code: userCode })
    const confirmHtml = await confirm.text()
    const confirmXsrf = formValue(confirmHtml, 'xsrf')
    if (!confirmXsrf) throw new Error(`no xsrf field on the confirm page: ${confirmHtml}`)
    const confirmed = await this.postForm(verificationUri, {
      xsrf: confirmXsrf,
      user_code: userCode,
      confirm: 'yes',
    })
    const location = confirmed.headers.get('location')
    if (!location) return { page: confirmed, html: await confirmed.text() }
    return this.signIn(new URL(location, this.issuer), user)
  }
}

/**
 * An authorization-code flow with PKCE (S256) and state, signed in and consented through a TestBrowser: what the
 * client gets back at its callback, with the verifier and state it needs to redeem the code.
 */
export async function signInWithPkce(
  issuer: string,
  configuration: client.Configuration,
  user: { email: string; password: string },
  parameters: Record<string, string>,
): Promise<{ callback: URL; verifier: string; state: string }> {
  const verifier = client.randomPKCECodeVerifier()
  const state = client.randomState()
  const url = client.buildAuthorizationUrl(configuration, {
    code_challenge: await client.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
    state,
    ...parameters,
  })
  const { callback, html } = await new TestBrowser(issuer).signIn(url, user)
  if (!callback) throw new Error(`the flow did not come back to the client: ${html}`)
  return { callback, verifier, state }
}
