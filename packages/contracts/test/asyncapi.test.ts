// The generated AsyncAPI document: valid for @asyncapi/parser, equal to the committed docs/asyncapi.json, and in step
// with infra/topics.json and the services' consumers.
import { readdirSync, readFileSync } from 'node:fs'
import { Parser } from '@asyncapi/parser'
import { describe, expect, it } from 'vitest'
import {
  asyncApiDocument,
  asyncApiText,
  dataSchemaName,
  eventParties,
  kafkaTopicLayout,
} from '../src/asyncapi.ts'
import { eventCatalogue } from '../src/events.ts'
import { realtimePaths } from '../src/realtime.ts'

const repository = new URL('../../../', import.meta.url)
const read = (path: string) => readFileSync(new URL(path, repository), 'utf8')

/** The parser's errors and warnings (severity 0 and 1) as `path: message`. */
async function diagnosticsOf(document: unknown): Promise<string[]> {
  const { diagnostics } = await new Parser().parse(JSON.stringify(document))
  return diagnostics
    .filter((diagnostic) => diagnostic.severity <= 1)
    .map((diagnostic) => `${diagnostic.path.join('.')}: ${diagnostic.message}`)
}

// biome-ignore lint/suspicious/noExplicitAny: the generated document is walked as plain JSON
type Json = Record<string, any>

describe('the AsyncAPI document', () => {
  it('when the contracts generate it, then @asyncapi/parser finds no error and no warning', async () => {
    expect(await diagnosticsOf(asyncApiDocument())).toEqual([])
  })

  it('when an operation names a message its channel lacks, then the parser reports it (the validation bites)', async () => {
    const broken = asyncApiDocument() as Json
    broken.operations['order.placed.publish'].messages = [
      { $ref: '#/channels/order.placed/messages/nothing' },
    ]
    expect((await diagnosticsOf(broken)).length).toBeGreaterThan(0)
  })

  it('when docs/asyncapi.json is compared with what the contracts generate, then it is the same text', () => {
    // a difference: run `pnpm --filter @meridian/contracts asyncapi` and commit docs/asyncapi.json
    expect(read('docs/asyncapi.json')).toBe(asyncApiText(asyncApiDocument()))
  })

  it('when an event type is looked up, then its topic carries its envelope, data schema and version', () => {
    const document = asyncApiDocument() as Json
    for (const [type, { version, data }] of Object.entries(eventCatalogue)) {
      expect(document.channels[type].address).toBe(type)
      expect(document.components.messages[type]['x-schema-version']).toBe(version)
      expect(document.components.messages[type].payload.properties.type.const).toBe(type)
      expect(document.components.messages[type].payload.properties.data.$ref).toBe(
        `#/components/schemas/${dataSchemaName(type)}`,
      )
      expect(document.components.schemas[dataSchemaName(type)]).toEqual(JSON.parse(JSON.stringify(data)))
    }
    expect(document.channels.retry.parameters.attempt.enum).toEqual(['1', '2', '3'])
  })

  it('when the realtime channel is looked up, then every namespace is a channel and acknowledged events have a reply', () => {
    const document = asyncApiDocument() as Json
    const addresses = Object.values(document.channels).map((channel) => (channel as Json).address)
    for (const path of Object.values(realtimePaths.namespaces)) expect(addresses).toContain(path)
    expect(addresses).toContain(realtimePaths.rawWebSocket)
    const join = document.operations['socketio.chat.receive.chat.join']
    expect(join.action).toBe('receive')
    expect(join.reply.messages).toEqual([{ $ref: '#/channels/socketio.chat/messages/ack.chat.join' }])
    expect(document.operations['socketio.chat.receive.chat.typing'].reply).toBeUndefined()
  })

  it("when docs/reference/domain-events.md's catalogue table is read, then it names each type's version, producer and consumers", () => {
    const page = read('docs/reference/domain-events.md')
    const table = page.slice(page.indexOf('| type | version | producer | consumers |'))
    const rows = table.split('\n').slice(2)
    const cells = rows
      .slice(
        0,
        rows.findIndex((row) => !row.startsWith('|')),
      )
      .map((row) =>
        row
          .split('|')
          .slice(1, 5)
          .map((cell) => cell.trim().replaceAll('`', '')),
      )
    expect(cells).toEqual(
      Object.entries(eventCatalogue).map(([type, { version }]) => {
        const { producer, consumers } = eventParties[type as keyof typeof eventParties]
        return [type, version, producer, consumers.join(', ') || '—']
      }),
    )
  })

  it('when infra/topics.json is read, then it declares the layout and exactly the catalogue', () => {
    const topics = JSON.parse(read('infra/topics.json')) as Json
    expect({ partitions: topics.partitions, retries: topics.retries }).toEqual(kafkaTopicLayout)
    expect([...topics.eventTypes].sort()).toEqual(Object.keys(eventCatalogue).sort())
  })

  it("when the services' consumers are read, then each event type's consumers are the ones the document names", () => {
    const consumed = new Map<string, string[]>()
    for (const service of readdirSync(new URL('services/', repository))) {
      let source: string
      try {
        source = read(`services/${service}/src/events/consumers.ts`)
      } catch {
        continue
      }
      // each consumer is a key of the handlers' map the service hands to consumersOf, or (a service whose handlers
      // are its processes': order) an entry of the list of event types its consumers are checked against
      const declaredAt = source.indexOf('consumersOf(')
      if (declaredAt < 0) continue
      const listed = /export const \w+EventTypes = \[([^\]]*)\]/.exec(source)?.[1]
      const types = listed
        ? listed.matchAll(/'([a-z._0-9]+)'/g)
        : source.slice(declaredAt).matchAll(/'([a-z._0-9]+)': /g)
      for (const [, type = ''] of types) consumed.set(type, [...(consumed.get(type) ?? []), service])
    }
    for (const [type, parties] of Object.entries(eventParties))
      expect([...new Set(consumed.get(type) ?? [])].sort(), type).toEqual([...parties.consumers].sort())
  })
})
