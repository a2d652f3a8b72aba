// The operators' view of the running system through the gateway: every routed service with its instances in Consul
// and their health, and its maintenance switch (GET /api/v1/admin/services; Consul KV meridian/<name>/maintenance);
// the dead-letter topics with their events, and their replay (/api/v1/admin/dead-letters).
import { type Static, Type } from 'typebox'
import { QueryObject } from './pagination.ts'
import { Nullable } from './schema-kinds.ts'

export const InstanceHealth = Type.Union(
  [Type.Literal('passing'), Type.Literal('warning'), Type.Literal('critical')],
  { description: "the worst of the instance's checks" },
)
export type InstanceHealth = Static<typeof InstanceHealth>

export const ServiceInstanceView = Type.Object(
  {
    id: Type.String(),
    address: Type.String(),
    port: Type.Integer(),
    health: InstanceHealth,
    checks: Type.Array(
      Type.Object(
        { name: Type.String(), status: Type.String(), output: Type.String() },
        { additionalProperties: false },
      ),
    ),
  },
  { additionalProperties: false },
)
export type ServiceInstanceView = Static<typeof ServiceInstanceView>

export const MaintenanceSetting = Type.Object(
  {
    message: Type.String({ minLength: 1, maxLength: 500 }),
    retryAfter: Type.Integer({ minimum: 1, maximum: 86_400, description: 'seconds, sent as Retry-After' }),
  },
  { additionalProperties: false },
)
export type MaintenanceSetting = Static<typeof MaintenanceSetting>

export const OperatedService = Type.Object(
  {
    /** the service's own name (the route table's, and its settings' in Consul KV) */
    name: Type.String(),
    /** the name its instances register under in Consul */
    consulName: Type.String(),
    instances: Type.Array(ServiceInstanceView),
    /** on: every route but health and metrics answers 503; null: serving */
    maintenance: Type.Union([MaintenanceSetting, Type.Null()]),
  },
  { additionalProperties: false },
)
export type OperatedService = Static<typeof OperatedService>

export const OperatedServices = Type.Object(
  { data: Type.Array(OperatedService) },
  { additionalProperties: false },
)
export type OperatedServices = Static<typeof OperatedServices>

// the bounds are what the patterns allow
export const OperatedServiceParams = Type.Object({
  name: Type.String({ pattern: '^[a-z][a-z0-9-]{0,62}$', maxLength: 63 }),
})
export type OperatedServiceParams = Static<typeof OperatedServiceParams>

/** PUT …/maintenance: both optional (the service's defaults: "Service under maintenance", 60 s). */
export const MaintenanceBody = Type.Partial(MaintenanceSetting, { additionalProperties: false })
export type MaintenanceBody = Static<typeof MaintenanceBody>

export const DeadLetterTopic = Type.Object(
  {
    /** `{topic}.dlt` (without the run's KAFKA_NAMESPACE) */
    topic: Type.String(),
    originalTopic: Type.String(),
    total: Type.Integer({ minimum: 0, description: 'events the topic holds' }),
    pending: Type.Integer({ minimum: 0, description: 'of those, events no replay has re-published yet' }),
  },
  { additionalProperties: false },
)
export type DeadLetterTopic = Static<typeof DeadLetterTopic>

export const DeadLetterTopics = Type.Object(
  { data: Type.Array(DeadLetterTopic) },
  { additionalProperties: false },
)
export type DeadLetterTopics = Static<typeof DeadLetterTopics>

export const DeadLetterTopicParams = Type.Object({
  topic: Type.String({
    pattern: '^[A-Za-z0-9][A-Za-z0-9._-]{0,95}\\.dlt$',
    maxLength: 100,
    description: 'e.g. order.placed.dlt',
  }),
})
export type DeadLetterTopicParams = Static<typeof DeadLetterTopicParams>

/** limit is optional (50 when absent), as every list's is. */
export const DeadLetterEventsQuery = QueryObject(
  {
    limit: Type.Integer({
      minimum: 1,
      maximum: 200,
      default: 50,
      description: 'how many of the newest events',
    }),
  },
  { additionalProperties: false },
)
export type DeadLetterEventsQuery = Static<typeof DeadLetterEventsQuery>

export const DeadLetterEvent = Type.Object(
  {
    partition: Type.Integer({ minimum: 0 }),
    offset: Type.String({ pattern: '^[0-9]+$' }),
    key: Type.String(),
    eventId: Nullable(Type.String({ description: 'the message-id header' })),
    eventType: Nullable(
      Type.String({ description: "the envelope's type; null when the value is not an event" }),
    ),
    originalTopic: Type.String(),
    consumerGroup: Nullable(Type.String({ description: 'the group that gave up on it' })),
    errorMessage: Nullable(Type.String()),
    deadLetteredAt: Nullable(Type.String({ format: 'date-time', maxLength: 64 })),
    retryCount: Nullable(Type.Integer({ minimum: 0 })),
    replayed: Type.Boolean({ description: 'a replay has re-published it' }),
    value: Type.String({ description: 'the message as it was parked (cut at 4,000 characters)' }),
  },
  { additionalProperties: false },
)
export type DeadLetterEvent = Static<typeof DeadLetterEvent>

/** A dead-letter topic with its newest events, newest first. */
export const DeadLetterEvents = Type.Object(
  { topic: DeadLetterTopic, data: Type.Array(DeadLetterEvent) },
  { additionalProperties: false },
)
export type DeadLetterEvents = Static<typeof DeadLetterEvents>

export const DeadLetterReplay = Type.Object(
  {
    topic: DeadLetterTopic,
    replayed: Type.Integer({ minimum: 0, description: 'events re-published by this replay' }),
    to: Type.Record(Type.String(), Type.Integer({ minimum: 0 }), {
      description: 'how many went to each topic',
    }),
  },
  { additionalProperties: false },
)
export type DeadLetterReplay = Static<typeof DeadLetterReplay>

/** GET /console/config.json (the gateway): what the console knows of the deployment that serves it. */
export const ConsoleConfig = Type.Object(
  {
    paymentProviderUrl: Type.String({
      description:
        'where a browser makes a payment method of a card (the payment provider, its simulator in development)',
    }),
    signInHint: Type.Optional(
      Type.String({
        maxLength: 500,
        description:
          'development only: a line the sign-in page shows, e.g. the demo accounts of ./scripts/dev --demo ' +
          '(CONSOLE_SIGN_IN_HINT; a production gateway refuses one)',
      }),
    ),
  },
  { additionalProperties: false },
)
export type ConsoleConfig = Static<typeof ConsoleConfig>
