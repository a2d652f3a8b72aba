// @meridian/events: domain events on Kafka through a transactional outbox, consumed idempotently with retries.
export { createEvent, type DomainEvent, InvalidEventError, parseEvent, validateEvent } from './envelope.ts'
export { newEventId } from './event-id.ts'
export { createEventMetrics, type EventMetrics } from './event-metrics.ts'
export { eventMigrationsDir, migrateEventTables } from './event-tables.ts'
export {
  createEventProducer,
  createKafka,
  type EventProducer,
  headerText,
  type KafkaOptions,
  type OutgoingMessage,
} from './kafka.ts'
