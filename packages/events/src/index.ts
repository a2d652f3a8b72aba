// @meridian/events: domain events on Kafka through a transactional outbox, consumed idempotently with retries.

// the client's TLS and SASL from KAFKA_TLS* and KAFKA_SASL_*: createKafka({ brokers, clientId, ...kafkaSecurityFromEnv(config) })
export {
  type KafkaSasl,
  type KafkaSecurity,
  KafkaSecurityError,
  type KafkaSecurityVariables,
  type KafkaTls,
  kafkaSecurityFromEnv,
} from '@meridian/kafka-connection'
export type {
  AnyTypeConsumption,
  BatchWork,
  BatchWorkRunner,
  GroupConsumeOptions,
  TypeConsumption,
} from './consume-options.ts'
export {
  type ConsumeContext,
  type ConsumeOptions,
  type ConsumeTypesOptions,
  consume,
  consumeTypes,
  type EventConsumer,
  type EventHandler,
} from './consumer.ts'
export type { ConsumerLogger } from './consumer-logger.ts'
export type { DeadLetterHook, DeadLetterInfo, DeadLetterReason } from './dead-letter.ts'
export {
  type DeadLetteredEvent,
  type DeadLetterTopicSummary,
  type DeadLetterTopicsOptions,
  listDeadLetterTopics,
  type ReadDeadLettersOptions,
  readDeadLetters,
} from './dead-letter-topics.ts'
export {
  type CatalogueEvent,
  createEvent,
  type DomainEvent,
  InvalidEventError,
  parseEvent,
  validateEvent,
} from './envelope.ts'
export { newEventId } from './event-id.ts'
export { createEventMetrics, type EventMetrics } from './event-metrics.ts'
export { eventMigrationsDir, migrateEventTables, migrateServiceDatabase } from './event-tables.ts'
export {
  type AnyServiceConsumer,
  consumer,
  type EventsPluginOptions,
  eventsPlugin,
  type ServiceConsumer,
} from './events-plugin.ts'
export { type CleanInboxOptions, cleanInbox, defaultInboxRetentionMs, recordInInbox } from './inbox.ts'
export {
  createEventProducer,
  createKafka,
  type EventProducer,
  headerText,
  type KafkaOptions,
  type OutgoingMessage,
} from './kafka.ts'
export {
  type AlsoPublishAs,
  type AppendToOutboxOptions,
  appendToOutbox,
  OUTBOX_CHANNEL,
  type OutboxDeadLetter,
  type OutboxEntry,
} from './outbox.ts'
export {
  createOutboxRelay,
  OUTBOX_RELAY_LOCK_NAME,
  type OutboxRelay,
  type OutboxRelayLogger,
  type OutboxRelayOptions,
  type PublishedOutboxRow,
} from './outbox-relay.ts'
export {
  answeredStamp,
  inAnswerTo,
  ProcessHeader,
  type ProcessStamp,
  stampIn,
  stampText,
} from './process-stamp.ts'
export {
  ReplayInProgressError,
  type ReplayOptions,
  type ReplayResult,
  replayDeadLetters,
  replayGroupOf,
} from './replay.ts'
export { deadLetterTopicOf, defaultRetryDelaysMs, RetryHeader, retryTopicOf } from './retry.ts'
export {
  type ConsumerHandlers,
  type ConsumersOptions,
  consumersOf,
  type RegisterServiceEventsOptions,
  registerServiceEvents,
  type ServiceEvents,
  type WithServiceEvents,
} from './service-events.ts'
export {
  activeTraceContext,
  contextFromStored,
  maxTraceHeaderLength,
  readTraceContext,
  type StoredTraceContext,
  TraceHeader,
} from './tracing.ts'
