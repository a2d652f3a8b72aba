// Chat rooms over HTTP on a real database: creating one (the caller owns it and is its first member), the list (a
// user's rooms, an admin's all, paged), reading one (members and admins; anyone else 404), adding and removing members
// (the owner or an admin; a member removing themselves; the owner never), and the message history (members, newest
// first, 50 a page by default).
import { randomUUID } from 'node:crypto'
import { asAdmin, asUser, expectErrorEnvelope } from '@meridian/testkit'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildCollaborationTestApp, type CollaborationTestApp, injector } from './support/collaboration.ts'

let gateway: CollaborationTestApp

beforeAll(async () => {
  gateway = await buildCollaborationTestApp()
})

afterAll(async () => {
  await gateway?.close()
})

const inject = injector(() => gateway)

/** A room created over HTTP by `ownerId`, with `members` added by the owner. */
async function createRoom(ownerId: string, members: string[] = [], name = 'General') {
  const answer = await inject('POST', '/api/v1/chat/rooms', asUser(ownerId), { name })
  expect(answer.statusCode).toBe(201)
  const room = answer.json() as {
    id: string
    name: string
    ownerId: string
    members: string[]
    createdAt: string
  }
  for (const userId of members) {
    expect(
      (await inject('POST', `/api/v1/chat/rooms/${room.id}/members`, asUser(ownerId), { userId })).statusCode,
    ).toBe(201)
  }
  return room
}

/** Messages stored as the channel stores them, `count` of them, in order. */
async function postMessages(roomId: string, userId: string, count: number): Promise<string[]> {
  const texts: string[] = []
  for (let index = 0; index < count; index += 1) {
    const text = `message ${index}`
    await gateway.chat.postMessage({ userId, username: 'poster' }, roomId, text)
    texts.push(text)
  }
  return texts
}

describe('POST /api/v1/chat/rooms', () => {
  it('when a user creates a room, then 201 with Location; they own it and are its only member (/api/v1 and /api)', async () => {
    const ownerId = randomUUID()
    for (const prefix of ['/api/v1', '/api']) {
      const answer = await inject('POST', `${prefix}/chat/rooms`, asUser(ownerId), { name: '  Team room  ' })
      expect(answer.statusCode).toBe(201)
      const room = answer.json()
      expect(room).toEqual({
        id: expect.stringMatching(/^[0-9a-f-]{36}$/),
        name: 'Team room',
        ownerId,
        members: [ownerId],
        createdAt: expect.any(String),
      })
      expect(new Date(room.createdAt).toISOString()).toBe(room.createdAt)
      expect(answer.headers.location).toBe(`/api/v1/chat/rooms/${room.id}`)
      const read = await inject('GET', answer.headers.location as string, asUser(ownerId))
      expect(read.json()).toEqual(room)
    }
  })

  it('when the body is invalid, then 422 naming the field; without credentials 401', async () => {
    for (const body of [
      {},
      { name: '' },
      { name: '   ' },
      { name: 'x'.repeat(101) },
      { name: 'ok', extra: 1 },
    ]) {
      const error = expectErrorEnvelope(
        await inject('POST', '/api/v1/chat/rooms', asUser(), body),
        422,
        'VALIDATION_ERROR',
        { context: JSON.stringify(body) },
      )
      expect(error.details?.length).toBeGreaterThan(0)
    }
    const nameless = expectErrorEnvelope(
      await inject('POST', '/api/v1/chat/rooms', asUser(), {}),
      422,
      'VALIDATION_ERROR',
    )
    expect(nameless.details).toEqual([expect.objectContaining({ field: 'name' })])
    expectErrorEnvelope(await inject('POST', '/api/v1/chat/rooms', {}, { name: 'x' }), 401, 'UNAUTHORIZED')
  })
})

