// Memberships that end while sockets are in the rooms, on two instances of one channel with real socket.io clients: a
// member removed from a chat room or a document over REST, a document deleted. Their sockets leave the room on both
// instances within a second and hear nothing of it after; a socket recovered after a short disconnection is not put
// back into a room it lost meanwhile.
import { randomUUID } from 'node:crypto'
import { accessToken, asUser, eventually } from '@meridian/testkit'
import { io, type Socket } from 'socket.io-client'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  type Answer,
  connect,
  heard,
  loseTransport,
  nextEvent,
  pointAt,
  type RealtimeInstance,
  recoveringClient,
  send,
  socketKeeper,
  someAddress,
  startRealtime,
  until,
} from './support/realtime.ts'

const { keep, closeAll } = socketKeeper()
let a: RealtimeInstance
let b: RealtimeInstance

beforeAll(async () => {
  a = await startRealtime()
  b = await startRealtime({}, { sharing: a })
})
afterAll(async () => {
  closeAll()
  await b?.close()
  await a?.close()
})

/** A resource (chat room or document) made over REST by `ownerId`, with `members` added; its id. */
async function created(
  kind: 'chat/rooms' | 'documents',
  ownerId: string,
  members: string[],
): Promise<string> {
  const payload = kind === 'chat/rooms' ? { name: 'Room' } : { title: 'Doc', content: 'abc' }
  const made = await a.app.inject({
    method: 'POST',
    url: `/api/v1/${kind}`,
    headers: asUser(ownerId),
    payload,
  })
  expect(made.statusCode).toBe(201)
  const id = made.json().id as string
  for (const userId of members) {
    const added = await a.app.inject({
      method: 'POST',
      url: `/api/v1/${kind}/${id}/members`,
      headers: asUser(ownerId),
      payload: { userId },
    })
    expect(added.statusCode).toBe(201)
  }
  return id
}

async function removed(kind: 'chat/rooms' | 'documents', id: string, ownerId: string, userId: string) {
  const answer = await a.app.inject({
    method: 'DELETE',
    url: `/api/v1/${kind}/${id}/members/${userId}`,
    headers: asUser(ownerId),
  })
  expect(answer.statusCode).toBe(204)
}

const joined = async (
  socket: Socket,
  event: 'chat:join' | 'collab:join',
  payload: object,
): Promise<Answer> => {
  const answer = await send(socket, event, payload)
  expect(answer.ok, JSON.stringify(answer)).toBe(true)
  return answer
}

/** Whether the socket (its id) is in the room on the instance, as the server holds it. */
const inRoom = (instance: RealtimeInstance, path: '/chat' | '/collab', room: string, socket: Socket) =>
  instance.app.realtime
    .namespace(path)
    .adapter.rooms.get(room)
    ?.has(socket.id ?? '') === true

/** Until none of the sockets is in the room on its instance: within a second of the change. */
const leftWithinASecond = (path: '/chat' | '/collab', room: string, held: [RealtimeInstance, Socket][]) =>
  eventually(
    `every socket left ${room}`,
    () => held.every(([instance, socket]) => !inRoom(instance, path, room, socket)),
    undefined,
    10,
  )

