// The realtime channel under a hostile review, through the gateway only, with the SDK: an admin demoted while
// connected to /admin is disconnected with auth:failed and can no longer alert anyone, and a socket that floods is
// refused with RATE_LIMITED and then disconnected while another goes on.
import { randomBytes, randomUUID } from 'node:crypto'
import { createRealtimeClient, type RealtimeClient } from '@meridian/realtime-client'
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest'
import { type Caller, e2eClient } from '../src/client.ts'
import '../src/system-context.ts'

const system = inject('system')
const client = e2eClient(system)
const clients: RealtimeClient[] = []

/** A client of the channel through the gateway, signed in as `caller`, that does not reconnect by itself. */
function realtimeOf(caller: Caller): RealtimeClient {
  const realtime = createRealtimeClient({
    url: system.gatewayUrl,
    token: () => caller.token,
    reconnection: false,
  })
  clients.push(realtime)
  return realtime
}

interface Listening {
  connected: boolean
  once(event: string, listener: (...args: never[]) => void): unknown
  on(event: string, listener: (...args: never[]) => void): unknown
}

async function connected<Socket extends Listening>(socket: Socket): Promise<Socket> {
  if (!socket.connected) await new Promise<void>((resolve) => socket.once('connect', () => resolve()))
  return socket
}

/** The first `event` the socket hears, or a failure naming it after `ms`. */
function next<Value>(socket: Listening, event: string, ms = 10_000): Promise<Value> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no ${event} within ${ms} ms`)), ms)
    socket.once(event, ((value: Value) => {
      clearTimeout(timer)
      resolve(value)
    }) as never)
  })
}

afterAll(() => {
  for (const realtime of clients) realtime.close()
})

describe('the realtime channel under a hostile review, through the gateway', () => {
  let admin: Caller

  beforeAll(async () => {
    admin = await client.loginAdmin()
  })

  it('when an admin connected to /admin is demoted, then the socket gets auth:failed and is disconnected, and its global alert reaches nobody', async () => {
    const email = `demoted-${randomUUID()}@example.com`
    const password = randomBytes(12).toString('base64url')
    const registered = await client.request<{ id: string }>('POST', '/api/v1/users', {
      body: { name: 'Soon Demoted', email, password },
    })
    expect(registered.status).toBe(201)
    const promoted = await client.request('PATCH', `/api/v1/users/${registered.body.id}`, {
      token: admin.token,
      body: { role: 'admin' },
    })
    expect(promoted.status).toBe(200)
    const operator: Caller = { email, token: await client.login(email, password) }

    const listener = await connected(realtimeOf(await client.registerCustomer()).namespace('/'))
    const alerts: unknown[] = []
    listener.on('global-alert', (alert) => {
      alerts.push(alert)
    })
    const operatorSocket = await connected(realtimeOf(operator).namespace('/admin'))
    const failed = next<{ message: string }>(operatorSocket, 'auth:failed')
    const gone = next<string>(operatorSocket, 'disconnect')

    const demoted = await client.request('PATCH', `/api/v1/users/${registered.body.id}`, {
      token: admin.token,
      body: { role: 'user' },
    })
    expect(demoted.status).toBe(200)
    expect((await failed).message).toBe('Invalid or expired token')
    expect(await gone).toBe('io server disconnect')

    // what the socket sends now goes nowhere; another admin's alert still reaches the listener
    operatorSocket.emit('admin:global-alert', { message: 'from a demoted admin' })
    const adminConsole = await connected(realtimeOf(admin).namespace('/admin'))
    const marker = next<{ message: string }>(listener, 'global-alert')
    adminConsole.emit('admin:global-alert', { message: 'marker' })
    expect((await marker).message).toBe('marker')
    expect(alerts).toEqual([{ message: 'marker' }])
  })

  it('when a socket floods the channel, then it gets error RATE_LIMITED and is disconnected, while another socket goes on', async () => {
    const flooder = await connected(realtimeOf(await client.registerCustomer()).namespace('/'))
    const bystander = await connected(realtimeOf(await client.registerCustomer()).namespace('/'))
    const errors: { code?: string }[] = []
    flooder.on('error', (error) => {
      errors.push(error)
    })
    const gone = next<string>(flooder, 'disconnect', 30_000)

    for (let n = 0; n < 2000; n++) flooder.emit('echo', n)

    expect(await gone).toBe('io server disconnect')
    expect(errors.length).toBeGreaterThan(0)
    expect(new Set(errors.map((error) => error.code))).toEqual(new Set(['RATE_LIMITED']))
    const echoed = next<{ payload: unknown }>(bystander, 'echo')
    bystander.emit('echo', 'unaffected')
    expect((await echoed).payload).toBe('unaffected')
  })
})