describe('GET /api/v1/chat/rooms/{roomId}', () => {
  it('when a member or an admin reads the room, then 200 with its members; anyone else 404, as an unknown room', async () => {
    const ownerId = randomUUID()
    const memberId = randomUUID()
    const room = await createRoom(ownerId, [memberId])
    for (const headers of [asUser(ownerId), asUser(memberId), asAdmin()]) {
      const answer = await inject('GET', `/api/v1/chat/rooms/${room.id}`, headers)
      expect(answer.statusCode).toBe(200)
      expect(answer.json()).toEqual({ ...room, members: [ownerId, memberId] })
    }
    expectErrorEnvelope(await inject('GET', `/api/v1/chat/rooms/${room.id}`, asUser()), 404, 'NOT_FOUND')
    expectErrorEnvelope(
      await inject('GET', `/api/v1/chat/rooms/${randomUUID()}`, asAdmin()),
      404,
      'NOT_FOUND',
    )
    expectErrorEnvelope(await inject('GET', `/api/v1/chat/rooms/${room.id}`, {}), 401, 'UNAUTHORIZED')
    const bad = expectErrorEnvelope(
      await inject('GET', '/api/v1/chat/rooms/nope', asUser()),
      422,
      'VALIDATION_ERROR',
    )
    expect(bad.details).toEqual([expect.objectContaining({ field: 'roomId' })])
  })
})

describe('GET /api/v1/chat/rooms', () => {
  it('when a user lists, then only the rooms they are a member of, newest first, paged with the envelope', async () => {
    const userId = randomUUID()
    const owned = await createRoom(userId, [], 'Owned')
    const joined = await createRoom(randomUUID(), [userId], 'Joined')
    await createRoom(randomUUID(), [], 'Someone else’s')

    const answer = await inject('GET', '/api/v1/chat/rooms', asUser(userId))
    expect(answer.statusCode).toBe(200)
    expect(answer.json()).toEqual({
      data: [joined, owned].map((room) => expect.objectContaining({ id: room.id, name: room.name })),
      meta: { page: 1, limit: 20, total: 2, totalPages: 1 },
      links: {
        self: '/api/v1/chat/rooms?page=1&limit=20',
        first: '/api/v1/chat/rooms?page=1&limit=20',
        prev: null,
        next: null,
        last: '/api/v1/chat/rooms?page=1&limit=20',
      },
    })
    expect(answer.json().data[0].members).toEqual([joined.ownerId, userId])

    const page = await inject('GET', '/api/v1/chat/rooms?limit=1&page=2&sort=name:asc', asUser(userId))
    expect(page.json().data.map((room: { id: string }) => room.id)).toEqual([owned.id])
    expect(page.json().meta).toEqual({ page: 2, limit: 1, total: 2, totalPages: 2 })
    expect(page.json().links.prev).toBe('/api/v1/chat/rooms?sort=name%3Aasc&page=1&limit=1')
  })

  it('when an admin lists, then every room; a user in no room sees an empty list', async () => {
    const room = await createRoom(randomUUID())
    const all = await inject('GET', '/api/v1/chat/rooms?limit=100', asAdmin())
    expect(all.json().data.map((each: { id: string }) => each.id)).toContain(room.id)
    expect(all.json().meta.total).toBeGreaterThanOrEqual(1)

    const none = await inject('GET', '/api/v1/chat/rooms', asUser())
    expect(none.json()).toMatchObject({ data: [], meta: { total: 0, totalPages: 0 } })
  })

  it('when the query is invalid, then 422 naming the parameter; without credentials 401', async () => {
    for (const [query, field] of [
      ['limit=0', 'limit'],
      ['limit=101', 'limit'],
      ['page=0', 'page'],
      ['sort=members:asc', 'sort'],
      ['other=1', 'other'],
    ] as const) {
      const error = expectErrorEnvelope(
        await inject('GET', `/api/v1/chat/rooms?${query}`, asUser()),
        422,
        'VALIDATION_ERROR',
        { context: query },
      )
      expect(JSON.stringify(error.details), query).toContain(field)
    }
    expectErrorEnvelope(await inject('GET', '/api/v1/chat/rooms', {}), 401, 'UNAUTHORIZED')
  })
})

