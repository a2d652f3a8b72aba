// The domain event envelope (spec: Domain event envelope) and the data schema of each event type with its version.
import { type Static, type TSchema, Type } from 'typebox'

export const EventEnvelopeBase = Type.Object({
  id: Type.String({ minLength: 1, description: 'unique, sortable event id' }),
  type: Type.String({
    pattern: '^[a-z]+(\\.[a-z_0-9]+)+$',
    description: 'dotted past-tense name, e.g. order.placed',
  }),
  source: Type.String({ minLength: 1, description: 'producing service' }),
  schemaVersion: Type.String({ pattern: '^\\d+\\.\\d+\\.\\d+$' }),
  timestamp: Type.String({ format: 'date-time' }),
  data: Type.Record(Type.String(), Type.Unknown()),
})
export type EventEnvelopeBase = Static<typeof EventEnvelopeBase>

/** The envelope of one event type, its data checked against that type's schema. */
export const EventEnvelope = <Name extends string, Data extends TSchema>(type: Name, data: Data) =>
  Type.Object({
    id: EventEnvelopeBase.properties.id,
    type: Type.Literal(type),
    source: EventEnvelopeBase.properties.source,
    schemaVersion: EventEnvelopeBase.properties.schemaVersion,
    timestamp: EventEnvelopeBase.properties.timestamp,
    data,
  })

/** user.registered 1.0.0 — published by auth when a user is created (never carries the password). */
export const UserRegisteredData = Type.Object({
  userId: Type.String({ format: 'uuid' }),
  email: Type.String({ format: 'email' }),
  name: Type.String(),
  role: Type.String(),
})
export type UserRegisteredData = Static<typeof UserRegisteredData>
export const UserRegistered = EventEnvelope('user.registered', UserRegisteredData)
export type UserRegistered = Static<typeof UserRegistered>

/** Every event type with its current schema version and data schema. */
export const eventCatalogue = {
  'user.registered': { version: '1.0.0', data: UserRegisteredData },
} as const satisfies Record<string, { version: string; data: TSchema }>