describe('chat rooms', () => {
  it('when a member is removed over REST, then their sockets leave the room on both instances within a second and hear none of its messages after; their other rooms stay', async () => {
    const [ownerId, memberId, stayingId] = [randomUUID(), randomUUID(), randomUUID()]
    const roomId = await created('chat/rooms', ownerId, [memberId, stayingId])
    const otherRoomId = await created('chat/rooms', ownerId, [memberId])
    const owner = keep(await connect(a.url, '/chat', { token: accessToken('user', ownerId) }))
    const memberOnA = keep(await connect(a.url, '/chat', { token: accessToken('user', memberId) }))
    const memberOnB = keep(await connect(b.url, '/chat', { token: accessToken('user', memberId) }))
    const staying = keep(await connect(b.url, '/chat', { token: accessToken('user', stayingId) }))
    for (const socket of [owner, memberOnA, memberOnB, staying]) await joined(socket, 'chat:join', { roomId })
    await joined(owner, 'chat:join', { roomId: otherRoomId })
    await joined(memberOnB, 'chat:join', { roomId: otherRoomId })
    const heardByMember = [
      heard<{ text: string }>(memberOnA, 'chat:message'),
      heard(memberOnB, 'chat:message'),
    ]
    const heardByStaying = heard<{ text: string }>(staying, 'chat:message')

    await removed('chat/rooms', roomId, ownerId, memberId)
    await leftWithinASecond('/chat', `chatroom:${roomId}`, [
      [a, memberOnA],
      [b, memberOnB],
    ])

    expect(await send(owner, 'chat:message', { roomId, text: 'after the removal' })).toMatchObject({
      ok: true,
    })
    // the member still in the room hears it (on B, as the removed member's second socket would): then nothing else
    // of it is on its way to B
    await until(heardByStaying, 1)
    expect(heardByStaying.map((message) => message.text)).toEqual(['after the removal'])
    expect(heardByMember).toEqual([[], []])
    // the removed member can no longer write there, and still hears the room they are in
    expect(await send(memberOnA, 'chat:message', { roomId, text: 'me again' })).toEqual({
      ok: false,
      error: { message: 'Join the room first', code: 'FORBIDDEN' },
    })
    const other = nextEvent<{ text: string }>(memberOnB, 'chat:message')
    expect(await send(owner, 'chat:message', { roomId: otherRoomId, text: 'other room' })).toMatchObject({
      ok: true,
    })
    expect((await other).text).toBe('other room')
  })
})

describe('documents', () => {
  it('when a member is removed over REST, then their sockets leave the document on both instances within a second and hear none of its edits after', async () => {
    const [ownerId, memberId, stayingId] = [randomUUID(), randomUUID(), randomUUID()]
    const docId = await created('documents', ownerId, [memberId, stayingId])
    const owner = keep(await connect(a.url, '/collab', { token: accessToken('user', ownerId) }))
    const memberOnA = keep(await connect(a.url, '/collab', { token: accessToken('user', memberId) }))
    const memberOnB = keep(await connect(b.url, '/collab', { token: accessToken('user', memberId) }))
    const staying = keep(await connect(b.url, '/collab', { token: accessToken('user', stayingId) }))
    for (const socket of [owner, memberOnA, memberOnB, staying])
      await joined(socket, 'collab:join', { docId })
    const editsOfMember = [heard(memberOnA, 'collab:remote-edit'), heard(memberOnB, 'collab:remote-edit')]
    const editsOfStaying = heard(staying, 'collab:remote-edit')

    await removed('documents', docId, ownerId, memberId)
    await leftWithinASecond('/collab', `doc:${docId}`, [
      [a, memberOnA],
      [b, memberOnB],
    ])

    const edit = { docId, operation: { type: 'insert', position: 0, text: 'x' }, baseVersion: 0 }
    expect(await send(owner, 'collab:edit', edit)).toEqual({ ok: true, version: 1 })
    await until(editsOfStaying, 1)
    expect(editsOfMember).toEqual([[], []])
    expect(await send(memberOnB, 'collab:edit', { ...edit, baseVersion: 1 })).toEqual({
      ok: false,
      error: { code: 'FORBIDDEN', message: 'Join the document first' },
    })
  })

  it('when the document is deleted, then every socket in it leaves on both instances within a second, its owner’s too', async () => {
    const [ownerId, memberId] = [randomUUID(), randomUUID()]
    const docId = await created('documents', ownerId, [memberId])
    const owner = keep(await connect(a.url, '/collab', { token: accessToken('user', ownerId) }))
    const member = keep(await connect(b.url, '/collab', { token: accessToken('user', memberId) }))
    for (const socket of [owner, member]) await joined(socket, 'collab:join', { docId })

    const deleted = await a.app.inject({
      method: 'DELETE',
      url: `/api/v1/documents/${docId}`,
      headers: asUser(ownerId),
    })
    expect(deleted.statusCode).toBe(204)
    await leftWithinASecond('/collab', `doc:${docId}`, [
      [a, owner],
      [b, member],
    ])
    expect(
      await send(owner, 'collab:edit', {
        docId,
        operation: { type: 'insert', position: 0, text: 'x' },
        baseVersion: 0,
      }),
    ).toEqual({
      ok: false,
      error: { code: 'FORBIDDEN', message: 'Join the document first' },
    })
  })
})

