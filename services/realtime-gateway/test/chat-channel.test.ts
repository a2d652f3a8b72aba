// The /chat namespace of a listening realtime-gateway, driven by real socket.io clients: joining (members only) with
// the history, messages stored and broadcast, invalid payloads, typing notices, and presence (user-joined once per
// user, user-left only when the offline grace ends, nothing for a reconnect within it), also across two instances.
import { randomUUID } from 'node:crypto'
import { realtimeMessages } from '@meridian/contracts'
import { accessToken, asUser, scaledMs } from '@meridian/testkit'
import type { Socket } from 'socket.io-client'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { useCasesOf } from './support/collaboration.ts'
import {
  connect,
  heard,
  nextEvent,
  type RealtimeInstance,
  send,
  startRealtime,
  until,
} from './support/realtime.ts'

// long enough that a client reconnects within it on a loaded machine too (a close, a new connection, a join: well
// under a second with both cores held by busy loops; 1.5 s was a narrower margin than a loaded CI run can promise);
// the pauses below are timers of this process set after the instances' own, so they end after them
const graceMs = 3000
const username = 'user of the tests'

let realtime: RealtimeInstance
let other: RealtimeInstance
const sockets: Socket[] = []

beforeAll(async () => {
  realtime = await startRealtime({ REALTIME_OFFLINE_GRACE_MS: String(graceMs) })
  other = await startRealtime({ REALTIME_OFFLINE_GRACE_MS: String(graceMs) }, { sharing: realtime })
})

afterEach(() => {
  for (const socket of sockets.splice(0)) socket.close()
})

afterAll(async () => {
  await other?.close()
  await realtime?.close()
})

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** A room created over HTTP by `ownerId`, with `members` added. */
async function createRoom(ownerId: string, members: string[] = []): Promise<string> {
  const created = await realtime.app.inject({
    method: 'POST',
    url: '/api/v1/chat/rooms',
    headers: asUser(ownerId),
    payload: { name: 'Room' },
  })
  expect(created.statusCode).toBe(201)
  const roomId = created.json().id as string
  for (const userId of members) {
    const added = await realtime.app.inject({
      method: 'POST',
      url: `/api/v1/chat/rooms/${roomId}/members`,
      headers: asUser(ownerId),
      payload: { userId },
    })
    expect(added.statusCode).toBe(201)
  }
  return roomId
}

/** A socket of the user on /chat (of `instance`), closed after the test. */
async function chatSocket(userId: string, instance: RealtimeInstance = realtime): Promise<Socket> {
  const socket = await connect(instance.url, '/chat', { token: accessToken('user', userId) })
  sockets.push(socket)
  return socket
}

const join = async (socket: Socket, roomId: string) => {
  const answer = await send(socket, 'chat:join', { roomId })
  expect(answer.ok, JSON.stringify(answer)).toBe(true)
  return answer
}

describe('chat:join', () => {
  it('when a user who is not a member joins (or the room does not exist), then error {message} and a refused ack', async () => {
    const roomId = await createRoom(randomUUID())
    const stranger = await chatSocket(randomUUID())
    const errors = heard(stranger, 'error')
    const histories = heard(stranger, 'chat:history')
    for (const room of [roomId, randomUUID()]) {
      const answer = await send(stranger, 'chat:join', { roomId: room })
      expect(answer).toEqual({
        ok: false,
        error: { message: realtimeMessages.notRoomMember, code: 'FORBIDDEN' },
      })
    }
    expect(await until(errors, 2)).toEqual([
      { message: 'Not a member of this room', code: 'FORBIDDEN' },
      { message: 'Not a member of this room', code: 'FORBIDDEN' },
    ])
    // and the refused socket hears nothing of the room
    expect(histories).toEqual([])
  })

  it('when the roomId is not a uuid, then error VALIDATION_ERROR with details', async () => {
    const socket = await chatSocket(randomUUID())
    const error = nextEvent(socket, 'error')
    const answer = await send(socket, 'chat:join', { roomId: 'general' })
    const expected = {
      code: 'VALIDATION_ERROR',
      message: 'Invalid message format',
      details: [expect.objectContaining({ field: 'roomId' })],
    }
    expect(await error).toEqual(expected)
    expect(answer).toEqual({ ok: false, error: expected })
  })

  it('when a member joins, then chat:history holds the last 50 messages oldest first, and the ack the history and who is online', async () => {
    const ownerId = randomUUID()
    const roomId = await createRoom(ownerId)
    const { chat } = useCasesOf(realtime)
    for (let index = 0; index < 55; index += 1) {
      await chat.postMessage({ userId: ownerId, username: 'earlier' }, roomId, `message ${index}`)
    }
    const socket = await chatSocket(ownerId)
    const history = nextEvent<{ roomId: string; messages: { text: string }[] }>(socket, 'chat:history')
    const answer = await join(socket, roomId)

    const event = await history
    expect(event.roomId).toBe(roomId)
    expect(event.messages.map((message) => message.text)).toEqual(
      Array.from({ length: 50 }, (_, index) => `message ${index + 5}`),
    )
    expect(event.messages[0]).toEqual({
      id: expect.any(String),
      roomId,
      userId: ownerId,
      username: 'earlier',
      text: 'message 5',
      createdAt: expect.any(String),
    })
    expect(answer).toEqual({ ok: true, history: event, online: [{ roomId, userId: ownerId, username }] })
  })
})

