// Two instances of the channel connected as realtime-gateway's own Redis user over TLS (a secure Redis: issue 45),
// driven by real socket.io clients: what the channel does in Redis — the Socket.IO adapter's stream, channels and
// recovery sessions, the connection limits' and presence's scripts (the departures' sweep names keys of its own), the
// users' rates, the active users — stays within what redisAccess declares for it. A command or key outside it is
// refused by the engine (NOPERM), which the instances would log.
import { randomUUID } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { freePort } from '@meridian/infra'
import { certificateAuthority, type SecureEngineInstance, startSecureRedis } from '@meridian/infra/secure'
import { accessToken, asUser, uniqueName } from '@meridian/testkit'
import type { Socket } from 'socket.io-client'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { connect, nextEvent, type RealtimeInstance, send, startRealtime } from './support/realtime.ts'

const dir = mkdtempSync(join(tmpdir(), 'meridian-realtime-secure-redis-'))
const prefix = `${uniqueName('rts')}:`
const username = 'user of the tests'
let secure: SecureEngineInstance
let a: RealtimeInstance
let b: RealtimeInstance
const sockets: Socket[] = []

beforeAll(async () => {
  secure = await startSecureRedis({
    dir: join(dir, 'redis'),
    ca: await certificateAuthority(join(dir, 'ca')),
    host: '127.0.0.1',
    ports: { redis: await freePort() },
    principals: ['realtime-gateway'],
    prefixes: { realtime: prefix },
  })
  const env = {
    ...secure.envFor('realtime-gateway'),
    REALTIME_REDIS_PREFIX: prefix,
    REALTIME_OFFLINE_GRACE_MS: '300',
  }
  a = await startRealtime(env)
  b = await startRealtime(env, { sharing: a })
})

afterAll(async () => {
  for (const socket of sockets) socket.close()
  await b?.close()
  await a?.close()
  await secure?.stop()
  rmSync(dir, { recursive: true, force: true })
})

async function chatSocket(userId: string, instance: RealtimeInstance): Promise<Socket> {
  const socket = await connect(instance.url, '/chat', { token: accessToken('user', userId) })
  sockets.push(socket)
  return socket
}

async function roomOf(ownerId: string, memberId: string): Promise<string> {
  const created = await a.app.inject({
    method: 'POST',
    url: '/api/v1/chat/rooms',
    headers: asUser(ownerId),
    payload: { name: 'Room' },
  })
  const roomId = created.json().id as string
  const added = await a.app.inject({
    method: 'POST',
    url: `/api/v1/chat/rooms/${roomId}/members`,
    headers: asUser(ownerId),
    payload: { userId: memberId },
  })
  expect(added.statusCode).toBe(201)
  return roomId
}

describe("the realtime channel on realtime-gateway's own Redis user", () => {
  it('when members of a room meet on two instances, then presence, messages and the departure cross between them', async () => {
    const [ownerId, memberId] = [randomUUID(), randomUUID()]
    const roomId = await roomOf(ownerId, memberId)
    const owner = await chatSocket(ownerId, a)
    expect((await send(owner, 'chat:join', { roomId })).ok).toBe(true)

    const joined = nextEvent(owner, 'chat:user-joined')
    const member = await chatSocket(memberId, b)
    expect((await send(member, 'chat:join', { roomId })).ok).toBe(true)
    expect(await joined).toEqual({ roomId, userId: memberId, username })

    const received = nextEvent<{ text: string }>(owner, 'chat:message')
    expect((await send(member, 'chat:message', { roomId, text: 'across, over TLS' })).ok).toBe(true)
    expect((await received).text).toBe('across, over TLS')

    // the departure is claimed by the sweep, whose script names the room's keys itself
    const left = nextEvent(owner, 'chat:user-left')
    member.close()
    expect(await left).toEqual({ roomId, userId: memberId, username })
  })

  it("when an admin on one instance lists the connections, then the other's are among them (the adapter's requests)", async () => {
    const userId = randomUUID()
    const onB = await connect(b.url, '/notifications', { token: accessToken('user', userId) })
    sockets.push(onB)
    const admin = await connect(a.url, '/admin', { token: accessToken('admin') })
    sockets.push(admin)
    const answer = await send(admin, 'admin:connections')
    expect(answer.ok).toBe(true)
    const connections = answer.connections as { socketId: string; userId: string }[]
    expect(connections).toEqual(
      expect.arrayContaining([expect.objectContaining({ socketId: onB.id, userId })]),
    )
  })

  it('when the instances ran, then neither logged a refusal of Redis', () => {
    const refusals = [...a.logs, ...b.logs].filter((line) =>
      /NOPERM|NOAUTH|WRONGPASS/.test(JSON.stringify(line)),
    )
    expect(refusals).toEqual([])
  })
})
