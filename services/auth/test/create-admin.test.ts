// scripts/create-admin on a real database: the first admin (created with its event, or promoted) signs in and may
// list users; bad input is refused before anything is written; the CLI itself, run as a process, says what it did.
import { spawn } from 'node:child_process'
import { randomUUID } from 'node:crypto'
import { fileURLToPath } from 'node:url'
import { eventually, infraEndpoints } from '@meridian/testkit'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createAdmin, describeOutcome } from '../src/create-admin-command.ts'
import type { PasswordSource } from '../src/domain/admins.ts'
import { type AuthTestApp, buildAuthTestApp } from './auth-app.ts'
import { bearerFor, createTestUser, login } from './identities.ts'

const uniqueEmail = (who: string) => `${who}.${randomUUID().slice(0, 8)}@example.com`
const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/
const passwordOf =
  (password: string): PasswordSource =>
  async () =>
    password
const noPasswordExpected: PasswordSource = async () => {
  throw new Error('no password should have been asked for')
}

describe('auth: create-admin', () => {
  let auth: AuthTestApp
  beforeAll(async () => {
    auth = await buildAuthTestApp()
  })
  afterAll(async () => {
    await auth.close()
  })

  /** Signs in through POST /login and lists users through GET /api/v1/users, as an admin can. */
  async function listUsersAs(credentials: { email: string; password: string }) {
    const signedIn = await login(auth, credentials)
    expect(signedIn.statusCode).toBe(200)
    return auth.app.inject({
      method: 'GET',
      url: '/api/v1/users?limit=100',
      headers: { authorization: `Bearer ${signedIn.json().accessToken}` },
    })
  }

  const usersWithEmail = async (email: string) =>
    auth.sql<
      { id: string; name: string; role: string; status: string; version: number; passwordHash: string }[]
    >`
      select id, name, role, status, version, password_hash from users where email = ${email}`

  it('when no user has the email, then an active admin is created with its user.registered event, signs in and lists users', async () => {
    const email = uniqueEmail('first.admin')
    const password = `pw-${randomUUID()}`
    const outcome = await createAdmin({
      databaseUrl: auth.database.url,
      redisUrl: infraEndpoints().redisUrl,
      email: `  ${email.toUpperCase()} `,
      name: ' Ada Lovelace ',
      password: passwordOf(password),
    })

    expect(outcome).toMatchObject({
      action: 'created',
      passwordReset: false,
      user: { email, name: 'Ada Lovelace', role: 'admin', status: 'active' },
    })
    expect(outcome.user.id).toMatch(uuid)
    expect(describeOutcome(outcome)).toBe(`created admin ${outcome.user.id} ${email}`)
    const [stored] = await usersWithEmail(email)
    expect(stored?.passwordHash).toMatch(/^\$argon2id\$/)

    const outbox = await auth.sql<{ eventType: string; payload: Record<string, unknown> }[]>`
      select event_type, payload from outbox where aggregate_id = ${outcome.user.id}`
    expect(outbox).toHaveLength(1)
    expect(outbox[0]).toMatchObject({
      eventType: 'user.registered',
      payload: {
        type: 'user.registered',
        source: 'auth',
        data: { userId: outcome.user.id, email, name: 'Ada Lovelace', role: 'admin', status: 'active' },
      },
    })
    expect(JSON.stringify(outbox[0]?.payload)).not.toContain(password)

    const listed = await listUsersAs({ email, password })
    expect(listed.statusCode).toBe(200)
    expect(listed.json().data.map((user: { id: string }) => user.id)).toContain(outcome.user.id)
  })

  it('when a suspended user has the email, then they become an active admin with name and password unchanged, asked no password, with one user.profile_changed event', async () => {
    const user = await createTestUser(auth, { status: 'suspended', name: 'Grace Hopper' })
    expect((await login(auth, user)).statusCode).not.toBe(200) // suspended: cannot sign in at all

    const outcome = await createAdmin({
      databaseUrl: auth.database.url,
      redisUrl: infraEndpoints().redisUrl,
      email: user.email.toUpperCase(),
      name: 'Someone Else',
      password: noPasswordExpected,
    })

    expect(outcome).toMatchObject({ action: 'promoted', passwordReset: false, user: { id: user.id } })
    expect(describeOutcome(outcome)).toBe(`promoted ${user.id} ${user.email} to admin`)
    const [stored] = await usersWithEmail(user.email)
    expect(stored).toMatchObject({ name: 'Grace Hopper', role: 'admin', status: 'active' })
    const outbox = await auth.sql<{ eventType: string; payload: { data: Record<string, unknown> } }[]>`
      select event_type, payload from outbox where aggregate_id = ${user.id}`
    expect(outbox).toHaveLength(1)
    expect(outbox[0]).toMatchObject({
      eventType: 'user.profile_changed',
      payload: {
        data: {
          userId: user.id,
          email: user.email,
          name: 'Grace Hopper',
          role: 'admin',
          status: 'active',
          version: stored?.version,
        },
      },
    })
    expect((await listUsersAs(user)).statusCode).toBe(200)
  })

  it('when a signed-in user is promoted, then the token they held (with the old role) stops working in the running auth within seconds', async () => {
    const user = await createTestUser(auth)
    const signedIn = await login(auth, user)
    const headers = { authorization: `Bearer ${signedIn.json().accessToken}` }
    const readSelf = () => auth.app.inject({ method: 'GET', url: `/api/v1/users/${user.id}`, headers })
    expect((await readSelf()).statusCode).toBe(200)

    await createAdmin({
      databaseUrl: auth.database.url,
      redisUrl: infraEndpoints().redisUrl,
      email: user.email,
      password: noPasswordExpected,
    })

    // the command is another process's work: the app learns of it by pub/sub
    await eventually(
      'the old token is refused',
      async () => (await readSelf()).statusCode === 401,
      undefined,
      25,
    )
    expect((await listUsersAs(user)).statusCode).toBe(200)
  })

  it('when an existing user is promoted with resetPassword, then only the new password signs in', async () => {
    const user = await createTestUser(auth)
    const newPassword = `new-${randomUUID()}`
    const outcome = await createAdmin({
      databaseUrl: auth.database.url,
      redisUrl: infraEndpoints().redisUrl,
      email: user.email,
      resetPassword: true,
      password: passwordOf(newPassword),
    })

    expect(outcome).toMatchObject({ action: 'promoted', passwordReset: true })
    expect(describeOutcome(outcome)).toBe(`promoted ${user.id} ${user.email} to admin (password reset)`)
    expect((await login(auth, user)).statusCode).toBe(401)
    expect((await listUsersAs({ email: user.email, password: newPassword })).statusCode).toBe(200)
  })

  it('when an invited user (no password) has the email, then they are asked for a password and become an active admin who signs in', async () => {
    const email = uniqueEmail('invited')
    const invited = await auth.app.inject({
      method: 'POST',
      url: '/api/v1/users',
      headers: { 'content-type': 'application/json', ...bearerFor(auth, { role: 'admin' }) },
      payload: { name: 'Invited Ivy', email },
    })
    expect(invited.json()).toMatchObject({ status: 'invited' })
    const password = `pw-${randomUUID()}`

    const outcome = await createAdmin({
      databaseUrl: auth.database.url,
      redisUrl: infraEndpoints().redisUrl,
      email,
      password: passwordOf(password),
    })

    expect(outcome).toMatchObject({ action: 'promoted', passwordReset: true })
    const [stored] = await usersWithEmail(email)
    expect(stored).toMatchObject({
      role: 'admin',
      status: 'active',
      passwordHash: expect.stringMatching(/^\$argon2id\$/),
    })
    const events = await auth.sql<{ eventType: string; payload: { data: Record<string, unknown> } }[]>`
      select event_type, payload from outbox where aggregate_id = ${outcome.user.id} order by id`
    expect(events.map((event) => event.eventType)).toEqual(['user.registered', 'user.profile_changed'])
    expect(events[1]?.payload.data).toMatchObject({
      role: 'admin',
      status: 'active',
      version: stored?.version,
    })
    expect((await listUsersAs({ email, password })).statusCode).toBe(200)
  })

  it('when the user already is an active admin, then nothing is changed and the outcome says so', async () => {
    const admin = await createTestUser(auth, { role: 'admin' })
    const [before] = await usersWithEmail(admin.email)

    const outcome = await createAdmin({
      databaseUrl: auth.database.url,
      redisUrl: infraEndpoints().redisUrl,
      email: admin.email,
      password: noPasswordExpected,
    })

    expect(outcome).toMatchObject({ action: 'unchanged', passwordReset: false })
    expect(describeOutcome(outcome)).toBe(`${admin.id} ${admin.email} already is an active admin`)
    expect(await usersWithEmail(admin.email)).toEqual([before])
  })

  it.each([
    {
      problem: 'an invalid email',
      field: 'email',
      email: 'not-an-email',
      name: 'Ada',
      password: 'long enough',
    },
    {
      problem: 'a 7-character password',
      field: 'password',
      email: undefined,
      name: 'Ada',
      password: '1234567',
    },
    {
      problem: 'no name for a new user',
      field: 'name',
      email: undefined,
      name: undefined,
      password: 'long enough',
    },
    { problem: 'a blank name', field: 'name', email: undefined, name: '   ', password: 'long enough' },
  ])('when given $problem, then it is refused naming $field and nothing is written', async (input) => {
    const email = input.email ?? uniqueEmail('refused')
    const refusal = createAdmin({
      databaseUrl: auth.database.url,
      redisUrl: infraEndpoints().redisUrl,
      email,
      name: input.name,
      password: passwordOf(input.password),
    })

    await expect(refusal).rejects.toMatchObject({
      code: 'VALIDATION_ERROR',
      details: [expect.objectContaining({ field: input.field, message: expect.any(String) })],
    })
    const error = await refusal.catch((caught: unknown) => caught)
    expect(JSON.stringify(error)).not.toContain(input.password)
    expect(await usersWithEmail(email.toLowerCase())).toHaveLength(0)
  })

  describe('the command line', () => {
    const serviceDir = fileURLToPath(new URL('..', import.meta.url))
    const tsx = fileURLToPath(new URL('../node_modules/.bin/tsx', import.meta.url))

    /** Runs src/create-admin.ts as scripts/create-admin does, stdin not a terminal. */
    function runCommand(args: string[], env: Record<string, string | undefined>) {
      const childEnv: NodeJS.ProcessEnv = { ...process.env, DATABASE_URL: auth.database.url }
      delete childEnv.MERIDIAN_ADMIN_PASSWORD
      for (const [name, value] of Object.entries(env)) {
        if (value !== undefined) childEnv[name] = value
      }
      return new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve, reject) => {
        const child = spawn(tsx, ['src/create-admin.ts', ...args], {
          cwd: serviceDir,
          env: childEnv,
          stdio: ['ignore', 'pipe', 'pipe'],
        })
        let stdout = ''
        let stderr = ''
        child.stdout.on('data', (chunk) => {
          stdout += chunk
        })
        child.stderr.on('data', (chunk) => {
          stderr += chunk
        })
        child.on('error', reject)
        child.on('close', (code) => resolve({ code, stdout, stderr }))
      })
    }

    it('when run with MERIDIAN_ADMIN_PASSWORD, then it exits 0 printing "created admin <id> <email>", never the password, and the admin signs in', async () => {
      const email = uniqueEmail('cli.admin')
      const password = `pw-${randomUUID()}`

      const result = await runCommand(['--email', email, '--name', 'Ada Lovelace'], {
        MERIDIAN_ADMIN_PASSWORD: password,
      })

      expect(result).toMatchObject({ code: 0, stderr: '' })
      const [user] = await usersWithEmail(email)
      expect(result.stdout).toBe(`created admin ${user?.id} ${email}\n`)
      expect(result.stdout + result.stderr).not.toContain(password)
      expect((await listUsersAs({ email, password })).statusCode).toBe(200)

      const again = await runCommand(['--email', email], {})
      expect(again).toMatchObject({ code: 0, stdout: `${user?.id} ${email} already is an active admin\n` })
    })

    it('when the password is short or given as an argument, the email is invalid, or there is no password and no terminal, then it exits non-zero saying why and writes nothing', async () => {
      const email = uniqueEmail('cli.refused')
      const base = ['--email', email, '--name', 'Ada Lovelace']

      const [short, asArgument, noPassword, badEmail] = await Promise.all([
        runCommand(base, { MERIDIAN_ADMIN_PASSWORD: 'short' }),
        runCommand([...base, '--password', 'on the command line'], {}),
        runCommand(base, {}),
        runCommand(['--email', 'nope', '--name', 'Ada'], { MERIDIAN_ADMIN_PASSWORD: 'long enough' }),
      ])

      expect(short.code).toBe(1)
      expect(short.stderr).toContain('password: must not have fewer than 8 characters')
      expect(short.stdout + short.stderr).not.toContain('short')
      expect(asArgument.code).toBe(2)
      expect(asArgument.stderr).toContain('the password is never taken from the command line')
      expect(noPassword.code).toBe(1)
      expect(noPassword.stderr).toContain('set MERIDIAN_ADMIN_PASSWORD, or run in a terminal')
      expect(badEmail.code).toBe(1)
      expect(badEmail.stderr).toContain('email: must match format "email"')
      expect(await usersWithEmail(email)).toHaveLength(0)
    })
  })
})
