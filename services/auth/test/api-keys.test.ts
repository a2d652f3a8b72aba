// API keys: created and shown once, stored hashed, accepted only in X-API-Key, revoked by their owner or an admin,
// and held to their scopes.
import { createHash, randomUUID } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { expectErrorEnvelope } from '@meridian/testkit'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type AuthTestApp, buildAuthTestApp } from './auth-app.ts'
import { type SignedIn, signedIn } from './identities.ts'

let auth: AuthTestApp
beforeAll(async () => {
  auth = await buildAuthTestApp()
})
afterAll(async () => {
  await auth?.close()
})

interface CreatedKey {
  id: string
  userId: string
  key: string
  prefix: string
  scopes: string[]
  lastUsedAt: string | null
}

async function createKey(owner: SignedIn, body: Record<string, unknown> = {}): Promise<CreatedKey> {
  const response = await auth.app.inject({
    method: 'POST',
    url: '/api/v1/api-keys',
    headers: owner.headers,
    payload: { name: 'deploy bot', scopes: ['users:read'], ...body },
  })
  expect(response.statusCode).toBe(201)
  return response.json()
}

const readSelf = (userId: string, headers: Record<string, string>) =>
  auth.app.inject({ method: 'GET', url: `/api/v1/users/${userId}`, headers })

