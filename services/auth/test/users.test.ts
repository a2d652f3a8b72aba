// The users resource on real PostgreSQL and Redis: every status it can answer, with the input that triggers it, and
// who may do what (admins everything; a user only themself; anyone may register, without choosing role or status).
import { randomUUID } from 'node:crypto'
import { expectErrorEnvelope } from '@meridian/testkit'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createUsersRepository } from '../src/data/users-repository.ts'
import { hashPassword } from '../src/domain/passwords.ts'
import { type AuthTestApp, buildAuthTestApp } from './auth-app.ts'
import { bearerFor, createTestUser, signedIn } from './identities.ts'

const json = { 'content-type': 'application/json' }
const newUser = (overrides: Record<string, unknown> = {}) => ({
  name: 'Ada Lovelace',
  email: `ada.${randomUUID().slice(0, 8)}@example.com`,
  password: 'analytical engine',
  age: 36,
  ...overrides,
})

describe('users: create', () => {
  let auth: AuthTestApp
  beforeAll(async () => {
    auth = await buildAuthTestApp()
  })
  afterAll(async () => {
    await auth.close()
  })

  const countUsers = async () => Number((await auth.sql`select count(*)::int as n from users`)[0]?.n)

  it('when a valid user is posted, then 201 with Location and ETag, the password is stored argon2id-hashed and never returned', async () => {
    const body = newUser({ email: 'Grace.Hopper@Example.com' })
    const response = await auth.app.inject({
      method: 'POST',
      url: '/api/v1/users',
      headers: json,
      payload: body,
    })
    expect(response.statusCode).toBe(201)
    const user = response.json()
    expect(user).toMatchObject({
      name: 'Ada Lovelace',
      email: 'grace.hopper@example.com',
      role: 'user',
      status: 'active',
      age: 36,
    })
    expect(response.headers.location).toBe(`/api/v1/users/${user.id}`)
    expect(response.headers.etag).toBe(`"${user.id}.1"`)
    expect(response.body).not.toContain('analytical engine')
    expect(Object.keys(user)).not.toContain('password')
    expect(Object.keys(user)).not.toContain('passwordHash')
    const [row] = await auth.sql<
      { passwordHash: string }[]
    >`select password_hash from users where id = ${user.id}`
    expect(row?.passwordHash).toMatch(/^\$argon2id\$v=19\$m=19456,t=2,p=1\$/)
    expect(JSON.stringify(auth.logs)).not.toContain('analytical engine')
  })

  it('when name is missing, the email invalid and the age under 18, then 422 names each field and nothing is stored', async () => {
    const before = await countUsers()
    const response = await auth.app.inject({
      method: 'POST',
      url: '/api/v1/users',
      headers: json,
      payload: { email: 'not-an-email', password: 'long enough pw', age: 17 },
    })
    const error = expectErrorEnvelope(response, 422, 'VALIDATION_ERROR')
    expect(error.message).toBe('Validation failed')
    const fields = Object.fromEntries((error.details ?? []).map((d) => [d.field, d]))
    expect(fields.name).toMatchObject({ field: 'name', message: expect.stringContaining('name') })
    expect(fields.email).toMatchObject({ received: 'not-an-email' })
    expect(fields.age).toMatchObject({ received: '17' })
    expect(await countUsers()).toBe(before)
  })

  it('when the email is already taken (in another letter case), then 409 CONFLICT on email and no second user', async () => {
    const first = newUser()
    await auth.app.inject({ method: 'POST', url: '/api/v1/users', headers: json, payload: first })
    const before = await countUsers()
    const response = await auth.app.inject({
      method: 'POST',
      url: '/api/v1/users',
      headers: json,
      payload: newUser({ email: first.email.toUpperCase() }),
    })
    const error = expectErrorEnvelope(response, 409, 'CONFLICT')
    expect(error.details).toEqual([{ field: 'email', message: 'already exists' }])
    expect(response.body).not.toContain(first.email)
    expect(await countUsers()).toBe(before)
  })

  it('when the body is malformed JSON, not JSON, too large, or has unknown fields, then 400, 415, 413 and 422 and nothing is stored', async () => {
    const before = await countUsers()
    expectErrorEnvelope(
      await auth.app.inject({ method: 'POST', url: '/api/v1/users', headers: json, payload: '{"name":' }),
      400,
      'BAD_REQUEST',
    )
    expectErrorEnvelope(
      await auth.app.inject({
        method: 'POST',
        url: '/api/v1/users',
        headers: { 'content-type': 'text/plain' },
        payload: 'name=x',
      }),
      415,
      'UNSUPPORTED_MEDIA_TYPE',
    )
    expectErrorEnvelope(
      await auth.app.inject({
        method: 'POST',
        url: '/api/v1/users',
        headers: json,
        payload: JSON.stringify(newUser({ name: 'x'.repeat(1_100_000) })),
      }),
      413,
      'PAYLOAD_TOO_LARGE',
    )
    const smuggled = expectErrorEnvelope(
      await auth.app.inject({
        method: 'POST',
        url: '/api/v1/users',
        headers: json,
        payload: newUser({ passwordHash: 'x', id: randomUUID() }),
      }),
      422,
      'VALIDATION_ERROR',
    )
    expect(smuggled.details?.map((d) => d.field).sort()).toEqual(['id', 'passwordHash'])
    expect(await countUsers()).toBe(before)
  })
})

