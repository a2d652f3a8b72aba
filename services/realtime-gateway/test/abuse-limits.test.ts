// The channel's abuse limits against a listening instance (and a second one of the same channel), with real clients:
// a flood of events refused with RATE_LIMITED then disconnected while another socket goes on, a user's events counted
// across connections and instances, the cap on rooms per socket, the size of the default namespace's broadcasts and of
// an edit's text, a user's chat messages, and /ws under the same rules.
import { randomUUID } from 'node:crypto'
import {
  rateLimitedCloseCode,
  realtimeErrorCodes,
  realtimeLimits,
  realtimeMessages,
} from '@meridian/contracts'
import { accessToken, asUser, eventually } from '@meridian/testkit'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { tooManyMessages } from '../src/channels/chat.ts'
import { openRaw, type RawClient } from './support/raw-socket.ts'
import {
  connect,
  heard,
  nextEvent,
  type RealtimeInstance,
  send,
  socketKeeper,
  startRealtime,
  until,
} from './support/realtime.ts'

const { keep, closeAll } = socketKeeper()
const raws: RawClient[] = []
let a: RealtimeInstance
let b: RealtimeInstance

/** Small limits, so that a test reaches them at once; the user's window long, so that no test straddles two. */
const limitsEnv = {
  REALTIME_EVENTS_PER_SECOND: '5',
  REALTIME_EVENT_BURST: '10',
  REALTIME_REFUSALS_BEFORE_DISCONNECT: '5',
  REALTIME_USER_EVENTS_PER_WINDOW: '12',
  REALTIME_USER_EVENTS_WINDOW_MS: '60000',
  REALTIME_LIMITS_SYNC_MS: '10',
  REALTIME_MAX_ROOMS_PER_SOCKET: '3',
  REALTIME_CHAT_MESSAGES_PER_WINDOW: '3',
  REALTIME_CHAT_MESSAGES_WINDOW_MS: '60000',
}

beforeAll(async () => {
  a = await startRealtime(limitsEnv)
  b = await startRealtime(limitsEnv, { sharing: a })
})
afterAll(async () => {
  closeAll()
  for (const raw of raws) raw.socket.terminate()
  await b?.close()
  await a?.close()
})

const rateLimited = {
  code: 'RATE_LIMITED',
  message: realtimeMessages.rateLimited,
  retryAfter: expect.any(Number),
}

async function chatRoom(ownerId: string): Promise<string> {
  const made = await a.app.inject({
    method: 'POST',
    url: '/api/v1/chat/rooms',
    headers: asUser(ownerId),
    payload: { name: 'Room' },
  })
  expect(made.statusCode).toBe(201)
  return made.json().id as string
}

describe('event rates', () => {
  it('when one socket floods, then the events past its burst get error RATE_LIMITED and are not handled, and it is disconnected at the 5th refusal; another socket goes on', async () => {
    const flooder = keep(await connect(a.url, '/'))
    const bystander = keep(await connect(a.url, '/'))
    const echoes = heard(flooder, 'echo')
    const errors = heard<Record<string, unknown>>(flooder, 'error')
    const gone = nextEvent<string>(flooder, 'disconnect')

    for (let n = 0; n < 100; n++) flooder.emit('echo', n)

    expect(await gone).toBe('io server disconnect')
    await until(errors, 5)
    expect(errors).toEqual([
      rateLimited,
      rateLimited,
      rateLimited,
      rateLimited,
      { ...rateLimited, message: realtimeMessages.floodDisconnect },
    ])
    expect(errors[0]?.retryAfter).toBeGreaterThanOrEqual(1)
    // at most the burst (and what the rate refilled meanwhile) was let through; what it had not answered yet when the
    // connection was closed is not answered at all
    expect(echoes.length).toBeLessThanOrEqual(11)
    expect(await send(bystander, 'echo', 'unaffected')).toEqual({
      ok: true,
      echo: { type: 'echo', payload: 'unaffected' },
    })
  })

  it('when a refused event asked for an ack, then the ack is refused with RATE_LIMITED and the event is not handled: a broadcast refused reaches nobody', async () => {
    const sender = keep(await connect(a.url, '/'))
    const observer = keep(await connect(b.url, '/'))
    const marker = keep(await connect(a.url, '/'))
    const messages = heard<{ text: string }>(observer, 'new_message')

    const answers = await Promise.all(
      Array.from({ length: 12 }, (_, n) => send(sender, 'message', { text: `flood ${n}` })),
    )
    const refusals = answers.filter((answer) => !answer.ok)
    expect(answers.filter((answer) => answer.ok).length).toBeGreaterThanOrEqual(10)
    expect(refusals.length).toBeGreaterThanOrEqual(1)
    for (const refusal of refusals) expect(refusal).toEqual({ ok: false, error: rateLimited })

    // a message sent after them all: the observer hears exactly the accepted ones before it
    expect(await send(marker, 'message', { text: 'marker' })).toMatchObject({ ok: true })
    await eventually('the marker arrives', () => messages.some((m) => m.text === 'marker'), undefined, 20)
    expect(messages.length).toBe(12 - refusals.length + 1)
    expect(sender.connected).toBe(true)
  })

  it('when one user sends over two connections on two instances, then their events count together: past 12 in the window, refused with RATE_LIMITED', async () => {
    const userId = randomUUID()
    const onA = keep(await connect(a.url, '/', { token: accessToken('user', userId) }))
    const onB = keep(await connect(b.url, '/', { token: accessToken('user', userId) }))
    // each connection stays within its own burst (10): only the user's count can refuse
    for (let n = 0; n < 8; n++) expect((await send(onA, 'echo', n)).ok).toBe(true)
    await eventually(
      'instance A has settled the user’s count with Redis',
      async () => Number(await a.redis.get(`${a.config.REALTIME_REDIS_PREFIX}user-events:${userId}`)) >= 8,
      undefined,
      20,
    )
    const onBAnswers = []
    for (let n = 0; n < 6; n++) onBAnswers.push(await send(onB, 'echo', n))
    expect(onBAnswers.map((answer) => answer.ok)).toEqual([true, true, true, true, false, false])
    expect(onBAnswers[4]).toEqual({ ok: false, error: rateLimited })
    expect(onBAnswers[4]?.error).toMatchObject({ retryAfter: expect.any(Number) })
    expect((onBAnswers[4]?.error as { retryAfter?: number } | undefined)?.retryAfter).toBeGreaterThan(1)
    // another user is not counted with them
    const other = keep(await connect(b.url, '/'))
    expect((await send(other, 'echo', 'mine')).ok).toBe(true)
  })
})

