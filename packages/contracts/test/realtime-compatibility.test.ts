// The realtime payloads' compatibility check: main's Socket.IO and WebSocket messages against the released document,
// and deliberately breaking changes that it must report (and compatible ones it must let through).
import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { asyncApiDocument } from '../src/asyncapi.ts'
import { realtimeCompatibilityProblems } from '../src/realtime-compatibility.ts'

const released = () =>
  JSON.parse(readFileSync(new URL('../../../docs/asyncapi.released.json', import.meta.url), 'utf8'))

// biome-ignore lint/suspicious/noExplicitAny: the generated document is edited as plain JSON
type Json = Record<string, any>

/** The generated document with one realtime message's payload changed by `change`. */
function changed(channel: string, message: string, change: (payload: Json, document: Json) => void): Json {
  const document = asyncApiDocument() as Json
  change(document.channels[channel].messages[message].payload, document)
  return document
}

const problemsOf = (current: Json) =>
  realtimeCompatibilityProblems(asyncApiDocument(), current).map(
    ({ channel, message, path, problem }) => `${channel} ${message} ${path}: ${problem}`,
  )

describe('the realtime payloads compatibility check', () => {
  it("when main's contracts are compared with the released document, then no realtime message breaks a client or a server", () => {
    // a failure here: a payload one side of a rolling upgrade cannot read; send it under a new message name instead
    const baseline = released()
    const messages = Object.entries(baseline.channels as Json)
      .filter(([name]) => name.startsWith('socketio.') || name === 'ws')
      .flatMap(([, channel]) => Object.keys(channel.messages))
    // the baseline holds the realtime messages (a document without them would leave nothing to compare)
    expect(messages.length).toBeGreaterThan(50)
    const problems = realtimeCompatibilityProblems(baseline, asyncApiDocument())
    expect(
      problems.map(({ channel, message, path, problem }) => `${channel} ${message} ${path}: ${problem}`),
    ).toEqual([])
  })

  it('when a required field of a server message is removed, then released clients are reported unable to read it', () => {
    const problems = problemsOf(
      changed('socketio.chat', 'server.chat.message', (payload) => {
        delete payload.properties.username
        payload.required = payload.required.filter((name: string) => name !== 'username')
      }),
    )
    expect(problems).toEqual([
      'socketio.chat server.chat.message payload.username: a released client cannot read what a new server sends: required when read, not written',
    ])
  })

  it('when a client message gets a new required field, then the new server is reported unable to read released clients', () => {
    const problems = problemsOf(
      changed('socketio.chat', 'client.chat.message', (payload) => {
        payload.properties.locale = { type: 'string', maxLength: 16 }
        payload.required = [...payload.required, 'locale']
      }),
    )
    expect(problems).toEqual([
      'socketio.chat client.chat.message payload.locale: a released server cannot read what a new client sends: written, but no other property is read (additionalProperties: false)',
      'socketio.chat client.chat.message payload.locale: a new server cannot read what a released client sends: required when read, not written',
    ])
  })

  it("when a shared message's field changes type, then every namespace that carries it reports both sides", () => {
    const current = asyncApiDocument() as Json
    current.components.messages['server.auth.expiring'].payload.properties.expiresAt = { type: 'string' }
    const problems = problemsOf(current).filter((text) => text.startsWith('socketio.chat '))
    expect(problems).toEqual([
      'socketio.chat server.auth.expiring payload.expiresAt: a released client cannot read what a new server sends: type string is written, integer is read',
      'socketio.chat server.auth.expiring payload.expiresAt: a new client cannot read what a released server sends: type integer is written, string is read',
    ])
    // the six Socket.IO namespaces share it (the plain WebSocket has its own)
    expect(problemsOf(current)).toHaveLength(12)
  })

  it('when a message or a namespace is removed, then released clients are reported to still use it', () => {
    const current = asyncApiDocument() as Json
    delete current.channels['socketio.notifications'].messages['client.notifications.read']
    delete current.channels['socketio.dashboard']
    expect(problemsOf(current)).toEqual([
      'socketio.notifications client.notifications.read message: the message was removed; released clients still send it',
      'socketio.dashboard * channel: the channel was removed; released clients still connect to it',
    ])
  })

  it('when a server message gains an optional field its released clients ignore, then nothing is reported', () => {
    const current = changed('socketio.chat', 'server.chat.message', (payload) => {
      payload.properties.editedAt = { type: 'string', format: 'date-time', maxLength: 64 }
      payload.description = 'a message of the room'
    })
    expect(problemsOf(current)).toEqual([])
  })

  it("when a client message's bound is loosened, then released servers are reported, since a new client may meet one", () => {
    const current = changed('socketio.chat', 'client.chat.message', (payload) => {
      payload.properties.text.maxLength = 10_000
    })
    expect(problemsOf(current)).toEqual([
      'socketio.chat client.chat.message payload.text: a released server cannot read what a new client sends: maxLength 5000 is read, 10000 is written',
    ])
  })
})
