// Rights that end while a connection holds them, on two instances of one channel with real clients (socket.io-client
// and ws): auth's revocations (a user demoted, suspended, deleted), a logout, and a cookie session's end. Each ends the
// connections concerned with `auth:failed` and a disconnection on every instance, whatever the namespace, and /ws
// too; what was refreshed or issued since stays. Auth's side is done in Redis as auth does it. "Within a second" is
// shown by its mechanism, not a stopwatch: the announcement is pushed (pub/sub), and by the time an instance has heard
// the next one, it has ended the connections concerned, which then close with no further action of the client.
import { randomUUID } from 'node:crypto'
import { authNames, credentialFailedCloseCode, realtimeMessages } from '@meridian/contracts'
import { accessToken, eventually, infraEndpoints } from '@meridian/testkit'
import { Redis } from 'ioredis'
import type { Socket } from 'socket.io-client'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { heardByAll, logOut, revokeUser, sessionHeaders, startSession } from './support/auth-signals.ts'
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
const redis = new Redis(infraEndpoints().redisUrl)
let a: RealtimeInstance
let b: RealtimeInstance

beforeAll(async () => {
  a = await startRealtime()
  b = await startRealtime({}, { sharing: a })
})
afterAll(async () => {
  closeAll()
  for (const raw of raws) raw.socket.terminate()
  await b?.close()
  await a?.close()
  redis.disconnect()
})

/** A token issued a while ago: before a revocation made now. */
const earlierToken = (role: 'user' | 'admin', userId: string) =>
  accessToken(role, userId, { issuedAgoSeconds: 30 })

/** The auth:failed and the disconnection a socket is expected to get. */
const endingOf = (socket: Socket) => ({
  failed: nextEvent<{ message: string }>(socket, 'auth:failed'),
  disconnected: nextEvent<string>(socket, 'disconnect'),
})

/**
 * Once both instances have heard every announcement so far, whether `instance` has ended connections of `userId` on
 * its revocation: it did so as the announcement arrived.
 */
async function endedOnArrival(instance: RealtimeInstance, userId: string): Promise<boolean> {
  await heardByAll(redis, [a, b])
  return instance.logs.some((line) => line.msg === 'revoked: connections ended' && line.userId === userId)
}

async function raw(url: string, headers: Record<string, string>): Promise<RawClient> {
  const client = await openRaw(url, headers)
  raws.push(client)
  return client
}

/** /ws's auth:failed, then its close with 4401. */
async function expectRawEnded(client: RawClient, message: string): Promise<void> {
  await eventually(
    '/ws hears auth:failed',
    () => client.messages.some((m) => m.type === 'auth:failed'),
    undefined,
    10,
  )
  expect(client.messages.filter((m) => m.type === 'auth:failed')).toEqual([{ type: 'auth:failed', message }])
  expect(await client.closed).toEqual({ code: credentialFailedCloseCode, reason: message })
}

describe('revocations', () => {
  it('when an admin connected to /admin is demoted, then as the revocation is announced their socket gets auth:failed and is disconnected, and a global-alert it sends after that reaches nobody', async () => {
    const adminId = randomUUID()
    const token = earlierToken('admin', adminId)
    const admin = keep(await connect(a.url, '/admin', { token }))
    const observer = keep(await connect(b.url, '/'))
    const alerts = heard<{ message: string }>(observer, 'global-alert')
    expect(await send(admin, 'admin:global-alert', { message: 'while an admin' })).toEqual({ ok: true })
    await until(alerts, 1)

    // a hostile client: the moment it is told, it tries once more
    admin.on('auth:failed', () => admin.emit('admin:global-alert', { message: 'after the demotion' }))
    const { failed, disconnected } = endingOf(admin)
    // auth demotes: the role changes and everything the user held is revoked
    await revokeUser(redis, adminId)
    expect(await endedOnArrival(a, adminId)).toBe(true)
    expect(await failed).toEqual({ message: realtimeMessages.invalidToken })
    expect(await disconnected).toBe('io server disconnect')

    // another admin's alert, sent after: the observer hears it, and nothing of the demoted admin's before it
    const other = keep(await connect(a.url, '/admin', { token: accessToken('admin') }))
    expect(await send(other, 'admin:global-alert', { message: 'marker' })).toEqual({ ok: true })
    await until(alerts, 2)
    expect(alerts).toEqual([{ message: 'while an admin' }, { message: 'marker' }])
    // and the token it held no longer opens /admin
    expect(await refusalOf(connect(a.url, '/admin', { token }))).toEqual({
      message: realtimeMessages.invalidToken,
      data: { code: 'UNAUTHORIZED' },
    })
  })

  it('when a user is revoked, then every connection of theirs on both instances (each namespace, a cookie session, /ws) is ended as the revocation is announced; another user’s stays', async () => {
    const userId = randomUUID()
    const token = earlierToken('user', userId)
    const sessionId = await startSession(redis, userId, { createdAt: new Date(Date.now() - 30_000) })
    const sockets = [
      keep(await connect(a.url, '/', { token })),
      keep(await connect(a.url, '/chat', { token })),
      keep(await connect(b.url, '/notifications', { token })),
      keep(await connect(b.url, '/collab', { token })),
    ]
    const session = keep(await connect(b.url, '/', { token: null, headers: sessionHeaders(sessionId) }))
    const rawOnA = await raw(a.url, { authorization: `Bearer ${token}` })
    const bystander = keep(await connect(b.url, '/'))
    const endings = sockets.map(endingOf)
    const sessionEnding = endingOf(session)

    await revokeUser(redis, userId)
    expect(await endedOnArrival(a, userId)).toBe(true)
    expect(await endedOnArrival(b, userId)).toBe(true)

    for (const { failed, disconnected } of endings) {
      expect(await failed).toEqual({ message: realtimeMessages.invalidToken })
      expect(await disconnected).toBe('io server disconnect')
    }
    expect(await sessionEnding.failed).toEqual({ message: realtimeMessages.invalidSession })
    expect(await sessionEnding.disconnected).toBe('io server disconnect')
    await expectRawEnded(rawOnA, realtimeMessages.invalidToken)
    expect(await send(bystander, 'echo', { still: 'here' })).toEqual({
      ok: true,
      echo: { type: 'echo', payload: { still: 'here' } },
    })
  })

  it('when a socket has refreshed with a token issued after the revocation, then it stays; the user’s socket still on the older token is ended', async () => {
    const userId = randomUUID()
    const refreshed = keep(await connect(a.url, '/', { token: earlierToken('user', userId) }))
    const stale = keep(await connect(a.url, '/', { token: earlierToken('user', userId) }))
    const refreshedFailures = heard(refreshed, 'auth:failed')
    const answer = await send(refreshed, 'auth:refresh', { token: accessToken('user', userId) })
    expect(answer).toEqual({ ok: true, expiresAt: expect.any(Number) })
    const { failed } = endingOf(stale)

    // revoked before the refresh's token, after the older one
    await revokeUser(redis, userId, Date.now() - 10_000)
    expect(await endedOnArrival(a, userId)).toBe(true)

    expect(await failed).toEqual({ message: realtimeMessages.invalidToken })
    // the revocation was handled for both at once: the refreshed one lives on
    expect(await send(refreshed, 'echo', 'still mine')).toEqual({
      ok: true,
      echo: { type: 'echo', payload: 'still mine' },
    })
    expect(refreshedFailures).toEqual([])
    expect(refreshed.connected).toBe(true)
  })
})