describe('connection-state recovery', () => {
  it('when a member is removed while their client is away, then it comes back as a new socket, not in the room, without what the room said meanwhile; a member still in it is recovered with it', async () => {
    const [ownerId, removedId, keptId] = [randomUUID(), randomUUID(), randomUUID()]
    const roomId = await created('chat/rooms', ownerId, [removedId, keptId])
    const owner = keep(await connect(a.url, '/chat', { token: accessToken('user', ownerId) }))
    await joined(owner, 'chat:join', { roomId })
    const clients = [
      keep(recoveringClient(a.url, '/chat', removedId)),
      keep(recoveringClient(a.url, '/chat', keptId)),
    ]
    const heardBy = clients.map((client) => heard<{ text: string }>(client, 'chat:message'))
    for (const client of clients) {
      await eventually('the client is connected', () => client.connected, undefined, 20)
      await joined(client, 'chat:join', { roomId })
    }
    // a message heard first: each client then has an offset in the channel's stream to resume from
    expect(await send(owner, 'chat:message', { roomId, text: 'before' })).toMatchObject({ ok: true })
    for (const messages of heardBy) await until(messages, 1)

    for (const client of clients) await loseTransport(client, a, '/chat')
    await removed('chat/rooms', roomId, ownerId, removedId)
    expect(await send(owner, 'chat:message', { roomId, text: 'while away' })).toMatchObject({ ok: true })

    // back, to the other instance; what a recovered socket missed is delivered before its connect event
    const [removedClient, keptClient] = clients as [Socket, Socket]
    const back = clients.map((client) => nextEvent(client, 'connect'))
    for (const client of clients) pointAt(client, b.url)
    await Promise.all(back)
    expect(removedClient.recovered).toBe(false)
    expect(heardBy[0]?.map((message) => message.text)).toEqual(['before'])
    expect(inRoom(b, '/chat', `chatroom:${roomId}`, removedClient)).toBe(false)
    expect(keptClient.recovered).toBe(true)
    await until(heardBy[1] ?? [], 2)
    expect(heardBy[1]?.map((message) => message.text)).toEqual(['before', 'while away'])
    expect(inRoom(b, '/chat', `chatroom:${roomId}`, keptClient)).toBe(true)
  })

  it("when a client comes back with another user's token, then its recovery is refused (Invalid or expired token) and it connects afresh as that user, in none of the first user's rooms", async () => {
    const [firstId, secondId] = [randomUUID(), randomUUID()]
    let userId = firstId
    const client = keep(
      io(a.url, {
        transports: ['websocket'],
        forceNew: true,
        reconnection: true,
        reconnectionDelay: 300,
        reconnectionDelayMax: 300,
        randomizationFactor: 0,
        // read at every connection: the second one presents the other user's token
        auth: (answer) => answer({ token: accessToken('user', userId) }),
        extraHeaders: { 'x-forwarded-for': someAddress() },
      }),
    )
    await eventually('the client is connected', () => client.connected, undefined, 20)
    // something heard, so that the client has an offset to resume from
    const echo = nextEvent(client, 'echo')
    client.emit('echo', 'offset')
    await echo

    userId = secondId
    const refused = nextEvent<Error>(client, 'connect_error')
    await loseTransport(client, a, '/', b)
    expect((await refused).message).toBe('Invalid or expired token')
    // a refusal by the server is not retried by itself: the application connects again (the session is spent)
    client.connect()
    await nextEvent(client, 'connect')
    expect(client.recovered).toBe(false)
    const rooms = b.app.realtime.namespace('/').adapter.rooms
    expect(rooms.get(`user:${firstId}`)?.has(client.id ?? '') === true).toBe(false)
    expect(rooms.get(`user:${secondId}`)?.has(client.id ?? '')).toBe(true)
  })
})
