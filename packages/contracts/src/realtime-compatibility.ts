// The compatibility check of the realtime payloads: compares the realtime channels (the Socket.IO namespaces and the
// plain WebSocket) of the released AsyncAPI document with the ones these contracts generate, and names every change
// that one side of a rolling upgrade could not read. docs/reference/realtime.md states the rule in words.
//
// Clients and servers move at different times: browsers keep a page (and its SDK) open across a deployment, and
// while realtime-gateway's instances are replaced one at a time a new SDK may meet an old instance. So each message
// must be readable both ways: what a released writer sends is read by the new reader, and what the new writer sends
// by a released reader, whichever side writes it (the server for `server.*` and `ack.*`, the client for `client.*`).
// Realtime payloads carry no version: a change that is not compatible is a new message name beside the old one.
import { unacceptedWrites } from './event-compatibility.ts'

type Schema = Record<string, unknown>

/** One incompatibility: which channel and message (the document's names), where in its payload, and why. */
export interface RealtimeCompatibilityProblem {
  channel: string
  message: string
  path: string
  problem: string
}

const isSchema = (value: unknown): value is Schema =>
  typeof value === 'object' && value !== null && !Array.isArray(value)

/** Who writes a message: the client for `client.*`, the server for its events (`server.*`) and its answers (`ack.*`). */
const writerOf = (message: string) => (message.startsWith('client.') ? 'client' : 'server')
const readerOf = (message: string) => (writerOf(message) === 'client' ? 'server' : 'client')

/**
 * Every incompatibility between the released document's realtime channels (`baseline`) and the current ones: a
 * channel or message removed (released clients still use it), and a payload that a released reader could not read
 * from a new writer, or a new reader from a released writer (both directions of unacceptedWrites).
 */
export function realtimeCompatibilityProblems(
  baseline: Schema,
  current: Schema,
): RealtimeCompatibilityProblem[] {
  const problems: RealtimeCompatibilityProblem[] = []
  const now = realtimeChannels(current)
  for (const [channel, oldMessages] of realtimeChannels(baseline)) {
    const newMessages = now.get(channel)
    if (!newMessages) {
      problems.push({
        channel,
        message: '*',
        path: 'channel',
        problem: 'the channel was removed; released clients still connect to it',
      })
      continue
    }
    for (const [message, oldPayload] of oldMessages) {
      const report = (path: string, problem: string) => problems.push({ channel, message, path, problem })
      const newPayload = newMessages.get(message)
      const writer = writerOf(message)
      const reader = readerOf(message)
      if (!newPayload) {
        report(
          'message',
          writer === 'client'
            ? 'the message was removed; released clients still send it'
            : 'the message was removed; released clients still wait for it',
        )
        continue
      }
      for (const text of unacceptedWrites(oldPayload, newPayload, 'payload'))
        report(pathOf(text), `a released ${reader} cannot read what a new ${writer} sends: ${reasonOf(text)}`)
      for (const text of unacceptedWrites(newPayload, oldPayload, 'payload'))
        report(pathOf(text), `a new ${reader} cannot read what a released ${writer} sends: ${reasonOf(text)}`)
    }
  }
  return problems
}

const pathOf = (text: string) => text.slice(0, text.indexOf(': '))
const reasonOf = (text: string) => text.slice(text.indexOf(': ') + 2)

/**
 * The realtime channels of a document (those on a server other than Kafka), each with its messages' payloads; a
 * message shared by every namespace (`{$ref: '#/components/messages/…'}`) is resolved.
 */
function realtimeChannels(document: Schema): Map<string, Map<string, Schema>> {
  const channels = isSchema(document.channels) ? document.channels : {}
  const components = isSchema(document.components) ? document.components : {}
  const shared = isSchema(components.messages) ? components.messages : {}
  const resolve = (body: unknown): unknown => {
    const ref = isSchema(body) && typeof body.$ref === 'string' ? body.$ref : undefined
    return ref?.startsWith(sharedMessage) ? shared[ref.slice(sharedMessage.length)] : body
  }
  const found = new Map<string, Map<string, Schema>>()
  for (const [name, channel] of Object.entries(channels)) {
    if (!isSchema(channel) || !isRealtime(channel)) continue
    const messages = isSchema(channel.messages) ? channel.messages : {}
    const payloads = new Map<string, Schema>()
    for (const [message, reference] of Object.entries(messages)) {
      const body = resolve(reference)
      if (isSchema(body) && isSchema(body.payload)) payloads.set(message, body.payload)
    }
    found.set(name, payloads)
  }
  return found
}

const sharedMessage = '#/components/messages/'

/** A channel served by the realtime servers (Socket.IO, the plain WebSocket), not by Kafka. */
function isRealtime(channel: Schema): boolean {
  const servers = Array.isArray(channel.servers) ? channel.servers : []
  return servers.some(
    (server) => isSchema(server) && typeof server.$ref === 'string' && server.$ref !== '#/servers/kafka',
  )
}
