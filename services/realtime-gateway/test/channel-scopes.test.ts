// API scopes on the realtime channel, with real clients (socket.io-client, ws): a token limited to scopes (the OpenID
// provider's kind, signed here by the testkit) connects only to namespaces whose connect scope it holds, each event
// needs its own scope (refused with INSUFFICIENT_SCOPE and nothing done), a refresh brings its own scopes, and
// first-party tokens are not limited. /ws needs none; API keys open no connection.
import { randomUUID } from 'node:crypto'
import { type ApiScope, type RealtimeNamespace, realtimeMessages } from '@meridian/contracts'
import { accessToken, asUser } from '@meridian/testkit'
import type { Socket } from 'socket.io-client'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { openRaw, type RawClient } from './support/raw-socket.ts'
import {
  connect,
  heard,
  nextEvent,
  type RealtimeInstance,
  refusalOf,
  send,
  socketKeeper,
  startRealtime,
  until,
} from './support/realtime.ts'

const { keep, closeAll } = socketKeeper()
const raws: RawClient[] = []
let realtime: RealtimeInstance

beforeAll(async () => {
  realtime = await startRealtime()
})
afterEach(() => {
  closeAll()
  for (const raw of raws.splice(0)) raw.socket.terminate()
})
afterAll(async () => {
  await realtime?.close()
})

/** A token of `userId` limited to `scopes`, as the OpenID provider issues them. */
const scoped = (scopes: ApiScope[], userId: string = randomUUID(), role: 'user' | 'admin' = 'user') =>
  accessToken(role, userId, { scopes })

const open = async (namespace: RealtimeNamespace, token: string) =>
  keep(await connect(realtime.url, namespace, { token }))

/** The refusal of an event for a scope its credential lacks: the same in the ack and in the `error` event. */
const scopeRefusal = (scope: ApiScope) => ({
  code: 'INSUFFICIENT_SCOPE',
  message: `Insufficient scope: this operation needs ${scope}`,
})

/** Sends `event` with an ack and expects it refused for `scope`, with the `error` event beside it. */
async function expectRefused(
  socket: Socket,
  event: string,
  payload: unknown,
  scope: ApiScope,
): Promise<void> {
  const error = nextEvent(socket, 'error')
  expect(await send(socket, event, payload)).toEqual({ ok: false, error: scopeRefusal(scope) })
  expect(await error).toEqual(scopeRefusal(scope))
}

async function expectAccepted(socket: Socket, event: string, payload?: unknown) {
  const answer = await send(socket, event, payload)
  expect(answer.ok, JSON.stringify(answer)).toBe(true)
  return answer
}