describe('users: list', () => {
  let auth: AuthTestApp
  const total = 45

  beforeAll(async () => {
    auth = await buildAuthTestApp()
    const users = createUsersRepository(auth.sql)
    const passwordHash = await hashPassword('seeded password')
    for (let i = 0; i < total; i++) {
      await users.insert({
        name: `Member ${String(i).padStart(2, '0')} ${i % 5 === 0 ? 'Zephyr' : 'Common'}`,
        email: `member${i}@example.com`,
        passwordHash,
        role: i % 9 === 0 ? 'admin' : 'user',
        status: i % 3 === 0 ? 'inactive' : 'active',
        age: 18 + i,
      })
    }
  })
  afterAll(async () => {
    await auth.close()
  })

  // an admin who is not in the table, so the counts stay those of the seeded users
  const admin = () => bearerFor(auth, { role: 'admin' })
  const list = (query: string) =>
    auth.app.inject({ method: 'GET', url: `/api/v1/users${query}`, headers: admin() })

  it('when the first page is read, then 20 items, total 45, three pages, and links to next and last only', async () => {
    const response = await list('?sort=name:asc')
    expect(response.statusCode).toBe(200)
    const body = response.json()
    expect(body.data).toHaveLength(20)
    expect(body.meta).toEqual({ page: 1, limit: 20, total, totalPages: 3 })
    expect(body.links).toEqual({
      self: '/api/v1/users?sort=name%3Aasc&page=1&limit=20',
      first: '/api/v1/users?sort=name%3Aasc&page=1&limit=20',
      prev: null,
      next: '/api/v1/users?sort=name%3Aasc&page=2&limit=20',
      last: '/api/v1/users?sort=name%3Aasc&page=3&limit=20',
    })
    expect(body.data[0].name).toBe('Member 00 Zephyr')
    expect(JSON.stringify(body)).not.toContain('argon2')
  })

  it('when a middle page is read, then prev and next point at its neighbours and items continue the order', async () => {
    const body = (await list('?sort=name:asc&page=2&limit=20')).json()
    expect(body.data[0].name).toBe('Member 20 Zephyr')
    expect(body.links.prev).toBe('/api/v1/users?sort=name%3Aasc&page=1&limit=20')
    expect(body.links.next).toBe('/api/v1/users?sort=name%3Aasc&page=3&limit=20')
  })

  it('when the last page is read, then it holds the remainder and next is null', async () => {
    const body = (await list('?sort=name:asc&page=3')).json()
    expect(body.data).toHaveLength(5)
    expect(body.links.next).toBeNull()
    expect(body.data.at(-1).name).toBe('Member 44 Common')
  })

  it('when nothing matches, then an empty page with total 0 and links that still name page 1', async () => {
    const body = (await list('?q=nobodyhere')).json()
    expect(body).toMatchObject({
      data: [],
      meta: { page: 1, limit: 20, total: 0, totalPages: 0 },
      links: { prev: null, next: null },
    })
    expect(body.links.first).toBe('/api/v1/users?q=nobodyhere&page=1&limit=20')
  })

  it('when filtering by status and role and searching full text, then only matching users count, and links keep the filters', async () => {
    const body = (await list('?status=inactive&role=admin&limit=5')).json()
    // i % 3 === 0 and i % 9 === 0 -> i in 0, 9, 18, 27, 36
    expect(body.meta.total).toBe(5)
    expect(
      body.data.every((u: { status: string; role: string }) => u.status === 'inactive' && u.role === 'admin'),
    ).toBe(true)
    expect(body.links.self).toBe('/api/v1/users?status=inactive&role=admin&page=1&limit=5')
    const search = (await list('?q=zephyr&limit=100')).json()
    expect(search.meta.total).toBe(9)
    expect(search.data.every((u: { name: string }) => u.name.includes('Zephyr'))).toBe(true)
  })

  it('when a sparse fieldset is asked for, then items carry only those fields (and id)', async () => {
    const body = (await list('?fields=email,age&limit=3&sort=age:desc')).json()
    expect(body.data).toEqual([
      { id: expect.any(String), email: 'member44@example.com', age: 62 },
      { id: expect.any(String), email: 'member43@example.com', age: 61 },
      { id: expect.any(String), email: 'member42@example.com', age: 60 },
    ])
  })

  it('when sort or fields name something outside the allow-list, then 422 naming it, not a database error', async () => {
    for (const query of [
      '?sort=password_hash:asc',
      '?sort=passwordHash:desc',
      '?fields=passwordHash',
      '?fields=id,search',
    ]) {
      const error = expectErrorEnvelope(await list(query), 422, 'VALIDATION_ERROR')
      expect(error.details?.[0]?.field).toMatch(/^(sort|fields)$/)
    }
    // injection attempts never get past the query schema's pattern
    for (const query of ['?sort=name;drop table users:asc', "?sort=name:asc'--", '?fields=id,(select 1)']) {
      expectErrorEnvelope(await list(encodeURI(query)), 422, 'VALIDATION_ERROR')
    }
    expect(Number((await auth.sql`select count(*)::int as n from users`)[0]?.n)).toBe(total)
  })

  it('when page or limit are out of range, then 422 (limit maximum 100, page from 1)', async () => {
    for (const query of ['?limit=101', '?limit=0', '?page=0', '?page=-1', '?limit=abc', '?status=deleted']) {
      expectErrorEnvelope(await list(query), 422, 'VALIDATION_ERROR')
    }
    expect((await list('?limit=100')).json().data).toHaveLength(total)
  })

  it('when /api/users is used, then it is v1 and its links keep the path the client used', async () => {
    const body = (
      await auth.app.inject({ method: 'GET', url: '/api/users?limit=10', headers: admin() })
    ).json()
    expect(body.meta.total).toBe(total)
    expect(body.links.next).toBe('/api/users?page=2&limit=10')
  })
})

