// Issue 42's class check on the realtime channel, which OpenAPI does not describe: every payload a client sends is
// bounded by its schema (each array maxItems, each string maxLength, each object of any keys maxProperties), so that
// sizes first (channel.ts) refuses an oversized one before it is checked. Read twice: the schemas the channel itself
// validates with, as each namespace registers its events; and the client messages the AsyncAPI document tells clients
// they may send, /ws's among them. No engine: the channels are built on stand-ins and never serve.
import { asyncApiDocument, realtimeScopes } from '@meridian/contracts'
import { unboundedIn } from '@meridian/testkit'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { adminChannel } from '../src/channels/admin.ts'
import { ClientEvents } from '../src/channels/channel.ts'
import { chatChannel } from '../src/channels/chat.ts'
import { collabChannel } from '../src/channels/collab.ts'
import { dashboardChannel } from '../src/channels/dashboard.ts'
import { mainChannel } from '../src/channels/main.ts'
import { notificationsChannel } from '../src/channels/notifications.ts'
import { credentialWatcher } from '../src/channels/session.ts'

/**
 * Whatever a channel is built with (its namespace, use cases, stores, logger): every property is a function and every
 * call answers another stand-in; read as a number (a period, a limit), a minute. Building registers the events;
 * nothing is served, so nothing else is asked of it.
 */
function standIn(): never {
  const callable = () => {}
  const proxy: unknown = new Proxy(callable, {
    get: (_target, key) => {
      if (key === 'then') return undefined
      if (key === Symbol.toPrimitive) return () => 60_000
      return proxy
    },
    apply: () => proxy,
  })
  return proxy as never
}

/** Each client event the channel validates, by namespace ('session' for every namespace's own), with its schema. */
async function registeredEvents(): Promise<{ where: string; event: string; schema: unknown }[]> {
  const registered: { where: string; event: string; schema: unknown }[] = []
  let where = ''
  const on = vi.spyOn(ClientEvents.prototype, 'on')
  on.mockImplementation(function (this: ClientEvents<never>, event: string, schema: unknown) {
    registered.push({ where, event, schema })
    return this
  } as never)
  const builds: [string, () => unknown][] = [
    ['/', () => mainChannel(standIn(), standIn())],
    ['/chat', () => chatChannel(standIn(), standIn())],
    ['/notifications', () => notificationsChannel(standIn(), standIn())],
    ['/collab', () => collabChannel(standIn(), standIn())],
    ['/dashboard', () => dashboardChannel(standIn(), standIn())],
    ['/admin', () => adminChannel(standIn(), standIn())],
    ['session', () => credentialWatcher(standIn())],
  ]
  const built: unknown[] = []
  try {
    for (const [namespace, build] of builds) {
      where = namespace
      built.push(build())
    }
  } finally {
    on.mockRestore()
    // what started a timer (chat's presence sweep, the credential clock) stops it
    for (const each of built)
      if (typeof each === 'object' && each !== null && 'close' in each)
        await (each as { close(): unknown }).close()
  }
  return registered
}

// biome-ignore lint/suspicious/noExplicitAny: the generated document is walked as plain JSON
type Json = Record<string, any>

/** `#/channels/ws/messages/client.any` in the document. */
const resolved = (document: Json, ref: string): Json =>
  ref
    .slice(2)
    .split('/')
    .reduce((node: Json, key) => node[key.replaceAll('~1', '/').replaceAll('~0', '~')], document)

/** Each message a client sends, as the AsyncAPI document lists them (its channels' `receive` operations). */
function documentedClientMessages(document: Json): { where: string; payload: unknown }[] {
  const messages: { where: string; payload: unknown }[] = []
  for (const [id, operation] of Object.entries(document.operations as Json)) {
    if (operation.action !== 'receive') continue
    const address = resolved(document, operation.channel.$ref).address
    // an event topic's receive is a service consuming it, not a client: only the realtime channel's
    if (!id.startsWith('socketio.') && !id.startsWith('ws.')) continue
    for (const { $ref } of operation.messages as { $ref: string }[]) {
      let message = resolved(document, $ref)
      if (typeof message.$ref === 'string') message = resolved(document, message.$ref)
      messages.push({ where: `${address} ${message.name}`, payload: message.payload })
    }
  }
  return messages
}

describe('realtime client events: every payload bounded', () => {
  let registered: Awaited<ReturnType<typeof registeredEvents>>
  beforeAll(async () => {
    registered = await registeredEvents()
  })
  afterAll(() => vi.restoreAllMocks())

  it("when each namespace's channel is built, then every event of realtimeScopes is registered with a bounded schema", () => {
    const expected = [
      ...Object.entries(realtimeScopes.namespaces).flatMap(([path, scopes]) =>
        Object.keys(scopes.events).map((event) => `${path} ${event}`),
      ),
      ...Object.keys(realtimeScopes.session).map((event) => `session ${event}`),
    ]
    expect(registered.map(({ where, event }) => `${where} ${event}`).sort()).toEqual(expected.sort())
    const unbounded = registered.flatMap(({ where, event, schema }) =>
      unboundedIn(JSON.parse(JSON.stringify(schema)), `${where} ${event}`),
    )
    expect(unbounded).toEqual([])
  })

  it('when the AsyncAPI document is read, then every message a client may send, on a namespace or /ws, is bounded', () => {
    const document = asyncApiDocument() as Json
    const messages = documentedClientMessages(document)
    // every namespace's events, auth:refresh on each, and /ws's two
    expect(messages.map(({ where }) => where)).toEqual(
      expect.arrayContaining(['/chat chat:message', '/collab auth:refresh', '/ws auth:refresh', '/ws any']),
    )
    const unbounded = messages.flatMap(({ where, payload }) =>
      unboundedIn(payload, where, document.components?.schemas ?? {}),
    )
    expect(unbounded).toEqual([])
  })

  it('when a payload schema has an unbounded string, then the check names it (it bites)', () => {
    const document = asyncApiDocument() as Json
    const [first] = documentedClientMessages(document).filter(({ where }) => where === '/chat chat:message')
    const loosened = JSON.parse(JSON.stringify(first?.payload))
    delete loosened.properties.text.maxLength
    expect(unboundedIn(loosened, '/chat chat:message')).toEqual([
      '/chat chat:message.text: a string without maxLength',
    ])
  })
})