describe('chat:message', () => {
  it('when a member sends a message, then it is stored and every socket in the room, the sender too, gets the record', async () => {
    const [ownerId, memberId] = [randomUUID(), randomUUID()]
    const roomId = await createRoom(ownerId, [memberId])
    const sender = await chatSocket(ownerId)
    const receiver = await chatSocket(memberId)
    await join(sender, roomId)
    await join(receiver, roomId)
    const outsider = await chatSocket(randomUUID())
    const outsiderHeard = heard(outsider, 'chat:message')

    const received = nextEvent(receiver, 'chat:message')
    const echoed = nextEvent(sender, 'chat:message')
    const answer = await send(sender, 'chat:message', { roomId, text: 'Hello, room' })

    const record = {
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      roomId,
      userId: ownerId,
      username,
      text: 'Hello, room',
      createdAt: expect.any(String),
    }
    const message = await received
    expect(message).toEqual(record)
    expect(await echoed).toEqual(message)
    expect(answer).toEqual({ ok: true, message })
    const [stored] = await realtime.sql<{ userId: string; text: string }[]>`
      select user_id, text from chat_messages where id = ${(message as { id: string }).id}`
    expect(stored).toEqual({ userId: ownerId, text: 'Hello, room' })
    // a pause (scaled) before the absence is read: nothing can be waited for that does not come
    await sleep(scaledMs(100))
    expect(outsiderHeard).toEqual([])
  })

  it('when the message is invalid (empty, over 5000 characters, no roomId, extra fields, NUL), then error VALIDATION_ERROR with details', async () => {
    const ownerId = randomUUID()
    const roomId = await createRoom(ownerId)
    const socket = await chatSocket(ownerId)
    await join(socket, roomId)
    const messages = heard(socket, 'chat:message')
    for (const [payload, field] of [
      [{ roomId, text: '' }, 'text'],
      [{ roomId, text: 'x'.repeat(5001) }, 'text'],
      [{ text: 'hello' }, 'payload'],
      [{ roomId, text: 'hello', color: 'red' }, 'payload'],
      ['hello', 'payload'],
      [{ roomId, text: 'a\u0000b' }, 'text'],
    ] as const) {
      const error = nextEvent<{ details: { field: string }[] }>(socket, 'error')
      const answer = await send(socket, 'chat:message', payload)
      const event = await error
      expect(event, JSON.stringify(payload).slice(0, 80)).toMatchObject({
        code: 'VALIDATION_ERROR',
        message: 'Invalid message format',
        details: expect.arrayContaining([expect.objectContaining({ field })]),
      })
      expect(answer).toEqual({ ok: false, error: event })
    }
    // 5000 characters is the most a message may have
    expect((await send(socket, 'chat:message', { roomId, text: 'y'.repeat(5000) })).ok).toBe(true)
    expect((await until(messages, 1)).map((message) => (message as { text: string }).text.length)).toEqual([
      5000,
    ])
  })

  it('when the sender did not join the room, or was removed from it over REST (its socket left the room), then the message is refused and not stored', async () => {
    const [ownerId, memberId] = [randomUUID(), randomUUID()]
    const roomId = await createRoom(ownerId, [memberId])
    const member = await chatSocket(memberId)
    expect(await send(member, 'chat:message', { roomId, text: 'not joined' })).toEqual({
      ok: false,
      error: { message: 'Join the room first', code: 'FORBIDDEN' },
    })
    await join(member, roomId)
    const removed = await realtime.app.inject({
      method: 'DELETE',
      url: `/api/v1/chat/rooms/${roomId}/members/${memberId}`,
      headers: asUser(ownerId),
    })
    expect(removed.statusCode).toBe(204)
    expect(await send(member, 'chat:message', { roomId, text: 'removed' })).toEqual({
      ok: false,
      error: { message: 'Join the room first', code: 'FORBIDDEN' },
    })
    const [count] = await realtime.sql<{ count: number }[]>`
      select count(*)::int as count from chat_messages where room_id = ${roomId}`
    expect(count?.count).toBe(0)
  })
})

