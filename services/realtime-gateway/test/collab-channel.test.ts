// The /collab namespace of listening realtime-gateways, driven by real socket.io clients: opening a document (members
// only) with its state, who is in it, edits applied and sent to the others, conflicts on a stale version, invalid
// operations, and two editors on two instances racing for the same version (exactly one wins).
import { randomUUID } from 'node:crypto'
import { accessToken, asUser, scaledMs } from '@meridian/testkit'
import type { Socket } from 'socket.io-client'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import {
  type Answer,
  connect,
  heard,
  nextEvent,
  type RealtimeInstance,
  send,
  startRealtime,
  until,
} from './support/realtime.ts'

const username = 'user of the tests'

let realtime: RealtimeInstance
let other: RealtimeInstance
const sockets: Socket[] = []

beforeAll(async () => {
  realtime = await startRealtime()
  other = await startRealtime({}, { sharing: realtime })
})

afterEach(() => {
  for (const socket of sockets.splice(0)) socket.close()
})

afterAll(async () => {
  await other?.close()
  await realtime?.close()
})

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** A document created over HTTP by `ownerId` with `content`, with `members` added. */
async function createDocument(ownerId: string, content: string, members: string[] = []): Promise<string> {
  const created = await realtime.app.inject({
    method: 'POST',
    url: '/api/v1/documents',
    headers: asUser(ownerId),
    payload: { title: 'Draft', content },
  })
  expect(created.statusCode).toBe(201)
  const docId = created.json().id as string
  for (const userId of members) {
    const added = await realtime.app.inject({
      method: 'POST',
      url: `/api/v1/documents/${docId}/members`,
      headers: asUser(ownerId),
      payload: { userId },
    })
    expect(added.statusCode).toBe(201)
  }
  return docId
}

async function collabSocket(userId: string, instance: RealtimeInstance = realtime): Promise<Socket> {
  const socket = await connect(instance.url, '/collab', { token: accessToken('user', userId) })
  sockets.push(socket)
  return socket
}

async function open(socket: Socket, docId: string): Promise<Answer> {
  const answer = await send(socket, 'collab:join', { docId })
  expect(answer.ok, JSON.stringify(answer)).toBe(true)
  return answer
}

async function stored(docId: string): Promise<{ content: string; version: number } | undefined> {
  const [row] = await realtime.sql<{ content: string; version: number }[]>`
    select content, version from documents where id = ${docId}`
  return row
}

type Users = { id: string; username: string }[]
const byId = (users: Users) => [...users].sort((a, b) => a.id.localeCompare(b.id))

describe('collab:join', () => {
  it('when a member opens the document, then collab:init has its content and version, and the ack its state', async () => {
    const ownerId = randomUUID()
    const docId = await createDocument(ownerId, 'Hello')
    const socket = await collabSocket(ownerId)
    const init = nextEvent(socket, 'collab:init')
    const users = nextEvent(socket, 'collab:users')
    const answer = await open(socket, docId)
    const state = { docId, content: 'Hello', version: 0 }
    expect(await init).toEqual(state)
    expect(answer).toEqual({ ok: true, state })
    expect(await users).toEqual([{ id: ownerId, username }])
  })

  it('when a user who is not a member opens it (or it does not exist), then error {message} and a refused ack; a bad docId 422-like VALIDATION_ERROR', async () => {
    const docId = await createDocument(randomUUID(), 'secret')
    const stranger = await collabSocket(randomUUID())
    const errors = heard(stranger, 'error')
    const inits = heard(stranger, 'collab:init')
    const refusal = { message: 'Not a member of this document', code: 'FORBIDDEN' }
    expect(await send(stranger, 'collab:join', { docId })).toEqual({ ok: false, error: refusal })
    expect(await send(stranger, 'collab:join', { docId: randomUUID() })).toEqual({
      ok: false,
      error: refusal,
    })
    const invalid = await send(stranger, 'collab:join', { docId: 'draft' })
    expect(invalid).toEqual({
      ok: false,
      error: {
        code: 'VALIDATION_ERROR',
        message: 'Invalid message format',
        details: [expect.objectContaining({ field: 'docId' })],
      },
    })
    expect(await until(errors, 3)).toEqual([refusal, refusal, invalid.error])
    expect(inits).toEqual([])
  })

  it('when members join, leave and disconnect, then everyone in the document gets the distinct users, across instances', async () => {
    const [ownerId, memberId] = [randomUUID(), randomUUID()]
    const docId = await createDocument(ownerId, '', [memberId])
    const owner = await collabSocket(ownerId)
    const ownerHeard = heard<Users>(owner, 'collab:users')
    await open(owner, docId)
    await until(ownerHeard, 1)

    const member = await collabSocket(memberId, other)
    const memberUsers = nextEvent<Users>(member, 'collab:users')
    await open(member, docId)
    const both = byId([
      { id: ownerId, username },
      { id: memberId, username },
    ])
    expect(byId(await memberUsers)).toEqual(both)
    expect(byId((await until(ownerHeard, 2))[1] ?? [])).toEqual(both)

    // a second tab of the member: still two users
    const secondTab = await collabSocket(memberId)
    await open(secondTab, docId)
    expect(byId((await until(ownerHeard, 3))[2] ?? [])).toEqual(both)

    // one tab leaves: the member is still there; the other disconnects: only the owner is left
    expect(await send(secondTab, 'collab:leave', { docId })).toEqual({ ok: true })
    expect(byId((await until(ownerHeard, 4))[3] ?? [])).toEqual(both)
    member.close()
    expect((await until(ownerHeard, 5))[4]).toEqual([{ id: ownerId, username }])
  })
})

