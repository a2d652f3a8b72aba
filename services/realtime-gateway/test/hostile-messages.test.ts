// Messages sent to end or stall an instance, the way the third hostile review sent them: on /ws and on Socket.IO's own
// wire (a raw WebSocket speaking engine.io, since socket.io-client could not even serialise them), and with the
// official client. Before the fixes, 100,000 nested arrays (200 KB, under the message size limit) overflowed
// JSON.stringify's stack when echoed and ended the instance, and `notifications:read` with 40,000 repeated ids held it
// while TypeBox listed the uniqueness problems pair by pair.
import { realtimeMessages } from '@meridian/contracts'
import { accessToken, scaledMs, waitMs } from '@meridian/testkit'
import type { Socket } from 'socket.io-client'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import WebSocket from 'ws'
import { connect, type RealtimeInstance, send, someAddress, startRealtime } from './support/realtime.ts'

let realtime: RealtimeInstance
const sockets: Socket[] = []
const raw: WebSocket[] = []

beforeAll(async () => {
  realtime = await startRealtime()
})
afterAll(async () => {
  for (const socket of sockets) socket.close()
  for (const socket of raw) socket.terminate()
  await realtime?.close()
})

/** 100,000 arrays, one inside the other: the review's message. */
const deepArrays = `${'['.repeat(100_000)}${']'.repeat(100_000)}`

/** Opens a raw WebSocket and collects its text messages. */
async function rawSocket(
  path: string,
): Promise<{ socket: WebSocket; messages: string[]; closed: Promise<number> }> {
  const socket = new WebSocket(`${realtime.url.replace('http', 'ws')}${path}`, {
    headers: { authorization: `Bearer ${accessToken('user')}`, 'x-forwarded-for': someAddress() },
  })
  raw.push(socket)
  const messages: string[] = []
  socket.on('message', (data) => messages.push(String(data)))
  const closed = new Promise<number>((resolve) => socket.once('close', (code) => resolve(code)))
  await new Promise<void>((resolve, reject) => {
    socket.once('open', () => resolve())
    socket.once('error', reject)
  })
  return { socket, messages, closed }
}

/** Waits until `messages` holds one that `match` accepts, and answers it. */
async function nextMessage(messages: string[], match: (message: string) => boolean): Promise<string> {
  const deadline = Date.now() + scaledMs(waitMs)
  for (;;) {
    const found = messages.find(match)
    if (found !== undefined) return found
    if (Date.now() > deadline)
      throw new Error(`no such message among ${JSON.stringify(messages).slice(0, 500)}`)
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}

/** The instance still serves: a new client of the default namespace is welcomed and echoed. */
async function stillServes(): Promise<void> {
  const socket = await connect(realtime.url, '/')
  sockets.push(socket)
  expect(await send(socket, 'echo', { still: 'here' })).toEqual({
    ok: true,
    echo: { type: 'echo', payload: { still: 'here' } },
  })
}

describe('messages that ended or stalled an instance', () => {
  it('when /ws gets 100,000 nested arrays, then that message is refused as too deep, the next is echoed, and the instance serves on', async () => {
    const { socket, messages } = await rawSocket('/ws')
    await nextMessage(messages, (message) => message.includes('"welcome"'))
    socket.send(deepArrays)
    const refusal = JSON.parse(await nextMessage(messages, (message) => message.includes('"error"')))
    expect(refusal).toEqual({
      type: 'error',
      code: 'VALIDATION_ERROR',
      message: realtimeMessages.invalidMessageFormat,
      details: [{ field: 'payload', message: 'JSON nested deeper than 64 levels' }],
    })
    socket.send(JSON.stringify({ after: 'the refusal' }))
    const echo = JSON.parse(await nextMessage(messages, (message) => message.includes('"echo"')))
    expect(echo).toEqual({ type: 'echo', payload: { after: 'the refusal' } })
    await stillServes()
  })

  it("when a Socket.IO echo carries 100,000 nested arrays on the engine's own wire, then that connection is closed and the instance serves on", async () => {
    const { socket, messages, closed } = await rawSocket('/socket.io/?EIO=4&transport=websocket')
    // engine.io's open packet, then Socket.IO's CONNECT to the default namespace with the credential
    await nextMessage(messages, (message) => message.startsWith('0{'))
    socket.send(`40${JSON.stringify({ token: accessToken('user') })}`)
    await nextMessage(messages, (message) => message.startsWith('40{'))
    socket.send(`42["echo",${deepArrays}]`)
    await closed
    expect(messages.some((message) => message.startsWith('42["echo"'))).toBe(false)
    await stillServes()
  })

  it('when notifications:read carries 40,000 repeated ids, then it is refused for its size alone, at once, before the notification service is asked', async () => {
    const socket = await connect(realtime.url, '/notifications')
    sockets.push(socket)
    // 160 KB, well under the message size limit (as many uuids would pass it)
    const answer = await send(socket, 'notifications:read', {
      notificationIds: Array.from({ length: 40_000 }, () => 'x'),
    })
    expect(answer).toEqual({
      ok: false,
      error: {
        code: 'VALIDATION_ERROR',
        message: realtimeMessages.invalidMessageFormat,
        details: [{ field: 'notificationIds', message: 'must NOT have more than 100 items' }],
      },
    })
    await stillServes()
  })
})
