// The AsyncAPI 3.1 document of Meridian's asynchronous interface, generated from these contracts: the domain events on
// Kafka (asyncapi-events.ts) and the realtime channel (asyncapi-realtime.ts). docs/asyncapi.json is this document
// (`pnpm --filter @meridian/contracts asyncapi` writes it); the gateway serves it at /docs/asyncapi.json.
import { Type } from 'typebox'
import { eventsPartOfDocument } from './asyncapi-events.ts'
import { realtimeChannelsAndOperations, sessionMessages } from './asyncapi-realtime.ts'
import { realtimePaths } from './realtime.ts'

export { dataSchemaName, eventParties, kafkaTopicLayout } from './asyncapi-events.ts'

/** The document as plain JSON (what JSON.stringify writes is the committed file). */
export type AsyncApiDocument = Record<string, unknown>

export function asyncApiDocument(): AsyncApiDocument {
  const events = eventsPartOfDocument()
  const realtime = realtimeChannelsAndOperations()
  // JSON round trip: TypeBox's schemas become plain data, each shared schema written out where it is used
  return JSON.parse(
    JSON.stringify({
      asyncapi: '3.1.0',
      id: 'urn:meridian:async-interface',
      info: {
        title: 'Meridian: domain events and the realtime channel',
        version: '1.0.0',
        description: [
          'Generated from @meridian/contracts; do not edit (docs/reference/domain-events.md says how to regenerate it).',
          'Domain events: one Kafka topic per event type, key = aggregate id, value = the JSON envelope',
          '{id, type, source, schemaVersion, timestamp, data}; each message gives its data schema and, as',
          'x-schema-version, the version this release writes. Topics are prefixed with KAFKA_NAMESPACE when it is set.',
          'Realtime: Socket.IO v5 (Engine.IO v4) at /socket.io/, one channel per namespace, each message named as the',
          "Socket.IO event; a client event's reply is its acknowledgement's answer. /ws is plain RFC 6455 with JSON messages.",
        ].join('\n'),
      },
      defaultContentType: 'application/json',
      servers: {
        kafka: {
          host: 'localhost:9092',
          protocol: 'kafka',
          description:
            'the brokers of KAFKA_BROKERS; services only publish and consume, clients never connect',
        },
        realtime: {
          host: 'localhost:8080',
          protocol: 'ws',
          pathname: realtimePaths.engine,
          description:
            'Socket.IO through the gateway (the realtime-gateway itself listens on 3007): a bearer token or the session cookie',
        },
        rawWebSocket: {
          host: 'localhost:8080',
          protocol: 'ws',
          pathname: realtimePaths.rawWebSocket,
          description:
            'the raw endpoint through the gateway: the session cookie or Authorization: Bearer on the upgrade',
        },
      },
      channels: { ...events.channels, ...realtime.channels },
      operations: { ...events.operations, ...realtime.operations },
      components: {
        schemas: events.schemas,
        messages: { ...events.messages, ...sessionMessages() },
      },
    }),
  ) as AsyncApiDocument
}

/** The document as the committed file and the gateway write it: two-space JSON and a final newline. */
export const asyncApiText = (document: AsyncApiDocument): string => `${JSON.stringify(document, null, 2)}\n`

/** What /docs/asyncapi.json answers: the document (described here only as far as a client relies on it). */
export const AsyncApiDocumentBody = Type.Object(
  {
    asyncapi: Type.String({ description: 'the AsyncAPI version, 3.1.0' }),
    id: Type.String(),
    info: Type.Object({ title: Type.String(), version: Type.String(), description: Type.String() }),
    servers: Type.Record(Type.String(), Type.Unknown()),
    channels: Type.Record(Type.String(), Type.Unknown()),
    operations: Type.Record(Type.String(), Type.Unknown()),
    components: Type.Record(Type.String(), Type.Unknown()),
  },
  { description: 'AsyncAPI 3.1 document of the domain events and the realtime channel' },
)
