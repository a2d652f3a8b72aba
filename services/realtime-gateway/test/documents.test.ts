// Collaborative documents over HTTP on a real database: creating one (the caller owns it and is its first member),
// the list (no content; a user's own and shared ones, an admin's all, paged), reading one (members and admins; anyone
// else 404), members added and removed, and deleting (the owner or an admin).
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

interface DocumentBody {
  id: string
  title: string
  content: string
  version: number
  ownerId: string
  members: string[]
  createdAt: string
  updatedAt: string
}

async function createDocument(ownerId: string, members: string[] = [], body: object = { title: 'Notes' }) {
  const answer = await inject('POST', '/api/v1/documents', asUser(ownerId), body)
  expect(answer.statusCode).toBe(201)
  const document = answer.json() as DocumentBody
  for (const userId of members) {
    const added = await inject('POST', `/api/v1/documents/${document.id}/members`, asUser(ownerId), {
      userId,
    })
    expect(added.statusCode).toBe(201)
  }
  return document
}

describe('POST /api/v1/documents', () => {
  it('when a user creates a document, then 201 with Location, version 0, owned by them, its only member', async () => {
    const ownerId = randomUUID()
    const answer = await inject('POST', '/api/v1/documents', asUser(ownerId), {
      title: ' Plan ',
      content: 'Step 1',
    })
    expect(answer.statusCode).toBe(201)
    const document = answer.json()
    expect(document).toEqual({
      id: expect.any(String),
      title: 'Plan',
      content: 'Step 1',
      version: 0,
      ownerId,
      members: [ownerId],
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
    })
    expect(answer.headers.location).toBe(`/api/v1/documents/${document.id}`)
    expect((await inject('GET', answer.headers.location as string, asUser(ownerId))).json()).toEqual(document)

    const empty = await inject('POST', '/api/documents', asUser(ownerId), {
      title: 'Empty',
    })
    expect(empty.statusCode).toBe(201)
    expect(empty.json().content).toBe('')
  })

  it('when the body is invalid (no title, blank, too long, content over 1 000 000 characters, NUL), then 422; no credentials 401', async () => {
    for (const [body, field] of [
      [{}, 'title'],
      [{ title: '  ' }, 'title'],
      [{ title: 'x'.repeat(201) }, 'title'],
      [{ title: 'big', content: 'x'.repeat(1_000_001) }, 'content'],
      [{ title: 'nul', content: 'a\u0000b' }, 'content'],
      [{ title: 'x', version: 3 }, 'version'],
    ] as const) {
      const error = expectErrorEnvelope(
        await inject('POST', '/api/v1/documents', asUser(), body),
        422,
        'VALIDATION_ERROR',
        { context: field },
      )
      expect(JSON.stringify(error.details), field).toContain(field)
    }
    expectErrorEnvelope(await inject('POST', '/api/v1/documents', {}, { title: 'x' }), 401, 'UNAUTHORIZED')
  })
})

describe('GET /api/v1/documents/{docId}', () => {
  it('when a member or an admin reads it, then 200 with its content; anyone else 404, as an unknown one; bad id 422; no credentials 401', async () => {
    const ownerId = randomUUID()
    const memberId = randomUUID()
    const document = await createDocument(ownerId, [memberId], { title: 'Shared', content: 'text' })
    for (const headers of [asUser(ownerId), asUser(memberId), asAdmin()]) {
      const answer = await inject('GET', `/api/v1/documents/${document.id}`, headers)
      expect(answer.statusCode).toBe(200)
      expect(answer.json()).toEqual({ ...document, members: [ownerId, memberId] })
    }
    expectErrorEnvelope(await inject('GET', `/api/v1/documents/${document.id}`, asUser()), 404, 'NOT_FOUND')
    expectErrorEnvelope(await inject('GET', `/api/v1/documents/${randomUUID()}`, asAdmin()), 404, 'NOT_FOUND')
    const bad = expectErrorEnvelope(
      await inject('GET', '/api/v1/documents/x', asUser()),
      422,
      'VALIDATION_ERROR',
    )
    expect(bad.details).toEqual([expect.objectContaining({ field: 'docId' })])
    expectErrorEnvelope(await inject('GET', `/api/v1/documents/${document.id}`, {}), 401, 'UNAUTHORIZED')
  })
})