describe('POST /api/v1/chat/rooms/{roomId}/members', () => {
  it('when the owner adds a user, then 201 with the membership and Location; again, 200 and the same membership', async () => {
    const ownerId = randomUUID()
    const room = await createRoom(ownerId)
    const userId = randomUUID()
    const added = await inject('POST', `/api/v1/chat/rooms/${room.id}/members`, asUser(ownerId), { userId })
    expect(added.statusCode).toBe(201)
    expect(added.json()).toEqual({ userId, joinedAt: expect.any(String) })
    expect(added.headers.location).toBe(`/api/v1/chat/rooms/${room.id}/members/${userId}`)

    const again = await inject('POST', `/api/v1/chat/rooms/${room.id}/members`, asUser(ownerId), {
      userId: userId.toUpperCase(),
    })
    expect(again.statusCode).toBe(200)
    expect(again.json()).toEqual(added.json())
    expect(again.headers.location).toBeUndefined()
    expect((await inject('GET', `/api/v1/chat/rooms/${room.id}`, asUser(userId))).json().members).toEqual([
      ownerId,
      userId,
    ])
  })

  it('when an admin adds a user to any room, then 201', async () => {
    const room = await createRoom(randomUUID())
    const answer = await inject('POST', `/api/v1/chat/rooms/${room.id}/members`, asAdmin(), {
      userId: randomUUID(),
    })
    expect(answer.statusCode).toBe(201)
  })

  it('when a member who is not the owner adds someone, then 403; a stranger 404; unknown room 404; bad body 422; no credentials 401', async () => {
    const ownerId = randomUUID()
    const memberId = randomUUID()
    const room = await createRoom(ownerId, [memberId])
    const url = `/api/v1/chat/rooms/${room.id}/members`
    expectErrorEnvelope(
      await inject('POST', url, asUser(memberId), { userId: randomUUID() }),
      403,
      'FORBIDDEN',
    )
    expectErrorEnvelope(await inject('POST', url, asUser(), { userId: randomUUID() }), 404, 'NOT_FOUND')
    expectErrorEnvelope(
      await inject('POST', `/api/v1/chat/rooms/${randomUUID()}/members`, asAdmin(), { userId: randomUUID() }),
      404,
      'NOT_FOUND',
    )
    const bad = expectErrorEnvelope(
      await inject('POST', url, asUser(ownerId), { userId: 'someone' }),
      422,
      'VALIDATION_ERROR',
    )
    expect(bad.details).toEqual([expect.objectContaining({ field: 'userId' })])
    expectErrorEnvelope(await inject('POST', url, {}, { userId: randomUUID() }), 401, 'UNAUTHORIZED')
    expect((await inject('GET', `/api/v1/chat/rooms/${room.id}`, asUser(ownerId))).json().members).toEqual([
      ownerId,
      memberId,
    ])
  })
})

