// Invited users: an admin creates a user without a password; they cannot sign in until an admin sets one, which makes
// them active. Who may invite, what is stored and published, and what the database itself refuses.
import { randomUUID } from 'node:crypto'
import { expectErrorEnvelope } from '@meridian/testkit'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { invalidCredentialsMessage } from '../src/domain/sign-in.ts'
import { type AuthTestApp, buildAuthTestApp } from './auth-app.ts'
import { bearerFor, login, signedIn } from './identities.ts'

const json = { 'content-type': 'application/json' }
const invitation = (overrides: Record<string, unknown> = {}) => ({
  name: 'Invited Ivy',
  email: `ivy.${randomUUID().slice(0, 8)}@example.com`,
  ...overrides,
})

interface OutboxRow {
  eventType: string
  payload: { type: string; source: string; schemaVersion: string; data: Record<string, unknown> }
}

describe('users: invited', () => {
  let auth: AuthTestApp
  let admin: { authorization: string }
  beforeAll(async () => {
    auth = await buildAuthTestApp()
    admin = bearerFor(auth, { role: 'admin' })
  })
  afterAll(async () => {
    await auth.close()
  })

  const create = (payload: Record<string, unknown>, headers: Record<string, string> = {}) =>
    auth.app.inject({ method: 'POST', url: '/api/v1/users', headers: { ...json, ...headers }, payload })
  const eventsOf = (userId: string) =>
    auth.sql<OutboxRow[]>`select event_type, payload from outbox where aggregate_id = ${userId} order by id`
  const usersWithEmail = (email: string) =>
    auth.sql<{ id: string; status: string; version: number; passwordHash: string | null }[]>`
      select id, status, version, password_hash from users where email = ${email}`
  const outboxSize = async () => Number((await auth.sql`select count(*)::int as n from outbox`)[0]?.n)
  const setPassword = (id: string, newPassword: string, headers: Record<string, string>) =>
    auth.app.inject({
      method: 'PUT',
      url: `/api/v1/users/${id}/password`,
      headers: { ...json, ...headers },
      payload: { newPassword },
    })

  it('when an admin creates a user without a password, then 201 with status invited whatever status was sent, no hash, and user.registered says invited', async () => {
    const response = await create(invitation({ status: 'active', role: 'admin' }), admin)
    expect(response.statusCode).toBe(201)
    const user = response.json()
    expect(user).toMatchObject({ status: 'invited', role: 'admin' })
    expect(response.headers.etag).toBe(`"${user.id}.1"`)
    expect(await usersWithEmail(user.email)).toMatchObject([{ status: 'invited', passwordHash: null }])
    const events = await eventsOf(user.id)
    expect(events).toHaveLength(1)
    expect(events[0]).toMatchObject({
      eventType: 'user.registered',
      payload: {
        source: 'auth',
        schemaVersion: '1.1.0',
        data: { userId: user.id, email: user.email, name: 'Invited Ivy', role: 'admin', status: 'invited' },
      },
    })
  })

  it('when a plain user creates a user without a password, then 403 naming the rule and nothing is written', async () => {
    const user = await signedIn(auth)
    const body = invitation()
    const before = await outboxSize()
    const forbidden = expectErrorEnvelope(await create(body, user.headers), 403, 'FORBIDDEN')
    expect(forbidden.message).toBe('Only an admin may create a user without a password')
    expect(await usersWithEmail(body.email)).toHaveLength(0)
    expect(await outboxSize()).toBe(before)
  })

  it('when an anonymous caller creates a user without a password, then 401 (as for setting role) and nothing is written', async () => {
    const body = invitation()
    const before = await outboxSize()
    const refused = expectErrorEnvelope(await create(body), 401, 'UNAUTHORIZED')
    expect(refused.message).toBe('Missing token')
    expect(await usersWithEmail(body.email)).toHaveLength(0)
    expect(await outboxSize()).toBe(before)
  })

  it('when an invited user tries to sign in, then the same 401 as a wrong password', async () => {
    const { email } = (await create(invitation(), admin)).json()
    const invited = await login(auth, { email, password: 'any password at all' })
    const wrong = await login(auth, {
      email: (await signedIn(auth)).user.email,
      password: 'not the password',
    })
    const invitedError = expectErrorEnvelope(invited, 401, 'UNAUTHORIZED')
    const wrongError = expectErrorEnvelope(wrong, 401, 'UNAUTHORIZED')
    expect(invitedError.message).toBe(invalidCredentialsMessage)
    expect(Object.keys(invitedError).sort()).toEqual(Object.keys(wrongError).sort())
    expect(invitedError.message).toBe(wrongError.message)
  })

  it('when an admin sets an invited user’s password, then the user is active, user.profile_changed carries the bumped version, and the password signs in', async () => {
    const { id, email } = (await create(invitation(), admin)).json()
    const password = `pw-${randomUUID()}`
    expect((await setPassword(id, password, admin)).statusCode).toBe(204)

    const [stored] = await usersWithEmail(email)
    expect(stored).toMatchObject({ status: 'active', passwordHash: expect.stringMatching(/^\$argon2id\$/) })
    expect(stored?.version).toBeGreaterThan(1)
    const events = await eventsOf(id)
    expect(events.map((event) => event.eventType)).toEqual(['user.registered', 'user.profile_changed'])
    expect(events[1]?.payload.data).toEqual({
      userId: id,
      email,
      name: 'Invited Ivy',
      role: 'user',
      status: 'active',
      version: stored?.version,
    })
    const read = await auth.app.inject({ method: 'GET', url: `/api/v1/users/${id}`, headers: admin })
    expect(read.headers.etag).toBe(`"${id}.${stored?.version}"`)
    expect((await login(auth, { email, password })).statusCode).toBe(200)
  })

  it('when an admin sets an active user’s password, then no user.profile_changed is written', async () => {
    const user = await signedIn(auth)
    const before = await outboxSize()
    expect((await setPassword(user.user.id, `pw-${randomUUID()}`, admin)).statusCode).toBe(204)
    expect(await outboxSize()).toBe(before)
  })

  it('when PATCH gives an invited user another status, then 409 and the user stays invited, with no event', async () => {
    const { id, email } = (await create(invitation(), admin)).json()
    const response = await auth.app.inject({
      method: 'PATCH',
      url: `/api/v1/users/${id}`,
      headers: { ...json, ...admin },
      payload: { status: 'active' },
    })
    expect(expectErrorEnvelope(response, 409, 'CONFLICT').message).toContain('PUT /users/{id}/password')
    expect(await usersWithEmail(email)).toMatchObject([{ status: 'invited', version: 1 }])
    expect(await eventsOf(id)).toHaveLength(1)
  })

  it('when a row without a password hash that is not invited is written, then PostgreSQL refuses it', async () => {
    await expect(
      auth.sql`
        insert into users (name, email, password_hash, status)
        values ('No Password', ${`nopw.${randomUUID().slice(0, 8)}@example.com`}, null, 'active')`,
    ).rejects.toMatchObject({ code: '23514', constraint_name: 'users_password_unless_invited_check' })
    const { id } = (await create(invitation(), admin)).json()
    await expect(auth.sql`update users set status = 'suspended' where id = ${id}`).rejects.toMatchObject({
      code: '23514',
    })
    const { user } = await signedIn(auth)
    await expect(auth.sql`update users set status = 'pending' where id = ${user.id}`).rejects.toMatchObject({
      code: '23514',
      constraint_name: 'users_status_check',
    })
  })
})