describe('GET /api/v1/documents', () => {
  it('when a user lists, then the documents they own or share, newest first, without content, paged', async () => {
    const userId = randomUUID()
    const own = await createDocument(userId, [], { title: 'Own', content: 'secret' })
    const shared = await createDocument(randomUUID(), [userId], { title: 'Shared' })
    await createDocument(randomUUID())

    const answer = await inject('GET', '/api/v1/documents', asUser(userId))
    expect(answer.statusCode).toBe(200)
    const { content: _content, ...ownSummary } = own
    expect(answer.json()).toEqual({
      data: [expect.objectContaining({ id: shared.id, title: 'Shared' }), ownSummary],
      meta: { page: 1, limit: 20, total: 2, totalPages: 1 },
      links: {
        self: '/api/v1/documents?page=1&limit=20',
        first: '/api/v1/documents?page=1&limit=20',
        prev: null,
        next: null,
        last: '/api/v1/documents?page=1&limit=20',
      },
    })
    expect(answer.json().data[0]).not.toHaveProperty('content')

    const page = await inject('GET', '/api/v1/documents?sort=title:asc&limit=1', asUser(userId))
    expect(page.json().data.map((each: { id: string }) => each.id)).toEqual([own.id])
    expect(page.json().links.next).toBe('/api/v1/documents?sort=title%3Aasc&page=2&limit=1')
  })

  it('when an admin lists, then every document; a user with none sees an empty list; bad query 422; no credentials 401', async () => {
    const document = await createDocument(randomUUID())
    const all = await inject('GET', '/api/v1/documents?limit=100', asAdmin())
    expect(all.json().data.map((each: { id: string }) => each.id)).toContain(document.id)
    expect((await inject('GET', '/api/v1/documents', asUser())).json()).toMatchObject({
      data: [],
      meta: { total: 0 },
    })
    expectErrorEnvelope(
      await inject('GET', '/api/v1/documents?sort=content:asc', asUser()),
      422,
      'VALIDATION_ERROR',
    )
    expectErrorEnvelope(await inject('GET', '/api/v1/documents?limit=500', asUser()), 422, 'VALIDATION_ERROR')
    expectErrorEnvelope(await inject('GET', '/api/v1/documents', {}), 401, 'UNAUTHORIZED')
  })
})

