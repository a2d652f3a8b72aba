// request(): acknowledgements as Promises, refusals and timeouts as typed errors, against a real Socket.IO server.
import type { ChatHistory, ChatPresence } from '@meridian/contracts'
import { afterAll, beforeAll, describe, expect, expectTypeOf, it } from 'vitest'
import {
  type RealtimeClient,
  RealtimeRequestError,
  RealtimeTimeoutError,
  type RequestEvent,
  request,
  requestWithin,
} from '../src/index.ts'
import { clientOf, type RealtimeServer, startRealtimeServer } from './realtime-server.ts'

type Answer = (answer: object) => void
const roomId = '6f1c1a52-5b7e-4c55-9a38-0e3f0c2b8a11'
const history: ChatHistory = { roomId, messages: [] }

describe('request', () => {
  let server: RealtimeServer
  let client: RealtimeClient

  beforeAll(async () => {
    server = await startRealtimeServer()
    server.io.of('/chat').on('connection', (socket) => {
      socket.on('chat:join', ({ roomId: joined }: { roomId: string }, ack: Answer) =>
        joined === roomId
          ? ack({ ok: true, history, online: [] })
          : ack({ ok: false, error: { code: 'FORBIDDEN', message: 'Not a member of this room' } }),
      )
      socket.on('chat:message', (_message: unknown, ack: Answer) =>
        ack({
          ok: false,
          error: {
            code: 'VALIDATION_ERROR',
            message: 'Invalid message format',
            details: [{ field: 'text', message: 'must not be empty' }],
          },
        }),
      )
      socket.on('chat:leave', () => {
        // never acknowledged
      })
    })
    server.io.of('/notifications').on('connection', (socket) => {
      socket.on('notifications:fetch', (ack: Answer) => ack({ ok: true, notifications: [] }))
      socket.on('notifications:read', ({ notificationIds }: { notificationIds: string[] }, ack: Answer) =>
        notificationIds.length > 1
          ? ack({ success: false, error: { message: 'Too many' } })
          : ack({ success: true, read: notificationIds }),
      )
    })
    client = clientOf(server, { token: () => 't', requestTimeoutMs: 2000 })
  })
  afterAll(async () => {
    client.close()
    await server.close()
  })

  it('when the server acknowledges with ok: true, then it resolves with the acknowledgement', async () => {
    const joined = await request(client.namespace('/chat'), 'chat:join', { roomId })
    expect(joined).toEqual({ ok: true, history, online: [] })
    expectTypeOf(joined.history).toEqualTypeOf<ChatHistory>()
    expectTypeOf(joined.online).toEqualTypeOf<ChatPresence[]>()
  })

  it('when the event takes no payload, then it is sent with the acknowledgement only', async () => {
    const fetched = await request(client.namespace('/notifications'), 'notifications:fetch')
    expect(fetched).toEqual({ ok: true, notifications: [] })
  })

  it('when the server refuses with ok: false, then it rejects with its message and code', async () => {
    const refused = request(client.namespace('/chat'), 'chat:join', { roomId: crypto.randomUUID() })
    await expect(refused).rejects.toBeInstanceOf(RealtimeRequestError)
    await expect(refused).rejects.toMatchObject({
      event: 'chat:join',
      code: 'FORBIDDEN',
      message: 'Not a member of this room',
    })
  })

  it('when the refusal is a validation error, then it rejects with the details of each field', async () => {
    await expect(
      request(client.namespace('/chat'), 'chat:message', { roomId, text: ' ' }),
    ).rejects.toMatchObject({
      code: 'VALIDATION_ERROR',
      message: 'Invalid message format',
      details: [{ field: 'text', message: 'must not be empty' }],
    })
  })

  it('when the acknowledgement uses success instead of ok, then both outcomes are understood', async () => {
    const notifications = client.namespace('/notifications')
    const id = crypto.randomUUID()
    expect(await request(notifications, 'notifications:read', { notificationIds: [id] })).toEqual({
      success: true,
      read: [id],
    })
    await expect(
      request(notifications, 'notifications:read', { notificationIds: [id, crypto.randomUUID()] }),
    ).rejects.toMatchObject({ message: 'Too many', code: undefined })
  })

  it('when no acknowledgement arrives in time, then it rejects with a RealtimeTimeoutError', async () => {
    const unanswered = requestWithin(100, client.namespace('/chat'), 'chat:leave', { roomId })
    await expect(unanswered).rejects.toBeInstanceOf(RealtimeTimeoutError)
    await expect(unanswered).rejects.toMatchObject({ event: 'chat:leave', timeoutMs: 100 })
  })

  it('when typed, then only events with an acknowledgement can be requested, with their payload', () => {
    type ChatRequests = RequestEvent<import('@meridian/contracts').ChatClientEvents>
    expectTypeOf<ChatRequests>().toEqualTypeOf<'auth:refresh' | 'chat:join' | 'chat:leave' | 'chat:message'>()
    const chat = client.namespace('/chat')
    // @ts-expect-error chat:typing has no acknowledgement
    expectTypeOf(request).toBeCallableWith(chat, 'chat:typing', { roomId, isTyping: true })
    // @ts-expect-error chat:join needs its payload
    expectTypeOf(request).toBeCallableWith(chat, 'chat:join')
  })
})