describe('users: read, change, remove', () => {
  let auth: AuthTestApp
  let admin: { authorization: string }
  beforeAll(async () => {
    auth = await buildAuthTestApp()
    admin = bearerFor(auth, { role: 'admin' })
  })
  afterAll(async () => {
    await auth.close()
  })

  async function create(overrides: Record<string, unknown> = {}) {
    const response = await auth.app.inject({
      method: 'POST',
      url: '/api/v1/users',
      headers: { ...json, ...admin },
      payload: newUser(overrides),
    })
    return { user: response.json(), etag: String(response.headers.etag) }
  }

  it('when a user is read, then 200 with its ETag; with a matching If-None-Match, then 304 and no body', async () => {
    const { user, etag } = await create()
    const response = await auth.app.inject({ method: 'GET', url: `/api/v1/users/${user.id}`, headers: admin })
    expect(response.statusCode).toBe(200)
    expect(response.headers.etag).toBe(etag)
    expect(response.json()).toEqual(user)
    const cached = await auth.app.inject({
      method: 'GET',
      url: `/api/v1/users/${user.id}`,
      headers: { ...admin, 'if-none-match': etag },
    })
    expect(cached.statusCode).toBe(304)
    expect(cached.body).toBe('')
  })

  it('when the id is unknown, then 404; when it is not a uuid, then 422', async () => {
    expectErrorEnvelope(
      await auth.app.inject({ method: 'GET', url: `/api/v1/users/${randomUUID()}`, headers: admin }),
      404,
      'NOT_FOUND',
    )
    expectErrorEnvelope(
      await auth.app.inject({ method: 'GET', url: '/api/v1/users/1%20or%201=1', headers: admin }),
      422,
      'VALIDATION_ERROR',
    )
  })

  it('when PATCH carries the current ETag in If-Match, then 200 with the change and a new ETag', async () => {
    const { user, etag } = await create()
    const response = await auth.app.inject({
      method: 'PATCH',
      url: `/api/v1/users/${user.id}`,
      headers: { ...json, ...admin, 'if-match': etag },
      payload: { name: 'Renamed', status: 'suspended' },
    })
    expect(response.statusCode).toBe(200)
    expect(response.json()).toMatchObject({
      id: user.id,
      name: 'Renamed',
      status: 'suspended',
      email: user.email,
    })
    expect(response.headers.etag).toBe(`"${user.id}.2"`)
    expect(new Date(response.json().updatedAt).getTime()).toBeGreaterThanOrEqual(
      new Date(user.updatedAt).getTime(),
    )
  })

  it('when PATCH carries a stale ETag, then 412 PRECONDITION_FAILED and the user is unchanged', async () => {
    const { user, etag } = await create()
    await auth.app.inject({
      method: 'PATCH',
      url: `/api/v1/users/${user.id}`,
      headers: { ...json, ...admin },
      payload: { name: 'First writer' },
    })
    const error = expectErrorEnvelope(
      await auth.app.inject({
        method: 'PATCH',
        url: `/api/v1/users/${user.id}`,
        headers: { ...json, ...admin, 'if-match': etag },
        payload: { name: 'Lost update' },
      }),
      412,
      'PRECONDITION_FAILED',
    )
    expect(error.message).toContain('If-Match')
    expect(
      (await auth.app.inject({ method: 'GET', url: `/api/v1/users/${user.id}`, headers: admin })).json().name,
    ).toBe('First writer')
  })

  it('when PATCH breaks a rule (age under 18, empty body, taken email, unknown id), then 422, 422, 409 and 404', async () => {
    const { user } = await create()
    const other = await create()
    const patch = (id: string, payload: unknown) =>
      auth.app.inject({
        method: 'PATCH',
        url: `/api/v1/users/${id}`,
        headers: { ...json, ...admin },
        payload: payload as object,
      })
    expectErrorEnvelope(await patch(user.id, { age: 10 }), 422, 'VALIDATION_ERROR')
    expectErrorEnvelope(await patch(user.id, {}), 422, 'VALIDATION_ERROR')
    const conflict = expectErrorEnvelope(await patch(user.id, { email: other.user.email }), 409, 'CONFLICT')
    expect(conflict.details?.[0]?.field).toBe('email')
    expectErrorEnvelope(await patch(randomUUID(), { name: 'Ghost' }), 404, 'NOT_FOUND')
  })

  it('when a user is deleted, then 204 and it is gone (a second delete is 404)', async () => {
    const { user } = await create()
    const response = await auth.app.inject({
      method: 'DELETE',
      url: `/api/v1/users/${user.id}`,
      headers: admin,
    })
    expect(response.statusCode).toBe(204)
    expect(response.body).toBe('')
    expectErrorEnvelope(
      await auth.app.inject({ method: 'GET', url: `/api/v1/users/${user.id}`, headers: admin }),
      404,
      'NOT_FOUND',
    )
    expectErrorEnvelope(
      await auth.app.inject({ method: 'DELETE', url: `/api/v1/users/${user.id}`, headers: admin }),
      404,
      'NOT_FOUND',
    )
  })

  it('when a known path gets an unsupported method, then 405 with Allow; an unknown route is 404 naming it', async () => {
    const { user } = await create()
    const response = await auth.app.inject({
      method: 'PUT',
      url: `/api/v1/users/${user.id}`,
      headers: { ...json, ...admin },
      payload: {},
    })
    expectErrorEnvelope(response, 405, 'METHOD_NOT_ALLOWED')
    expect(response.headers.allow).toBe('GET, HEAD, PATCH, DELETE')
    const missing = expectErrorEnvelope(
      await auth.app.inject({ method: 'GET', url: '/api/v1/accounts', headers: admin }),
      404,
      'NOT_FOUND',
    )
    expect(missing.message).toBe('Route GET /api/v1/accounts not found')
  })
})