describe('members of a document', () => {
  it('when the owner adds a user, then 201 with Location, again 200; the user then reads it', async () => {
    const ownerId = randomUUID()
    const document = await createDocument(ownerId)
    const userId = randomUUID()
    const url = `/api/v1/documents/${document.id}/members`
    const added = await inject('POST', url, asUser(ownerId), { userId })
    expect(added.statusCode).toBe(201)
    expect(added.json()).toEqual({ userId, joinedAt: expect.any(String) })
    expect(added.headers.location).toBe(`/api/v1/documents/${document.id}/members/${userId}`)
    const again = await inject('POST', url, asAdmin(), { userId })
    expect(again.statusCode).toBe(200)
    expect(again.json()).toEqual(added.json())
    expect((await inject('GET', `/api/v1/documents/${document.id}`, asUser(userId))).statusCode).toBe(200)
  })

  it('when a member adds someone, then 403; a stranger 404; bad body 422; no credentials 401', async () => {
    const ownerId = randomUUID()
    const memberId = randomUUID()
    const document = await createDocument(ownerId, [memberId])
    const url = `/api/v1/documents/${document.id}/members`
    expectErrorEnvelope(
      await inject('POST', url, asUser(memberId), { userId: randomUUID() }),
      403,
      'FORBIDDEN',
    )
    expectErrorEnvelope(await inject('POST', url, asUser(), { userId: randomUUID() }), 404, 'NOT_FOUND')
    expectErrorEnvelope(await inject('POST', url, asUser(ownerId), {}), 422, 'VALIDATION_ERROR')
    expectErrorEnvelope(await inject('POST', url, {}, { userId: randomUUID() }), 401, 'UNAUTHORIZED')
  })

  it('when a member leaves or the owner removes one, then 204; removing the owner 409, another member 403, a non-member 404', async () => {
    const ownerId = randomUUID()
    const [first, second, third] = [randomUUID(), randomUUID(), randomUUID()]
    const document = await createDocument(ownerId, [first, second, third])
    const url = (userId: string) => `/api/v1/documents/${document.id}/members/${userId}`
    expectErrorEnvelope(await inject('DELETE', url(second), asUser(first)), 403, 'FORBIDDEN')
    expectErrorEnvelope(await inject('DELETE', url(ownerId), asUser(ownerId)), 409, 'CONFLICT')
    expectErrorEnvelope(await inject('DELETE', url(randomUUID()), asUser(ownerId)), 404, 'NOT_FOUND')
    expectErrorEnvelope(await inject('DELETE', url(first), asUser()), 404, 'NOT_FOUND')
    expectErrorEnvelope(await inject('DELETE', url(first), {}), 401, 'UNAUTHORIZED')
    expect((await inject('DELETE', url(first), asUser(first))).statusCode).toBe(204)
    expect((await inject('DELETE', url(second), asUser(ownerId))).statusCode).toBe(204)
    expect((await inject('DELETE', url(third), asAdmin())).statusCode).toBe(204)
    expectErrorEnvelope(
      await inject('GET', `/api/v1/documents/${document.id}`, asUser(first)),
      404,
      'NOT_FOUND',
    )
    expect((await inject('GET', `/api/v1/documents/${document.id}`, asUser(ownerId))).json().members).toEqual(
      [ownerId],
    )
  })
})

describe('DELETE /api/v1/documents/{docId}', () => {
  it('when the owner or an admin deletes it, then 204 and it is gone with its members', async () => {
    const ownerId = randomUUID()
    const memberId = randomUUID()
    for (const headers of [asUser(ownerId), asAdmin()]) {
      const document = await createDocument(ownerId, [memberId])
      const answer = await inject('DELETE', `/api/v1/documents/${document.id}`, headers)
      expect(answer.statusCode).toBe(204)
      expectErrorEnvelope(
        await inject('GET', `/api/v1/documents/${document.id}`, asAdmin()),
        404,
        'NOT_FOUND',
      )
      const [left] = await gateway.sql<{ count: number }[]>`
        select count(*)::int as count from document_members where document_id = ${document.id}`
      expect(left?.count).toBe(0)
    }
  })

  it('when a member who is not the owner deletes it, then 403; a stranger 404; unknown 404; bad id 422; no credentials 401', async () => {
    const ownerId = randomUUID()
    const memberId = randomUUID()
    const document = await createDocument(ownerId, [memberId])
    const url = `/api/v1/documents/${document.id}`
    expectErrorEnvelope(await inject('DELETE', url, asUser(memberId)), 403, 'FORBIDDEN')
    expectErrorEnvelope(await inject('DELETE', url, asUser()), 404, 'NOT_FOUND')
    expectErrorEnvelope(
      await inject('DELETE', `/api/v1/documents/${randomUUID()}`, asAdmin()),
      404,
      'NOT_FOUND',
    )
    expectErrorEnvelope(await inject('DELETE', '/api/v1/documents/x', asAdmin()), 422, 'VALIDATION_ERROR')
    expectErrorEnvelope(await inject('DELETE', url, {}), 401, 'UNAUTHORIZED')
    expect((await inject('GET', url, asUser(ownerId))).statusCode).toBe(200)
  })
})