describe('API keys', () => {
  it('when a user creates a key, then it is answered once with Location, stored only as prefix and hash, and authenticates as that user in X-API-Key', async () => {
    const owner = await signedIn(auth)
    const response = await auth.app.inject({
      method: 'POST',
      url: '/api/v1/api-keys',
      headers: owner.headers,
      payload: { name: 'ci', scopes: ['users:read', 'orders:write'] },
    })
    expect(response.statusCode).toBe(201)
    const created = response.json() as CreatedKey
    expect(response.headers.location).toBe(`/api/v1/api-keys/${created.id}`)
    expect(created).toMatchObject({
      userId: owner.user.id,
      scopes: ['users:read', 'orders:write'],
      lastUsedAt: null,
    })
    expect(created.key).toMatch(/^mk_[0-9a-f]{12}_[A-Za-z0-9_-]{43}$/)
    expect(created.key.startsWith(`${created.prefix}_`)).toBe(true)

    const [row] = await auth.sql<{ keyHash: string; prefix: string }[]>`
      select key_hash, prefix from api_keys where id = ${created.id}`
    expect(row?.keyHash).toBe(createHash('sha256').update(created.key).digest('base64url'))
    expect(JSON.stringify(row)).not.toContain(created.key)

    const asKey = await readSelf(owner.user.id, { 'x-api-key': created.key })
    expect(asKey.statusCode).toBe(200)
    expect(asKey.json()).toMatchObject({ id: owner.user.id })
    // the list never shows the key again, and records the use
    const list = await auth.app.inject({ method: 'GET', url: '/api/v1/api-keys', headers: owner.headers })
    expect(list.statusCode).toBe(200)
    expect(list.body).not.toContain(created.key)
    const [listed] = list.json().data as CreatedKey[]
    expect(listed).toMatchObject({ id: created.id, prefix: created.prefix })
    expect(listed?.lastUsedAt).not.toBeNull()
    expect(list.json().meta).toMatchObject({ page: 1, total: 1 })
  })

  it('when a key is sent in the URL query, then it is refused with a clear 401, even when it is valid', async () => {
    const owner = await signedIn(auth)
    const { key } = await createKey(owner)
    for (const name of ['api_key', 'apiKey', 'API-KEY']) {
      const response = await auth.app.inject({
        method: 'GET',
        url: `/api/v1/users/${owner.user.id}?${name}=${key}`,
      })
      const error = expectErrorEnvelope(response, 401, 'UNAUTHORIZED', { context: name })
      expect(error.message, name).toBe('API keys are accepted only in the X-API-Key header')
    }
    expect(JSON.stringify(auth.logs)).not.toContain(key)
  })

  it('when a key is unknown, tampered with, revoked or expired, or its owner is suspended, then it is refused with 401 Invalid API key', async () => {
    const owner = await signedIn(auth)
    const revoked = await createKey(owner)
    const revoke = await auth.app.inject({
      method: 'DELETE',
      url: `/api/v1/api-keys/${revoked.id}`,
      headers: owner.headers,
    })
    expect(revoke.statusCode).toBe(204)
    const expiring = await createKey(owner, { expiresAt: new Date(Date.now() + 60_000).toISOString() })
    await auth.sql`update api_keys set expires_at = now() - interval '1 second' where id = ${expiring.id}`
    const valid = await createKey(owner)
    const tampered = `${valid.key.slice(0, -1)}${valid.key.endsWith('A') ? 'B' : 'A'}`
    const suspendedOwner = await signedIn(auth)
    const ofSuspended = await createKey(suspendedOwner)
    await auth.sql`update users set status = 'suspended' where id = ${suspendedOwner.user.id}`

    for (const key of [
      revoked.key,
      expiring.key,
      tampered,
      `mk_000000000000_${'x'.repeat(43)}`,
      'nonsense',
      ofSuspended.key,
    ]) {
      const response = await readSelf(owner.user.id, { 'x-api-key': key })
      const error = expectErrorEnvelope(response, 401, 'UNAUTHORIZED', { context: key })
      expect(error.message, key).toBe('Invalid API key')
    }
    expect((await readSelf(owner.user.id, { 'x-api-key': valid.key })).statusCode).toBe(200)
  })

  it("when a user lists, creates or revokes another user's keys, then 403; an admin may do all three", async () => {
    const alice = await signedIn(auth)
    const bob = await signedIn(auth)
    const admin = await signedIn(auth, { role: 'admin' })
    const bobsKey = await createKey(bob)

    const list = await auth.app.inject({
      method: 'GET',
      url: `/api/v1/api-keys?userId=${bob.user.id}`,
      headers: alice.headers,
    })
    expect(list.statusCode).toBe(403)
    const create = await auth.app.inject({
      method: 'POST',
      url: '/api/v1/api-keys',
      headers: alice.headers,
      payload: { name: 'sneaky', scopes: ['users:read'], userId: bob.user.id },
    })
    expect(create.statusCode).toBe(403)
    const revoke = await auth.app.inject({
      method: 'DELETE',
      url: `/api/v1/api-keys/${bobsKey.id}`,
      headers: alice.headers,
    })
    expect(expectErrorEnvelope(revoke, 403, 'FORBIDDEN').message).toBe('Insufficient permissions')
    // Bob's key still works
    expect((await readSelf(bob.user.id, { 'x-api-key': bobsKey.key })).statusCode).toBe(200)

    const adminList = await auth.app.inject({
      method: 'GET',
      url: `/api/v1/api-keys?userId=${bob.user.id}`,
      headers: admin.headers,
    })
    expect(adminList.statusCode).toBe(200)
    expect((adminList.json().data as CreatedKey[]).map((key) => key.id)).toEqual([bobsKey.id])
    const forBob = await createKey(admin, { userId: bob.user.id })
    expect(forBob.userId).toBe(bob.user.id)
    const adminRevoke = await auth.app.inject({
      method: 'DELETE',
      url: `/api/v1/api-keys/${bobsKey.id}`,
      headers: admin.headers,
    })
    expect(adminRevoke.statusCode).toBe(204)
    expect((await readSelf(bob.user.id, { 'x-api-key': bobsKey.key })).statusCode).toBe(401)
  })

  it('when a key is used to create another key, then 403: a leaked key cannot mint successors, even with api-keys:write', async () => {
    const owner = await signedIn(auth)
    const { key } = await createKey(owner, { scopes: ['api-keys:write'] })
    const response = await auth.app.inject({
      method: 'POST',
      url: '/api/v1/api-keys',
      headers: { 'x-api-key': key },
      payload: { name: 'successor', scopes: ['users:read'] },
    })
    expect(expectErrorEnvelope(response, 403, 'FORBIDDEN').message).toBe('API keys cannot create API keys')
    const { key: reader } = await createKey(owner)
    const unscoped = await auth.app.inject({
      method: 'POST',
      url: '/api/v1/api-keys',
      headers: { 'x-api-key': reader },
      payload: { name: 'successor', scopes: ['users:read'] },
    })
    expect(expectErrorEnvelope(unscoped, 403, 'INSUFFICIENT_SCOPE').message).toBe(
      'Insufficient scope: this operation needs api-keys:write',
    )
  })

  it('when the body is invalid (no name, bad scope, past expiry, unknown field) or nobody is signed in, then 422 or 401 and nothing is created', async () => {
    const owner = await signedIn(auth)
    const attempts: [Record<string, unknown>, string][] = [
      [{ scopes: ['users:read'] }, 'name'],
      // a key names what it is for: no scopes, an empty list, a scope outside the catalogue, one twice
      [{ name: 'x' }, 'scopes'],
      [{ name: 'x', scopes: [] }, 'scopes'],
      [{ name: 'x', scopes: ['Users:Everything'] }, 'scopes'],
      [{ name: 'x', scopes: ['widgets:read'] }, 'scopes'],
      [{ name: 'x', scopes: ['orders:read', 'orders:read'] }, 'scopes'],
      [
        { name: 'x', scopes: ['users:read'], expiresAt: new Date(Date.now() - 1000).toISOString() },
        'expiresAt',
      ],
      [{ name: 'x', scopes: ['users:read'], admin: true }, 'admin'],
    ]
    for (const [payload, field] of attempts) {
      const response = await auth.app.inject({
        method: 'POST',
        url: '/api/v1/api-keys',
        headers: owner.headers,
        payload,
      })
      const context = JSON.stringify(payload)
      const error = expectErrorEnvelope(response, 422, 'VALIDATION_ERROR', { context })
      expect(JSON.stringify(error.details), context).toContain(field)
    }
    const anonymous = await auth.app.inject({
      method: 'POST',
      url: '/api/v1/api-keys',
      payload: { name: 'x' },
    })
    expect(expectErrorEnvelope(anonymous, 401, 'UNAUTHORIZED').message).toBe('Missing token')
    const [count] = await auth.sql<
      { n: number }[]
    >`select count(*)::int as n from api_keys where user_id = ${owner.user.id}`
    expect(count?.n).toBe(0)
  })

  it("when an admin's key holds users:read only, then changing another user's role is 403 INSUFFICIENT_SCOPE naming users:write, and the role is unchanged", async () => {
    const admin = await signedIn(auth, { role: 'admin' })
    const target = await signedIn(auth)
    const promote = (key: string) =>
      auth.app.inject({
        method: 'PATCH',
        url: `/api/v1/users/${target.user.id}`,
        headers: { 'x-api-key': key, 'content-type': 'application/json' },
        payload: { role: 'admin' },
      })
    const roleOfTarget = async () =>
      (await auth.sql<{ role: string }[]>`select role from users where id = ${target.user.id}`)[0]?.role

    const reader = await createKey(admin, { scopes: ['users:read'] })
    expect(expectErrorEnvelope(await promote(reader.key), 403, 'INSUFFICIENT_SCOPE').message).toBe(
      'Insufficient scope: this operation needs users:write',
    )
    // users:write covers the admin's own account; another user's, and any role, are admin:write's
    const writer = await createKey(admin, { scopes: ['users:read', 'users:write'] })
    expect(expectErrorEnvelope(await promote(writer.key), 403, 'INSUFFICIENT_SCOPE').message).toBe(
      'Insufficient scope: this operation needs admin:write',
    )
    const selfPromotion = await auth.app.inject({
      method: 'PATCH',
      url: `/api/v1/users/${admin.user.id}`,
      headers: { 'x-api-key': writer.key, 'content-type': 'application/json' },
      payload: { role: 'admin' },
    })
    expect(expectErrorEnvelope(selfPromotion, 403, 'INSUFFICIENT_SCOPE').message).toBe(
      'Insufficient scope: this operation needs admin:write',
    )
    expect(await roleOfTarget()).toBe('user')

    const operator = await createKey(admin, { scopes: ['users:write', 'admin:write'] })
    expect((await promote(operator.key)).statusCode).toBe(200)
    expect(await roleOfTarget()).toBe('admin')
  })

  it("when a plain user's key holds admin:write, then it still cannot act on another user: a scope never grants more than the role", async () => {
    const user = await signedIn(auth)
    const other = await signedIn(auth)
    const key = await createKey(user, { scopes: ['users:read', 'users:write', 'admin:write'] })
    const answer = await auth.app.inject({
      method: 'PATCH',
      url: `/api/v1/users/${other.user.id}`,
      headers: { 'x-api-key': key.key, 'content-type': 'application/json' },
      payload: { name: 'Not yours' },
    })
    expectErrorEnvelope(answer, 403, 'FORBIDDEN')
    const own = await auth.app.inject({
      method: 'PATCH',
      url: `/api/v1/users/${user.user.id}`,
      headers: { 'x-api-key': key.key, 'content-type': 'application/json' },
      payload: { role: 'admin' },
    })
    expect(expectErrorEnvelope(own, 403, 'FORBIDDEN').message).toBe('Only an admin may set role')
  })

  it('when keys made before scopes named none, then migrating revokes them, visibly; keys with scopes stay', async () => {
    const owner = await signedIn(auth)
    const kept = await createKey(owner)
    const [legacy] = await auth.sql<{ id: string }[]>`
      insert into api_keys (user_id, name, prefix, key_hash, scopes)
      values (${owner.user.id}, 'legacy', ${randomUUID().replaceAll('-', '').slice(0, 12)}, 'x', '{}')
      returning id`
    await auth.sql.unsafe(
      readFileSync(new URL('../migrations/0008_api_key_scopes.sql', import.meta.url), 'utf8'),
    )
    const rows = await auth.sql<{ id: string; revokedAt: Date | null }[]>`
      select id, revoked_at from api_keys where user_id = ${owner.user.id}`
    const revokedAt = new Map(rows.map((row) => [row.id, row.revokedAt]))
    expect(revokedAt.get(legacy!.id)).toBeInstanceOf(Date)
    expect(revokedAt.get(kept.id)).toBeNull()
  })

  it('when an unknown key id is revoked, then 404', async () => {
    const owner = await signedIn(auth)
    const response = await auth.app.inject({
      method: 'DELETE',
      url: '/api/v1/api-keys/00000000-0000-4000-8000-000000000000',
      headers: owner.headers,
    })
    expect(response.statusCode).toBe(404)
  })
})