describe('users: who may do what', () => {
  let auth: AuthTestApp
  beforeAll(async () => {
    auth = await buildAuthTestApp()
  })
  afterAll(async () => {
    await auth.close()
  })

  const as = (headers: Record<string, string>) => ({
    read: (id: string) => auth.app.inject({ method: 'GET', url: `/api/v1/users/${id}`, headers }),
    change: (id: string, payload: Record<string, unknown>) =>
      auth.app.inject({
        method: 'PATCH',
        url: `/api/v1/users/${id}`,
        headers: { ...json, ...headers },
        payload,
      }),
    remove: (id: string) => auth.app.inject({ method: 'DELETE', url: `/api/v1/users/${id}`, headers }),
    list: () => auth.app.inject({ method: 'GET', url: '/api/v1/users', headers }),
    create: (payload: Record<string, unknown>) =>
      auth.app.inject({ method: 'POST', url: '/api/v1/users', headers: { ...json, ...headers }, payload }),
  })

  it('when user A reads, changes or deletes user B, or lists users, then 403 and B is untouched', async () => {
    const a = await signedIn(auth)
    const b = await createTestUser(auth, { name: 'Bea' })
    const asA = as(a.headers)
    expectErrorEnvelope(await asA.read(b.id), 403, 'FORBIDDEN')
    expectErrorEnvelope(await asA.change(b.id, { name: 'Hijacked' }), 403, 'FORBIDDEN')
    expectErrorEnvelope(await asA.remove(b.id), 403, 'FORBIDDEN')
    expectErrorEnvelope(await asA.list(), 403, 'FORBIDDEN')
    const [row] = await auth.sql<{ name: string }[]>`select name from users where id = ${b.id}`
    expect(row?.name).toBe('Bea')
  })

  it('when user A reads and changes themself, then 200; and deletes themself, then 204', async () => {
    const a = await signedIn(auth)
    const asA = as(a.headers)
    expect((await asA.read(a.user.id)).statusCode).toBe(200)
    const changed = await asA.change(a.user.id, { name: 'Renamed Myself' })
    expect(changed.statusCode).toBe(200)
    expect(changed.json().name).toBe('Renamed Myself')
    expect((await asA.remove(a.user.id)).statusCode).toBe(204)
  })

  it('when a user tries to change their own role or status, then 403 and nothing changes', async () => {
    const a = await signedIn(auth)
    const asA = as(a.headers)
    const promote = expectErrorEnvelope(await asA.change(a.user.id, { role: 'admin' }), 403, 'FORBIDDEN')
    expect(promote.message).toBe('Only an admin may set role')
    expectErrorEnvelope(await asA.change(a.user.id, { status: 'active', name: 'x' }), 403, 'FORBIDDEN')
    const [row] = await auth.sql<{ role: string }[]>`select role from users where id = ${a.user.id}`
    expect(row?.role).toBe('user')
  })

  it('when an admin reads, lists, changes (role included) and deletes another user, then it is allowed', async () => {
    const admin = await signedIn(auth, { role: 'admin' })
    const b = await createTestUser(auth)
    const asAdmin = as(admin.headers)
    expect((await asAdmin.read(b.id)).statusCode).toBe(200)
    expect((await asAdmin.list()).statusCode).toBe(200)
    const promoted = await asAdmin.change(b.id, { role: 'admin', status: 'suspended' })
    expect(promoted.statusCode).toBe(200)
    expect(promoted.json()).toMatchObject({ role: 'admin', status: 'suspended' })
    expect((await asAdmin.remove(b.id)).statusCode).toBe(204)
  })

  it('when no credentials or a bad token are sent, then 401 on read, change, delete and list', async () => {
    const b = await createTestUser(auth)
    for (const headers of [{}, { authorization: 'Bearer not.a.token' }] as Record<string, string>[]) {
      const caller = as(headers)
      expectErrorEnvelope(await caller.read(b.id), 401, 'UNAUTHORIZED')
      expectErrorEnvelope(await caller.change(b.id, { name: 'x' }), 401, 'UNAUTHORIZED')
      expectErrorEnvelope(await caller.remove(b.id), 401, 'UNAUTHORIZED')
      expectErrorEnvelope(await caller.list(), 401, 'UNAUTHORIZED')
    }
    expect(expectErrorEnvelope(await as({}).read(b.id), 401, 'UNAUTHORIZED').message).toBe('Missing token')
  })

  it('when someone registers, then no credentials are needed; setting role or status needs an admin (401 anonymous, 403 user, 201 admin)', async () => {
    expect((await as({}).create(newUser())).statusCode).toBe(201)
    expectErrorEnvelope(await as({}).create(newUser({ role: 'admin' })), 401, 'UNAUTHORIZED')
    const user = await signedIn(auth)
    const forbidden = expectErrorEnvelope(
      await as(user.headers).create(newUser({ role: 'admin', status: 'active' })),
      403,
      'FORBIDDEN',
    )
    expect(forbidden.message).toBe('Only an admin may set role and status')
    const admin = await signedIn(auth, { role: 'admin' })
    const created = await as(admin.headers).create(newUser({ role: 'admin', status: 'inactive' }))
    expect(created.statusCode).toBe(201)
    expect(created.json()).toMatchObject({ role: 'admin', status: 'inactive' })
  })
})
