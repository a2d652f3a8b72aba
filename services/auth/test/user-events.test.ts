// Changing and removing a user publish user.profile_changed and user.removed through the outbox, each in the
// transaction of its write; a refused change or removal writes none.
import { randomUUID } from 'node:crypto'
import { expectErrorEnvelope } from '@meridian/testkit'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type AuthTestApp, buildAuthTestApp } from './auth-app.ts'
import { bearerFor } from './identities.ts'

const json = { 'content-type': 'application/json' }

interface OutboxRow {
  eventType: string
  aggregateId: string
  payload: { type: string; source: string; schemaVersion: string; data: Record<string, unknown> }
}

describe('auth: user.profile_changed and user.removed', () => {
  let auth: AuthTestApp
  let admin: { authorization: string }
  beforeAll(async () => {
    auth = await buildAuthTestApp()
    admin = bearerFor(auth, { role: 'admin' })
  })
  afterAll(async () => {
    await auth.close()
  })

  async function create() {
    const response = await auth.app.inject({
      method: 'POST',
      url: '/api/v1/users',
      headers: { ...json, ...admin },
      payload: {
        name: 'Evented',
        email: `evented.${randomUUID().slice(0, 8)}@example.com`,
        password: 'long enough pw',
      },
    })
    return { user: response.json(), etag: String(response.headers.etag) }
  }
  const patch = (id: string, payload: Record<string, unknown>, headers: Record<string, string> = {}) =>
    auth.app.inject({
      method: 'PATCH',
      url: `/api/v1/users/${id}`,
      headers: { ...json, ...admin, ...headers },
      payload,
    })
  const remove = (id: string) =>
    auth.app.inject({ method: 'DELETE', url: `/api/v1/users/${id}`, headers: admin })
  // every row but the user.registered of creation
  const eventsOf = (userId: string) =>
    auth.sql<OutboxRow[]>`
      select event_type, aggregate_id, payload from outbox
      where aggregate_id = ${userId} and event_type <> 'user.registered' order by id`
  const outboxSize = async () => Number((await auth.sql`select count(*)::int as n from outbox`)[0]?.n)

  it('when a user is changed, then one user.profile_changed row carries their whole state after it and the new version', async () => {
    const { user, etag } = await create()
    const response = await patch(user.id, { name: 'Renamed', role: 'admin' }, { 'if-match': etag })
    expect(response.statusCode).toBe(200)
    expect(response.headers.etag).toBe(`"${user.id}.2"`)

    const events = await eventsOf(user.id)
    expect(events).toHaveLength(1)
    expect(events[0]).toMatchObject({
      eventType: 'user.profile_changed',
      aggregateId: user.id,
      payload: { type: 'user.profile_changed', source: 'auth', schemaVersion: '1.0.0' },
    })
    expect(events[0]?.payload.data).toEqual({
      userId: user.id,
      email: user.email,
      name: 'Renamed',
      role: 'admin',
      status: 'active',
      version: 2,
    })
  })

  it('when only the age changes, then the event still tells the state and the bumped version', async () => {
    const { user } = await create()
    expect((await patch(user.id, { age: 40 })).statusCode).toBe(200)
    const events = await eventsOf(user.id)
    expect(events.map((event) => event.payload.data.version)).toEqual([2])
  })

  it('when PATCH carries a stale ETag (412) or names an unknown user (404), then no event is written', async () => {
    const { user, etag } = await create()
    expect((await patch(user.id, { name: 'First writer' })).statusCode).toBe(200)
    const before = await outboxSize()
    expectErrorEnvelope(
      await patch(user.id, { name: 'Lost update' }, { 'if-match': etag }),
      412,
      'PRECONDITION_FAILED',
    )
    expectErrorEnvelope(await patch(randomUUID(), { name: 'Ghost' }), 404, 'NOT_FOUND')
    expectErrorEnvelope(
      await patch(randomUUID(), { name: 'Ghost' }, { 'if-match': `"${randomUUID()}.1"` }),
      404,
      'NOT_FOUND',
    )
    expect(await outboxSize()).toBe(before)
    expect((await eventsOf(user.id)).map((event) => event.payload.data.name)).toEqual(['First writer'])
  })

  it('when a change is refused by the database (a taken email), then no event is written', async () => {
    const { user } = await create()
    const other = await create()
    const before = await outboxSize()
    expectErrorEnvelope(await patch(user.id, { email: other.user.email }), 409, 'CONFLICT')
    expect(await outboxSize()).toBe(before)
  })

  it('when a user is deleted, then one user.removed row; deleting again (404) writes none', async () => {
    const { user } = await create()
    expect((await remove(user.id)).statusCode).toBe(204)
    const events = await eventsOf(user.id)
    expect(events).toHaveLength(1)
    expect(events[0]).toMatchObject({
      eventType: 'user.removed',
      aggregateId: user.id,
      payload: { type: 'user.removed', source: 'auth', schemaVersion: '1.0.0', data: { userId: user.id } },
    })
    const before = await outboxSize()
    expectErrorEnvelope(await remove(user.id), 404, 'NOT_FOUND')
    expect(await outboxSize()).toBe(before)
  })
})