describe('the audit trail of API keys and users', () => {
  interface AuditEntryRead {
    actor: string
    action: string
    target: string
    detail: Record<string, unknown>
    address?: string
    requestId?: string
  }
  const trail = async (admin: SignedIn, query = '') => {
    const response = await auth.app.inject({
      method: 'GET',
      url: `/api/v1/admin/audit/auth?limit=100${query}`,
      headers: admin.headers,
    })
    expect(response.statusCode, response.body).toBe(200)
    return (response.json() as { data: AuditEntryRead[] }).data
  }

  it('when a key is created and revoked, then both are in the trail with who, from where and the request id, never the key', async () => {
    const owner = await signedIn(auth)
    const admin = await signedIn(auth, { role: 'admin' })
    const created = await auth.app.inject({
      method: 'POST',
      url: '/api/v1/api-keys',
      headers: { ...owner.headers, 'x-request-id': 'audit-create-1' },
      payload: { name: 'audited', scopes: ['users:read'] },
    })
    expect(created.statusCode).toBe(201)
    const key = created.json() as CreatedKey
    const revoked = await auth.app.inject({
      method: 'DELETE',
      url: `/api/v1/api-keys/${key.id}`,
      headers: admin.headers,
    })
    expect(revoked.statusCode).toBe(204)

    const entries = (await trail(admin)).filter((entry) => entry.target === `api_key:${key.id}`)
    // a252e60 kept no trail at all
    expect(entries.map((entry) => [entry.action, entry.actor])).toEqual([
      ['api_key.revoked', `user:${admin.user.id}`],
      ['api_key.created', `user:${owner.user.id}`],
    ])
    expect(entries[1]).toMatchObject({
      requestId: 'audit-create-1',
      address: expect.any(String),
      detail: { userId: owner.user.id, name: 'audited', scopes: ['users:read'], prefix: key.prefix },
    })
    expect(JSON.stringify(entries)).not.toContain(key.key)
  })

  it('when an admin changes a role and removes a user, then the trail says so; a user changing their own name is not an operator action', async () => {
    const admin = await signedIn(auth, { role: 'admin' })
    const someone = await signedIn(auth)
    const promoted = await auth.app.inject({
      method: 'PATCH',
      url: `/api/v1/users/${someone.user.id}`,
      headers: admin.headers,
      payload: { role: 'admin' },
    })
    expect(promoted.statusCode, promoted.body).toBe(200)
    const renamed = await auth.app.inject({
      method: 'PATCH',
      url: `/api/v1/users/${admin.user.id}`,
      headers: admin.headers,
      payload: { name: 'Renamed Admin' },
    })
    expect(renamed.statusCode).toBe(200)
    const self = await signedIn(auth)
    await auth.app.inject({
      method: 'PATCH',
      url: `/api/v1/users/${self.user.id}`,
      headers: self.headers,
      payload: { name: 'Just Me' },
    })
    const removed = await auth.app.inject({
      method: 'DELETE',
      url: `/api/v1/users/${someone.user.id}`,
      headers: admin.headers,
    })
    expect(removed.statusCode).toBe(204)

    const about = (id: string) => async () =>
      (await trail(admin)).filter((entry) => entry.target === `user:${id}`).map((entry) => entry.action)
    expect(await about(someone.user.id)()).toEqual(['user.removed', 'user.role_changed'])
    expect(await about(self.user.id)()).toEqual([])
    const [roleChange] = await trail(admin, '&action=user.role_changed')
    expect(roleChange).toMatchObject({
      actor: `user:${admin.user.id}`,
      detail: { fields: ['role'], role: 'admin' },
    })
  })

  it('when anyone but an admin reads the trail, then 401 without credentials and 403 for a user; a bad query 422', async () => {
    const user = await signedIn(auth)
    const admin = await signedIn(auth, { role: 'admin' })
    expectErrorEnvelope(
      await auth.app.inject({ method: 'GET', url: '/api/v1/admin/audit/auth' }),
      401,
      'UNAUTHORIZED',
    )
    expectErrorEnvelope(
      await auth.app.inject({ method: 'GET', url: '/api/v1/admin/audit/auth', headers: user.headers }),
      403,
      'FORBIDDEN',
    )
    for (const query of ['limit=0', 'limit=101', 'action=Not.An.Action', 'before=yesterday']) {
      expectErrorEnvelope(
        await auth.app.inject({
          method: 'GET',
          url: `/api/v1/admin/audit/auth?${query}`,
          headers: admin.headers,
        }),
        422,
        'VALIDATION_ERROR',
      )
    }
    // no route changes an entry
    for (const method of ['POST', 'PUT', 'PATCH', 'DELETE'] as const) {
      const answer = await auth.app.inject({
        method,
        url: '/api/v1/admin/audit/auth',
        headers: admin.headers,
      })
      expect([404, 405], method).toContain(answer.statusCode)
    }
  })
})