describe('rooms per socket', () => {
  it('when a socket is in 3 room: rooms, then a 4th join is refused with ROOM_LIMIT_REACHED and nothing is joined; after a leave it may join', async () => {
    const socket = keep(await connect(a.url, '/'))
    for (const room of ['one', 'two', 'three'])
      expect(await send(socket, 'join', { room })).toEqual({ ok: true, room })
    const answer = await send(socket, 'join', { room: 'four' })
    expect(answer).toEqual({
      ok: false,
      error: { code: realtimeErrorCodes.roomLimitReached, message: expect.stringContaining('3 rooms') },
    })
    const held = a.app.realtime.namespace('/').sockets.get(socket.id ?? '')
    expect([...(held?.rooms ?? [])].filter((room) => room.startsWith('room:')).sort()).toEqual([
      'room:one',
      'room:three',
      'room:two',
    ])
    // joining a room it is in already is no new room
    expect(await send(socket, 'join', { room: 'two' })).toEqual({ ok: true, room: 'two' })
    expect(await send(socket, 'leave', { room: 'one' })).toEqual({ ok: true, room: 'one' })
    expect(await send(socket, 'join', { room: 'four' })).toEqual({ ok: true, room: 'four' })
  })

  it('when a member joins 5 chat rooms at once, then exactly 3 are joined (with their history) and 2 refused with ROOM_LIMIT_REACHED', async () => {
    const userId = randomUUID()
    const roomIds = await Promise.all(Array.from({ length: 5 }, () => chatRoom(userId)))
    const socket = keep(await connect(a.url, '/chat', { token: accessToken('user', userId) }))
    const histories = heard(socket, 'chat:history')
    const answers = await Promise.all(roomIds.map((roomId) => send(socket, 'chat:join', { roomId })))
    expect(answers.filter((answer) => answer.ok)).toHaveLength(3)
    const refusals = answers.filter((answer) => !answer.ok)
    expect(refusals).toHaveLength(2)
    for (const refusal of refusals) {
      expect(refusal).toEqual({
        ok: false,
        error: { code: realtimeErrorCodes.roomLimitReached, message: expect.any(String) },
      })
    }
    await until(histories, 3)
    const held = a.app.realtime.namespace('/chat').sockets.get(socket.id ?? '')
    expect([...(held?.rooms ?? [])].filter((room) => room.startsWith('chatroom:'))).toHaveLength(3)
  })
})