describe('chat:typing', () => {
  it('when a member types, then the others in the room hear it and the sender does not; in a room not joined it is ignored', async () => {
    const [ownerId, memberId] = [randomUUID(), randomUUID()]
    const roomId = await createRoom(ownerId, [memberId])
    const otherRoom = await createRoom(ownerId)
    const typist = await chatSocket(ownerId)
    const reader = await chatSocket(memberId)
    await join(typist, roomId)
    await join(reader, roomId)
    const typistHeard = heard(typist, 'chat:typing')
    const readerHeard = heard(reader, 'chat:typing')

    typist.emit('chat:typing', { roomId: otherRoom, isTyping: true })
    const typing = nextEvent(reader, 'chat:typing')
    typist.emit('chat:typing', { roomId, isTyping: true })
    expect(await typing).toEqual({ roomId, userId: ownerId, username, isTyping: true })
    typist.emit('chat:typing', { roomId, isTyping: false })
    await until(readerHeard, 2)
    expect(readerHeard).toEqual([
      { roomId, userId: ownerId, username, isTyping: true },
      { roomId, userId: ownerId, username, isTyping: false },
    ])
    expect(typistHeard).toEqual([])
  })
})

describe('presence', () => {
  it('when a member joins, then the others hear chat:user-joined once, not again for their second tab', async () => {
    const [ownerId, memberId, laterId] = [randomUUID(), randomUUID(), randomUUID()]
    const roomId = await createRoom(ownerId, [memberId, laterId])
    const owner = await chatSocket(ownerId)
    await join(owner, roomId)
    const joined = heard(owner, 'chat:user-joined')

    const firstTab = await chatSocket(memberId)
    const firstTabHeard = heard(firstTab, 'chat:user-joined')
    const answer = await join(firstTab, roomId)
    expect(answer.online).toEqual(
      expect.arrayContaining([
        { roomId, userId: ownerId, username },
        { roomId, userId: memberId, username },
      ]),
    )
    const secondTab = await chatSocket(memberId, other)
    await join(secondTab, roomId)
    // joining again from the same socket changes nothing either
    await join(firstTab, roomId)
    // another member joins after, on the second tab's instance: its notices reach the owner in the order they were
    // sent (the first tab's own instance tells the owner at once), so any for the tabs would have come before
    await join(await chatSocket(laterId, other), roomId)
    await until(joined, 2)
    expect(joined).toEqual([
      { roomId, userId: memberId, username },
      { roomId, userId: laterId, username },
    ])
    // the member hears the later one, and nothing of their own tabs
    await until(firstTabHeard, 1)
    expect(firstTabHeard).toEqual([{ roomId, userId: laterId, username }])
  })

  it('when a member’s last socket leaves, then chat:user-left comes only after the offline grace, once, across instances', async () => {
    const [ownerId, memberId] = [randomUUID(), randomUUID()]
    const roomId = await createRoom(ownerId, [memberId])
    const owner = await chatSocket(ownerId)
    await join(owner, roomId)
    const left = heard(owner, 'chat:user-left')
    const member = await chatSocket(memberId, other)
    await join(member, roomId)

    const leftAt = Date.now()
    member.close()
    const event = await nextEvent(owner, 'chat:user-left')
    expect(Date.now() - leftAt).toBeGreaterThanOrEqual(graceMs)
    expect(event).toEqual({ roomId, userId: memberId, username })
    // both instances sweep: still only one notice
    await sleep(graceMs * 2)
    expect(left).toEqual([{ roomId, userId: memberId, username }])

    // no longer online; still a member (the right to join is not dropped): joining again tells the room again
    const back = await chatSocket(memberId)
    const joined = nextEvent(owner, 'chat:user-joined')
    const answer = await join(back, roomId)
    expect(await joined).toEqual({ roomId, userId: memberId, username })
    expect(answer.online).toEqual(expect.arrayContaining([{ roomId, userId: memberId, username }]))
  })

  it('when a member reconnects within the grace, then nobody hears anything; chat:leave starts the grace too', async () => {
    const [ownerId, memberId] = [randomUUID(), randomUUID()]
    const roomId = await createRoom(ownerId, [memberId])
    const owner = await chatSocket(ownerId)
    await join(owner, roomId)
    const notices = ['chat:user-left', 'chat:user-joined'].map((event) => heard(owner, event))
    const member = await chatSocket(memberId)
    await join(member, roomId)
    await until(notices[1] ?? [], 1)
    for (const list of notices) list.splice(0)

    member.close()
    const again = await chatSocket(memberId, other)
    await join(again, roomId)
    await sleep(graceMs * 2)
    expect(notices).toEqual([[], []])

    // a leave, then the grace: the user leaves the room
    expect(await send(again, 'chat:leave', { roomId })).toEqual({ ok: true })
    expect(await nextEvent(owner, 'chat:user-left')).toEqual({ roomId, userId: memberId, username })
    const afterLeave = heard(owner, 'chat:message')
    expect((await send(again, 'chat:message', { roomId, text: 'gone' })).ok).toBe(false)
    // a pause (scaled) before the absence is read: nothing can be waited for that does not come
    await sleep(scaledMs(100))
    expect(afterLeave).toEqual([])
  })
})