describe('cookie sessions', () => {
  it('when a session is logged out, then its connections on both instances (Socket.IO and /ws) get auth:failed Invalid session and are disconnected as the logout is announced; the user’s other session stays', async () => {
    const userId = randomUUID()
    const [ended, kept] = [await startSession(redis, userId), await startSession(redis, userId)]
    const onA = keep(await connect(a.url, '/', { token: null, headers: sessionHeaders(ended) }))
    const onB = keep(await connect(b.url, '/chat', { token: null, headers: sessionHeaders(ended) }))
    const rawOnB = await raw(b.url, sessionHeaders(ended))
    const other = keep(await connect(a.url, '/', { token: null, headers: sessionHeaders(kept) }))
    const endings = [endingOf(onA), endingOf(onB)]

    await logOut(redis, ended)
    await heardByAll(redis, [a, b])
    for (const instance of [a, b]) {
      expect(instance.logs.map((line) => line.msg)).toContain('logged out: connections of the session ended')
    }

    for (const { failed, disconnected } of endings) {
      expect(await failed).toEqual({ message: realtimeMessages.invalidSession })
      expect(await disconnected).toBe('io server disconnect')
    }
    await expectRawEnded(rawOnB, realtimeMessages.invalidSession)
    expect(await send(other, 'echo', 'kept')).toEqual({ ok: true, echo: { type: 'echo', payload: 'kept' } })
    // and the ended session opens nothing any more
    expect(await refusalOf(connect(a.url, '/', { token: null, headers: sessionHeaders(ended) }))).toEqual({
      message: realtimeMessages.invalidSession,
      data: { code: 'UNAUTHORIZED' },
    })
  })

  it('when a session reaches its end, then its socket gets auth:failed Invalid session then; a session extended meanwhile keeps its socket to its new end', async () => {
    const userId = randomUUID()
    // long enough for both sockets to connect and the second session to be extended before either ends, on a loaded
    // machine too (1.5 s was a narrower margin than a loaded CI run can promise)
    const ttlMs = 4000
    const [ending, extended] = [
      await startSession(redis, userId, { ttlMs }),
      await startSession(redis, userId, { ttlMs }),
    ]
    const expiring = keep(await connect(a.url, '/', { token: null, headers: sessionHeaders(ending) }))
    const lasting = keep(await connect(a.url, '/', { token: null, headers: sessionHeaders(extended) }))
    const lastingFailures = heard(lasting, 'auth:failed')
    // auth extends the second one (a sliding session would): the socket learns of it when it reads it at its end
    await redis.pexpire(`${authNames.sessionKeyPrefix}${extended}`, 120_000)
    const failed = nextEvent<{ message: string }>(expiring, 'auth:failed')
    const disconnected = nextEvent<string>(expiring, 'disconnect')

    expect(await failed).toEqual({ message: realtimeMessages.invalidSession })
    expect(await disconnected).toBe('io server disconnect')
    // the server read the extended session at its first end and now times it to the new one
    await eventually(
      'the extended session is timed to its new end',
      () => {
        const held = a.app.realtime.namespace('/').sockets.get(lasting.id ?? '')
        return (held?.data.user.principal.expiresAt ?? 0) > Date.now() + 60_000
      },
      undefined,
      20,
    )
    expect(lasting.connected).toBe(true)
    expect(lastingFailures).toEqual([])
  })
})