describe('sizes', () => {
  it(`when a default-namespace message is longer than ${realtimeLimits.broadcastTextMax} characters, then VALIDATION_ERROR and nobody hears it; at the limit it is broadcast`, async () => {
    const sender = keep(await connect(a.url, '/'))
    const observer = keep(await connect(b.url, '/'))
    const messages = heard<{ text: string }>(observer, 'new_message')
    const tooLong = await send(sender, 'message', { text: 'x'.repeat(realtimeLimits.broadcastTextMax + 1) })
    expect(tooLong).toEqual({
      ok: false,
      error: expect.objectContaining({
        code: 'VALIDATION_ERROR',
        details: [expect.objectContaining({ field: 'text' })],
      }),
    })
    const atLimit = 'y'.repeat(realtimeLimits.broadcastTextMax)
    expect(await send(sender, 'message', { text: atLimit })).toMatchObject({ ok: true })
    await until(messages, 1)
    expect(messages.map((message) => message.text)).toEqual([atLimit])
  })

  it(`when a collab:edit inserts more than ${realtimeLimits.editTextMax} characters, then VALIDATION_ERROR and nothing is applied; at the limit it is applied`, async () => {
    const ownerId = randomUUID()
    const made = await a.app.inject({
      method: 'POST',
      url: '/api/v1/documents',
      headers: asUser(ownerId),
      payload: { title: 'Doc', content: 'abc' },
    })
    const docId = made.json().id as string
    const editor = keep(await connect(a.url, '/collab', { token: accessToken('user', ownerId) }))
    expect((await send(editor, 'collab:join', { docId })).ok).toBe(true)
    const insert = (length: number) => ({
      docId,
      operation: { type: 'insert', position: 3, text: 'z'.repeat(length) },
      baseVersion: 0,
    })
    const oversized = await send(editor, 'collab:edit', insert(realtimeLimits.editTextMax + 1))
    expect(oversized).toEqual({
      ok: false,
      error: expect.objectContaining({
        code: 'VALIDATION_ERROR',
        message: realtimeMessages.invalidMessageFormat,
      }),
    })
    const [unchanged] = await a.sql<{ content: string; version: number }[]>`
      select content, version from documents where id = ${docId}`
    expect(unchanged).toEqual({ content: 'abc', version: 0 })
    expect(await send(editor, 'collab:edit', insert(realtimeLimits.editTextMax))).toEqual({
      ok: true,
      version: 1,
    })
  })
})

describe('chat messages per user', () => {
  it('when a user sends a 4th chat message in the window, then it is refused with RATE_LIMITED and retryAfter, and not stored', async () => {
    const userId = randomUUID()
    const roomId = await chatRoom(userId)
    const socket = keep(await connect(a.url, '/chat', { token: accessToken('user', userId) }))
    expect((await send(socket, 'chat:join', { roomId })).ok).toBe(true)
    for (let n = 1; n <= 3; n++)
      expect((await send(socket, 'chat:message', { roomId, text: `m${n}` })).ok).toBe(true)
    const refused = await send(socket, 'chat:message', { roomId, text: 'm4' })
    expect(refused).toEqual({
      ok: false,
      error: { code: 'RATE_LIMITED', message: tooManyMessages, retryAfter: expect.any(Number) },
    })
    expect((refused.error as { retryAfter: number }).retryAfter).toBeGreaterThan(1)
    const [stored] = await a.sql<{ count: number }[]>`
      select count(*)::int as count from chat_messages where room_id = ${roomId}`
    expect(stored?.count).toBe(3)
  })
})

describe('/ws', () => {
  it('when a /ws client floods, then it gets error RATE_LIMITED messages and is closed with 1008 at the 5th refusal; another /ws client goes on', async () => {
    const flooder = await openRaw(a.url, { authorization: `Bearer ${accessToken('user')}` })
    const bystander = await openRaw(a.url, { authorization: `Bearer ${accessToken('user')}` })
    raws.push(flooder, bystander)
    for (let n = 0; n < 100; n++) flooder.socket.send(JSON.stringify({ n }))

    expect(await flooder.closed).toEqual({
      code: rateLimitedCloseCode,
      reason: realtimeMessages.floodDisconnect,
    })
    const errors = flooder.messages.filter((message) => message.type === 'error')
    expect(errors).toEqual([
      { type: 'error', ...rateLimited },
      { type: 'error', ...rateLimited },
      { type: 'error', ...rateLimited },
      { type: 'error', ...rateLimited },
      { type: 'error', ...rateLimited, message: realtimeMessages.floodDisconnect },
    ])
    // at most the burst (and what the rate refilled meanwhile) was echoed
    expect(flooder.messages.filter((message) => message.type === 'echo').length).toBeLessThanOrEqual(11)

    bystander.socket.send(JSON.stringify({ still: 'here' }))
    await eventually(
      'the bystander’s echo',
      () => bystander.messages.some((m) => m.type === 'echo'),
      undefined,
      20,
    )
    expect(bystander.messages.filter((m) => m.type === 'echo')).toEqual([
      { type: 'echo', payload: { still: 'here' } },
    ])
  })
})
