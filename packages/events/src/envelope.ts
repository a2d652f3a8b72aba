// Creating and checking event envelopes against the catalogue in @meridian/contracts.
import { type EventData, EventEnvelopeBase, type EventType, eventCatalogue } from '@meridian/contracts'
import type { TSchema } from 'typebox'
import { Compile } from 'typebox/compile'
import { newEventId } from './event-id.ts'

export interface DomainEvent<Data = Record<string, unknown>> {
  id: string
  type: string
  source: string
  schemaVersion: string
  timestamp: string
  data: Data
}

/** An event of one catalogue type, as createEvent makes it and a consumer of that type receives it. */
export type CatalogueEvent<Type extends EventType> = DomainEvent<EventData<Type>> & { type: Type }

/** An event that can never be processed: not JSON, not an envelope, or data that breaks its type's schema. */
export class InvalidEventError extends Error {
  constructor(message: string) {
    super(message)
    this.name = 'InvalidEventError'
  }
}

const envelopeCheck = Compile(EventEnvelopeBase)
const dataChecks = new Map<string, ReturnType<typeof Compile>>()

function dataCheck(type: string) {
  let check = dataChecks.get(type)
  if (!check) {
    const entry = (eventCatalogue as Record<string, { data: TSchema }>)[type]
    if (!entry) return undefined
    check = Compile(entry.data)
    dataChecks.set(type, check)
  }
  return check
}

/**
 * A new event of a catalogue type, stamped with a fresh id, the time, the producing service and the type's current
 * schema version. Its data is checked: a producer never publishes what consumers would reject.
 */
export function createEvent<Type extends EventType>(
  type: Type,
  data: EventData<Type>,
  options: { source: string; schemaVersion?: string; now?: Date },
): CatalogueEvent<Type> {
  const event = {
    id: newEventId(options.now?.getTime()),
    type,
    source: options.source,
    schemaVersion: options.schemaVersion ?? eventCatalogue[type].version,
    timestamp: (options.now ?? new Date()).toISOString(),
    data,
  }
  validateEvent(event)
  return event
}

/** Throws InvalidEventError unless `value` is an envelope whose data matches its type's schema. */
export function validateEvent(value: unknown): asserts value is DomainEvent {
  if (!envelopeCheck.Check(value)) {
    const [first] = envelopeCheck.Errors(value)
    throw new InvalidEventError(
      `not an event envelope: ${first ? `${first.instancePath || '/'} ${first.message}` : 'invalid'}`,
    )
  }
  const check = dataCheck(value.type)
  if (!check) throw new InvalidEventError(`unknown event type '${value.type}'`)
  if (!check.Check(value.data)) {
    const [first] = check.Errors(value.data)
    throw new InvalidEventError(
      `${value.type} data: ${first ? `${first.instancePath || '/'} ${first.message}` : 'invalid'}`,
    )
  }
}

/** Parses a Kafka message value into a checked event; InvalidEventError when it is not one. */
export function parseEvent(value: Buffer | string | null): DomainEvent {
  if (value === null) throw new InvalidEventError('empty message')
  let parsed: unknown
  try {
    parsed = JSON.parse(typeof value === 'string' ? value : value.toString('utf8'))
  } catch {
    throw new InvalidEventError('message value is not JSON')
  }
  validateEvent(parsed)
  return parsed
}