describe('collab:edit', () => {
  it('when a member edits on the current version, then the ack has the new version, the others get collab:remote-edit, and it is stored', async () => {
    const [ownerId, memberId] = [randomUUID(), randomUUID()]
    const docId = await createDocument(ownerId, 'Hello', [memberId])
    const editor = await collabSocket(ownerId)
    const reader = await collabSocket(memberId, other)
    await open(editor, docId)
    await open(reader, docId)
    const editorHeard = heard(editor, 'collab:remote-edit')
    const readerHeard = heard(reader, 'collab:remote-edit')

    const insert = { type: 'insert', position: 5, text: ', world' }
    expect(await send(editor, 'collab:edit', { docId, operation: insert, baseVersion: 0 })).toEqual({
      ok: true,
      version: 1,
    })
    const remove = { type: 'delete', position: 0, length: 1 }
    expect(await send(editor, 'collab:edit', { docId, operation: remove, baseVersion: 1 })).toEqual({
      ok: true,
      version: 2,
    })
    expect(await until(readerHeard, 2)).toEqual([
      { docId, userId: ownerId, username, operation: insert, newVersion: 1 },
      { docId, userId: ownerId, username, operation: remove, newVersion: 2 },
    ])
    expect(await stored(docId)).toEqual({ content: 'ello, world', version: 2 })
    // a pause (scaled) before an absence is read: nothing can be waited for that does not come
    await sleep(scaledMs(100))
    expect(editorHeard).toEqual([])

    // whoever opens it now starts from there
    const late = await collabSocket(memberId)
    expect((await open(late, docId)).state).toEqual({ docId, content: 'ello, world', version: 2 })
  })

  it('when the edit was made on a stale version, then collab:conflict with the server’s version and content, a refused ack, nothing applied', async () => {
    const ownerId = randomUUID()
    const docId = await createDocument(ownerId, 'abc')
    const socket = await collabSocket(ownerId)
    await open(socket, docId)
    expect(
      (
        await send(socket, 'collab:edit', {
          docId,
          operation: { type: 'insert', position: 3, text: 'd' },
          baseVersion: 0,
        })
      ).ok,
    ).toBe(true)

    const conflict = nextEvent(socket, 'collab:conflict')
    const answer = await send(socket, 'collab:edit', {
      docId,
      operation: { type: 'delete', position: 0, length: 1 },
      baseVersion: 0,
    })
    expect(await conflict).toEqual({ docId, serverVersion: 1, serverContent: 'abcd' })
    expect(answer).toEqual({
      ok: false,
      error: { code: 'CONFLICT', message: 'The document is at version 1, not 0' },
    })
    // a version from the future is stale too
    const future = nextEvent(socket, 'collab:conflict')
    expect(
      (
        await send(socket, 'collab:edit', {
          docId,
          operation: { type: 'insert', position: 0, text: 'x' },
          baseVersion: 7,
        })
      ).ok,
    ).toBe(false)
    expect(await future).toEqual({ docId, serverVersion: 1, serverContent: 'abcd' })
    expect(await stored(docId)).toEqual({ content: 'abcd', version: 1 })
  })

  it('when the operation does not fit the content or its schema, then error VALIDATION_ERROR with details, nothing applied', async () => {
    const ownerId = randomUUID()
    const docId = await createDocument(ownerId, 'abc')
    const socket = await collabSocket(ownerId)
    await open(socket, docId)
    const errors = heard(socket, 'error')
    for (const [operation, field, message] of [
      [{ type: 'insert', position: 4, text: 'x' }, 'operation.position', 'Invalid edit operation'],
      [{ type: 'delete', position: 2, length: 2 }, 'operation.length', 'Invalid edit operation'],
      [{ type: 'delete', position: 0, length: 0 }, 'operation', 'Invalid message format'],
      [{ type: 'insert', position: -1, text: 'x' }, 'operation', 'Invalid message format'],
      [{ type: 'insert', position: 0, text: '' }, 'operation', 'Invalid message format'],
      [{ type: 'replace', position: 0, text: 'x' }, 'operation', 'Invalid message format'],
    ] as const) {
      const answer = await send(socket, 'collab:edit', { docId, operation, baseVersion: 0 })
      expect(answer, JSON.stringify(operation)).toEqual({
        ok: false,
        error: {
          code: 'VALIDATION_ERROR',
          message,
          details: expect.arrayContaining([
            expect.objectContaining({ field: expect.stringContaining(field) }),
          ]),
        },
      })
    }
    expect(await until(errors, 6)).toHaveLength(6)
    expect(await stored(docId)).toEqual({ content: 'abc', version: 0 })
  })

  it('when an edit would make the content longer than 1 000 000 characters, then VALIDATION_ERROR; up to it, applied', async () => {
    const ownerId = randomUUID()
    const docId = await createDocument(ownerId, 'x'.repeat(999_998))
    const socket = await collabSocket(ownerId)
    await open(socket, docId)
    const tooLong = await send(socket, 'collab:edit', {
      docId,
      operation: { type: 'insert', position: 0, text: 'abc' },
      baseVersion: 0,
    })
    expect(tooLong).toMatchObject({
      ok: false,
      error: { code: 'VALIDATION_ERROR', details: [{ field: 'operation.text' }] },
    })
    expect(
      await send(socket, 'collab:edit', {
        docId,
        operation: { type: 'insert', position: 0, text: 'ab' },
        baseVersion: 0,
      }),
    ).toEqual({ ok: true, version: 1 })
    expect((await stored(docId))?.content.length).toBe(1_000_000)
  })

  it('when the socket did not open the document, or its member was removed meanwhile (the socket left it), then the edit is refused', async () => {
    const [ownerId, memberId] = [randomUUID(), randomUUID()]
    const docId = await createDocument(ownerId, 'abc', [memberId])
    const member = await collabSocket(memberId)
    const edit = { docId, operation: { type: 'insert', position: 0, text: 'x' }, baseVersion: 0 }
    expect(await send(member, 'collab:edit', edit)).toEqual({
      ok: false,
      error: { code: 'FORBIDDEN', message: 'Join the document first' },
    })
    await open(member, docId)
    const removed = await realtime.app.inject({
      method: 'DELETE',
      url: `/api/v1/documents/${docId}/members/${memberId}`,
      headers: asUser(ownerId),
    })
    expect(removed.statusCode).toBe(204)
    expect(await send(member, 'collab:edit', edit)).toEqual({
      ok: false,
      error: { code: 'FORBIDDEN', message: 'Join the document first' },
    })
    expect(await stored(docId)).toEqual({ content: 'abc', version: 0 })
  })

  it('when two editors on two instances edit the same version at once, then exactly one edit is applied and the other gets collab:conflict', async () => {
    const [firstId, secondId] = [randomUUID(), randomUUID()]
    const docId = await createDocument(firstId, 'base', [secondId])
    const first = await collabSocket(firstId, realtime)
    const second = await collabSocket(secondId, other)
    await open(first, docId)
    await open(second, docId)
    const conflicts = [heard(first, 'collab:conflict'), heard(second, 'collab:conflict')]

    // several rounds, each on the version the last one left
    for (let round = 0; round < 5; round += 1) {
      const before = await stored(docId)
      if (!before) throw new Error('document gone')
      const answers = await Promise.all([
        send(first, 'collab:edit', {
          docId,
          operation: { type: 'insert', position: 0, text: `A${round}` },
          baseVersion: before.version,
        }),
        send(second, 'collab:edit', {
          docId,
          operation: { type: 'insert', position: before.content.length, text: `B${round}` },
          baseVersion: before.version,
        }),
      ])
      const applied = answers.filter((answer) => answer.ok)
      expect(applied, `round ${round}`).toEqual([{ ok: true, version: before.version + 1 }])
      const loser = answers.findIndex((answer) => !answer.ok)
      expect(answers[loser]).toMatchObject({ ok: false, error: { code: 'CONFLICT' } })
      const after = await stored(docId)
      expect(after?.version).toBe(before.version + 1)
      const winnerText = loser === 0 ? `${before.content}B${round}` : `A${round}${before.content}`
      expect(after?.content, `round ${round}`).toBe(winnerText)
      // the loser's conflict carries the state the winner left
      const loserConflicts = conflicts[loser] ?? []
      await until(loserConflicts, 1)
      expect(loserConflicts.splice(0)).toEqual([
        { docId, serverVersion: after?.version, serverContent: after?.content },
      ])
    }
    expect((await stored(docId))?.version).toBe(5)
  })
})