describe('DELETE /api/v1/chat/rooms/{roomId}/members/{userId}', () => {
  it('when the owner removes a member, then 204 and they no longer see the room', async () => {
    const ownerId = randomUUID()
    const memberId = randomUUID()
    const room = await createRoom(ownerId, [memberId])
    const answer = await inject(
      'DELETE',
      `/api/v1/chat/rooms/${room.id}/members/${memberId}`,
      asUser(ownerId),
    )
    expect(answer.statusCode).toBe(204)
    expect(answer.body).toBe('')
    expectErrorEnvelope(
      await inject('GET', `/api/v1/chat/rooms/${room.id}`, asUser(memberId)),
      404,
      'NOT_FOUND',
    )
  })

  it('when a member removes themselves, or an admin removes a member, then 204', async () => {
    const ownerId = randomUUID()
    const [leaving, removed] = [randomUUID(), randomUUID()]
    const room = await createRoom(ownerId, [leaving, removed])
    expect(
      (await inject('DELETE', `/api/v1/chat/rooms/${room.id}/members/${leaving}`, asUser(leaving)))
        .statusCode,
    ).toBe(204)
    expect(
      (await inject('DELETE', `/api/v1/chat/rooms/${room.id}/members/${removed}`, asAdmin())).statusCode,
    ).toBe(204)
    expect((await inject('GET', `/api/v1/chat/rooms/${room.id}`, asUser(ownerId))).json().members).toEqual([
      ownerId,
    ])
  })

  it('when a member removes another, then 403; the owner 409; a non-member 404; a stranger 404; no credentials 401', async () => {
    const ownerId = randomUUID()
    const [first, second] = [randomUUID(), randomUUID()]
    const room = await createRoom(ownerId, [first, second])
    const url = (userId: string) => `/api/v1/chat/rooms/${room.id}/members/${userId}`
    expectErrorEnvelope(await inject('DELETE', url(second), asUser(first)), 403, 'FORBIDDEN')
    expectErrorEnvelope(await inject('DELETE', url(ownerId), asUser(ownerId)), 409, 'CONFLICT')
    expectErrorEnvelope(await inject('DELETE', url(ownerId), asAdmin()), 409, 'CONFLICT')
    expectErrorEnvelope(await inject('DELETE', url(randomUUID()), asUser(ownerId)), 404, 'NOT_FOUND')
    expectErrorEnvelope(await inject('DELETE', url(first), asUser()), 404, 'NOT_FOUND')
    expectErrorEnvelope(await inject('DELETE', url(first), {}), 401, 'UNAUTHORIZED')
    expectErrorEnvelope(await inject('DELETE', url('nope'), asUser(ownerId)), 422, 'VALIDATION_ERROR')
    expect((await inject('GET', `/api/v1/chat/rooms/${room.id}`, asUser(ownerId))).json().members).toEqual([
      ownerId,
      first,
      second,
    ])
  })
})

describe('GET /api/v1/chat/rooms/{roomId}/messages', () => {
  it('when a member reads the messages, then the newest 50 first, paged; the next page holds the older ones', async () => {
    const ownerId = randomUUID()
    const room = await createRoom(ownerId)
    const texts = await postMessages(room.id, ownerId, 55)

    const first = await inject('GET', `/api/v1/chat/rooms/${room.id}/messages`, asUser(ownerId))
    expect(first.statusCode).toBe(200)
    const envelope = first.json()
    expect(envelope.meta).toEqual({ page: 1, limit: 50, total: 55, totalPages: 2 })
    expect(envelope.data.map((message: { text: string }) => message.text)).toEqual(texts.slice(5).reverse())
    expect(envelope.data[0]).toEqual({
      id: expect.any(String),
      roomId: room.id,
      userId: ownerId,
      username: 'poster',
      text: 'message 54',
      createdAt: expect.any(String),
    })
    expect(envelope.links.next).toBe(`/api/v1/chat/rooms/${room.id}/messages?page=2&limit=50`)

    const second = await inject('GET', envelope.links.next, asUser(ownerId))
    expect(second.json().data.map((message: { text: string }) => message.text)).toEqual(
      texts.slice(0, 5).reverse(),
    )

    const oldestFirst = await inject(
      'GET',
      `/api/v1/chat/rooms/${room.id}/messages?sort=createdAt:asc&limit=2`,
      asAdmin(),
    )
    expect(oldestFirst.json().data.map((message: { text: string }) => message.text)).toEqual([
      'message 0',
      'message 1',
    ])
  })

  it('when a stranger reads them, then 404; unknown room 404; a bad query 422; no credentials 401', async () => {
    const room = await createRoom(randomUUID())
    const url = `/api/v1/chat/rooms/${room.id}/messages`
    expectErrorEnvelope(await inject('GET', url, asUser()), 404, 'NOT_FOUND')
    expectErrorEnvelope(
      await inject('GET', `/api/v1/chat/rooms/${randomUUID()}/messages`, asAdmin()),
      404,
      'NOT_FOUND',
    )
    expectErrorEnvelope(await inject('GET', `${url}?limit=101`, asAdmin()), 422, 'VALIDATION_ERROR')
    expectErrorEnvelope(await inject('GET', `${url}?sort=text:asc`, asAdmin()), 422, 'VALIDATION_ERROR')
    expectErrorEnvelope(await inject('GET', url, {}), 401, 'UNAUTHORIZED')
  })
})
