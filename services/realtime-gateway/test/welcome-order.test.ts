// `welcome` is the first event a socket of the default namespace hears, before the answer to anything it sent at once.
//
// With connection-state recovery on, Socket.IO sends `socket.emit` through the adapter, which appends it to the Redis
// stream (on the adapter's own connection) and writes it to the socket only when Redis answers, while an
// acknowledgement goes out as soon as the event is handled (after the per-user rate limit, on the instance's other
// Redis connection). A welcome sent that way was overtaken by the answer to a request the client had queued before the
// CONNECT whenever the adapter's connection was the slower one (the SDK's quick start, beside a loaded system, printed
// its echo without the welcome, then closed). Here the adapter's appends are answered 150 ms late through a relay, so
// the overtaking is certain, not a matter of luck.
import { accessToken, type RedisRelay, scaledMs, startRedisRelay, waitMs } from '@meridian/testkit'
import { io, type Socket } from 'socket.io-client'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type RealtimeInstance, someAddress, startRealtime } from './support/realtime.ts'

/** How late Redis's answers reach the instance: longer than a round trip between the client and the instance. */
const redisLateMs = 150

/** The adapter's connection, the one that appends to the stream (XADD): its answers come late, from its first append. */
const appendsToTheStream = (commands: string) => /^\$4\r\nxadd\r\n/im.test(commands)

let relay: RedisRelay
let realtime: RealtimeInstance
const sockets: Socket[] = []

beforeAll(async () => {
  relay = await startRedisRelay({ lateMs: redisLateMs, lateFrom: appendsToTheStream })
  realtime = await startRealtime({ REDIS_URL: relay.url })
})
afterAll(async () => {
  for (const socket of sockets) socket.close()
  await realtime?.close()
  await relay?.close()
})

describe('welcome', () => {
  it('when a client requests an echo before it is connected, then it hears welcome before the answer', async () => {
    const socket = io(realtime.url, {
      transports: ['websocket'],
      reconnection: false,
      forceNew: true,
      auth: { token: accessToken('user') },
      extraHeaders: { 'x-forwarded-for': someAddress() },
    })
    sockets.push(socket)
    const heard: string[] = []
    socket.onAny((event: string) => heard.push(event))
    // queued by the client until the CONNECT, as the SDK's `request` right after `namespace('/')` is
    const answer = await socket.timeout(scaledMs(waitMs)).emitWithAck('echo', { hello: 'Meridian' })
    heard.push('answer')
    expect(answer).toEqual({ ok: true, echo: { type: 'echo', payload: { hello: 'Meridian' } } })
    expect(heard[0]).toBe('welcome')
    expect(heard.indexOf('welcome')).toBeLessThan(heard.indexOf('answer'))
  })
})