/** A chat room created over HTTP by `ownerId` (a first-party token), with `members`. */
async function createRoom(ownerId: string, members: string[]): Promise<string> {
  const created = await realtime.app.inject({
    method: 'POST',
    url: '/api/v1/chat/rooms',
    headers: asUser(ownerId),
    payload: { name: 'Scoped room' },
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

/** A document created over HTTP by `ownerId`, with `members`. */
async function createDocument(ownerId: string, members: string[]): Promise<string> {
  const created = await realtime.app.inject({
    method: 'POST',
    url: '/api/v1/documents',
    headers: asUser(ownerId),
    payload: { title: 'Scoped notes', content: 'abc' },
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

const storedMessages = async (roomId: string) =>
  (
    await realtime.sql<
      { text: string }[]
    >`select text from chat_messages where room_id = ${roomId} order by created_at`
  ).map((row) => row.text)

describe('connecting', () => {
  const connectScopes: [RealtimeNamespace, ApiScope][] = [
    ['/', 'chat:read'],
    ['/chat', 'chat:read'],
    ['/notifications', 'notifications:read'],
    ['/collab', 'documents:read'],
    ['/dashboard', 'admin:read'],
    ['/admin', 'admin:read'],
  ]

  it('when a token limited to orders:read connects to any namespace, then connect_error names the scope the namespace needs', async () => {
    // an admin's token: the role would let it into /dashboard and /admin, the scope does not
    const token = scoped(['orders:read'], randomUUID(), 'admin')
    for (const [namespace, scope] of connectScopes) {
      expect(await refusalOf(connect(realtime.url, namespace, { token })), namespace).toEqual({
        message: `Insufficient scope: this namespace needs ${scope}`,
        data: { code: 'INSUFFICIENT_SCOPE', scope },
      })
    }
  })

  it('when a token holds exactly the namespace’s connect scope, then it connects; a first-party token of the same user connects everywhere its role allows', async () => {
    const adminId = randomUUID()
    for (const [namespace, scope] of connectScopes) {
      const socket = await open(namespace, scoped([scope], adminId, 'admin'))
      expect(socket.connected, namespace).toBe(true)
      expect((await open(namespace, accessToken('admin', adminId))).connected, namespace).toBe(true)
    }
  })

  it('when a user’s token holds admin:read and admin:write, then /dashboard and /admin still refuse them Unauthorized: a scope never grants more than the role', async () => {
    const token = scoped(['admin:read', 'admin:write'])
    for (const namespace of ['/dashboard', '/admin'] as const) {
      expect(await refusalOf(connect(realtime.url, namespace, { token }))).toMatchObject({
        message: realtimeMessages.unauthorized,
      })
    }
  })

  it('when an API key is presented (as auth.token, or in X-API-Key on the upgrade), then no namespace and not /ws takes it', async () => {
    const key = `mk_${randomUUID().replaceAll('-', '')}_${randomUUID().replaceAll('-', '')}`
    expect(await refusalOf(connect(realtime.url, '/chat', { token: key }))).toEqual({
      message: realtimeMessages.invalidToken,
      data: { code: 'UNAUTHORIZED' },
    })
    expect(
      await refusalOf(connect(realtime.url, '/chat', { token: null, headers: { 'x-api-key': key } })),
    ).toEqual({ message: realtimeMessages.authenticationRequired, data: { code: 'UNAUTHORIZED' } })
    const refused = await openRaw(realtime.url, { 'x-api-key': key }).then(
      (client) => {
        raws.push(client)
        return 'opened'
      },
      (error: Error) => error.message,
    )
    expect(refused).toBe('Unexpected server response: 401')
  })
})

describe('events', () => {
  it('when a token holding chat:read only is in a room, then chat:message and chat:typing get INSUFFICIENT_SCOPE naming chat:write (before the payload is read), and nothing is stored or heard', async () => {
    const [owner, reader] = [randomUUID(), randomUUID()]
    const roomId = await createRoom(owner, [reader])
    const limited = await open('/chat', scoped(['chat:read'], reader))
    const observer = await open('/chat', accessToken('user', owner))
    await expectAccepted(observer, 'chat:join', { roomId })
    const messages = heard<{ text: string }>(observer, 'chat:message')
    const typing = heard(observer, 'chat:typing')

    // joining and its history need chat:read, which it holds
    const joined = await expectAccepted(limited, 'chat:join', { roomId })
    expect(joined.history).toEqual({ roomId, messages: [] })
    await expectRefused(limited, 'chat:message', { roomId, text: 'not with this token' }, 'chat:write')
    // an invalid payload is refused for its scope too: a credential without it learns nothing of the schema
    await expectRefused(limited, 'chat:message', { roomId, text: '' }, 'chat:write')
    const typingRefused = nextEvent(limited, 'error')
    limited.emit('chat:typing', { roomId, isTyping: true })
    expect(await typingRefused).toEqual(scopeRefusal('chat:write'))

    // the owner's message after them: the observer hears it alone, and it alone is stored
    await expectAccepted(observer, 'chat:message', { roomId, text: 'marker' })
    await until(messages, 1)
    expect(messages.map((message) => message.text)).toEqual(['marker'])
    expect(typing).toEqual([])
    expect(await storedMessages(roomId)).toEqual(['marker'])
  })

  it('when a token holds chat:read and chat:write, then its messages are stored and broadcast', async () => {
    const [owner, writer] = [randomUUID(), randomUUID()]
    const roomId = await createRoom(owner, [writer])
    const socket = await open('/chat', scoped(['chat:read', 'chat:write'], writer))
    await expectAccepted(socket, 'chat:join', { roomId })
    await expectAccepted(socket, 'chat:message', { roomId, text: 'with the scope' })
    expect(await storedMessages(roomId)).toEqual(['with the scope'])
  })

  it('when a token holding documents:read only opens a document, then collab:edit gets INSUFFICIENT_SCOPE naming documents:write and the document is unchanged; with documents:write the edit applies', async () => {
    const [owner, editor] = [randomUUID(), randomUUID()]
    const docId = await createDocument(owner, [editor])
    const reading = await open('/collab', scoped(['documents:read'], editor))
    const opened = await expectAccepted(reading, 'collab:join', { docId })
    expect(opened.state).toEqual({ docId, content: 'abc', version: 0 })
    const edit = { docId, operation: { type: 'insert', position: 3, text: 'd' }, baseVersion: 0 }
    await expectRefused(reading, 'collab:edit', edit, 'documents:write')
    const [unchanged] = await realtime.sql`select content, version from documents where id = ${docId}`
    expect(unchanged).toEqual({ content: 'abc', version: 0 })

    const writing = await open('/collab', scoped(['documents:read', 'documents:write'], editor))
    await expectAccepted(writing, 'collab:join', { docId })
    expect(await send(writing, 'collab:edit', edit)).toEqual({ ok: true, version: 1 })
  })

  it('when a token holding notifications:read only marks notifications read, then INSUFFICIENT_SCOPE naming notifications:write, before the notification service is asked', async () => {
    const socket = await open('/notifications', scoped(['notifications:read']))
    await expectRefused(
      socket,
      'notifications:read',
      { notificationIds: [randomUUID()] },
      'notifications:write',
    )
  })

  it('when a token holding chat:read only is on the default namespace, then message and private get INSUFFICIENT_SCOPE naming chat:write and nobody hears them; join and echo pass', async () => {
    const limited = await open('/', scoped(['chat:read']))
    const observer = await open('/', accessToken('user'))
    const broadcasts = heard<{ text: string }>(observer, 'new_message')
    const privates = heard(observer, 'private')

    await expectAccepted(limited, 'join', { room: 'lobby' })
    expect(await send(limited, 'echo', { hello: 'me' })).toEqual({
      ok: true,
      echo: { type: 'echo', payload: { hello: 'me' } },
    })
    await expectRefused(limited, 'message', { text: 'to everyone' }, 'chat:write')
    await expectRefused(limited, 'private', { to: observer.id, text: 'to you' }, 'chat:write')

    await expectAccepted(await open('/', scoped(['chat:read', 'chat:write'])), 'message', { text: 'marker' })
    await until(broadcasts, 1)
    expect(broadcasts.map((message) => message.text)).toEqual(['marker'])
    expect(privates).toEqual([])
  })

  it('when an admin’s token holding admin:read only is on /admin, then it lists connections, and admin:global-alert and admin:disconnect get INSUFFICIENT_SCOPE naming admin:write with nothing done', async () => {
    const adminId = randomUUID()
    const viewer = await open('/admin', scoped(['admin:read'], adminId, 'admin'))
    const listener = await open('/', accessToken('user'))
    const alerts = heard<{ message: string }>(listener, 'global-alert')

    const listed = await expectAccepted(viewer, 'admin:connections')
    expect(listed.connections).toEqual(
      expect.arrayContaining([expect.objectContaining({ socketId: listener.id, namespace: '/' })]),
    )
    await expectRefused(viewer, 'admin:global-alert', { message: 'not with this token' }, 'admin:write')
    await expectRefused(viewer, 'admin:disconnect', { socketId: listener.id }, 'admin:write')

    const acting = await open('/admin', scoped(['admin:read', 'admin:write'], adminId, 'admin'))
    await expectAccepted(acting, 'admin:global-alert', { message: 'marker' })
    await until(alerts, 1)
    expect(alerts).toEqual([{ message: 'marker' }])
    expect(listener.connected).toBe(true)
  })

  it('when an admin’s token holding admin:read is on /dashboard, then it chooses its metrics', async () => {
    const socket = await open('/dashboard', scoped(['admin:read'], randomUUID(), 'admin'))
    expect(await send(socket, 'dashboard:subscribe', { metrics: ['activeUsers'] })).toEqual({
      ok: true,
      metrics: ['activeUsers'],
    })
  })
})

describe('refreshing', () => {
  it('when auth:refresh brings a token of the same user without the namespace’s connect scope, then the ack and auth:failed name it and the server disconnects', async () => {
    const userId = randomUUID()
    const socket = await open('/chat', scoped(['chat:read'], userId))
    const failed = nextEvent(socket, 'auth:failed')
    const gone = nextEvent(socket, 'disconnect')
    const message = 'Insufficient scope: this namespace needs chat:read'
    expect(await send(socket, 'auth:refresh', { token: scoped(['orders:read'], userId) })).toEqual({
      ok: false,
      error: { code: 'INSUFFICIENT_SCOPE', message },
    })
    expect(await failed).toEqual({ message })
    expect(await gone).toBe('io server disconnect')
  })

  it('when auth:refresh brings other scopes, then the events are held to the new ones: chat:write gained, then lost to a narrower token', async () => {
    const [owner, userId] = [randomUUID(), randomUUID()]
    const roomId = await createRoom(owner, [userId])
    const socket = await open('/chat', scoped(['chat:read'], userId))
    await expectAccepted(socket, 'chat:join', { roomId })
    await expectRefused(socket, 'chat:message', { roomId, text: 'before' }, 'chat:write')

    await expectAccepted(socket, 'auth:refresh', { token: scoped(['chat:read', 'chat:write'], userId) })
    await expectAccepted(socket, 'chat:message', { roomId, text: 'after gaining chat:write' })

    await expectAccepted(socket, 'auth:refresh', { token: scoped(['chat:read'], userId) })
    await expectRefused(socket, 'chat:message', { roomId, text: 'after losing it' }, 'chat:write')
    expect(await storedMessages(roomId)).toEqual(['after gaining chat:write'])
  })

  it('when a first-party socket refreshes to a token limited to scopes, then it is held to them from then on', async () => {
    const [owner, userId] = [randomUUID(), randomUUID()]
    const roomId = await createRoom(owner, [userId])
    const socket = await open('/chat', accessToken('user', userId))
    await expectAccepted(socket, 'chat:join', { roomId })
    await expectAccepted(socket, 'chat:message', { roomId, text: 'first-party' })
    await expectAccepted(socket, 'auth:refresh', { token: scoped(['chat:read'], userId) })
    await expectRefused(socket, 'chat:message', { roomId, text: 'scoped' }, 'chat:write')
    expect(await storedMessages(roomId)).toEqual(['first-party'])
  })
})

describe('/ws', () => {
  it('when a token limited to orders:read opens /ws, then it is welcomed and echoed (it reads and changes nothing else), and a refresh with another scoped token is answered', async () => {
    const userId = randomUUID()
    const client = await openRaw(realtime.url, { authorization: `Bearer ${scoped(['orders:read'], userId)}` })
    raws.push(client)
    client.socket.send(JSON.stringify({ hello: 'me' }))
    client.socket.send(
      JSON.stringify({ type: 'auth:refresh', token: scoped(['notifications:read'], userId) }),
    )
    // the echo and the refresh's answer may come in either order: each message is charged to the event limits first
    await until(client.messages, 3)
    expect(client.messages[0]).toMatchObject({ type: 'welcome' })
    expect(client.messages.slice(1)).toEqual(
      expect.arrayContaining([
        { type: 'echo', payload: { hello: 'me' } },
        { type: 'auth:refreshed', expiresAt: expect.any(Number) },
      ]),
    )
    expect(client.socket.readyState).toBe(client.socket.OPEN)
  })
})
