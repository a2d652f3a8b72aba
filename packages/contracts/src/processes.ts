// Long-running processes as operators see them (GET /api/v1/admin/processes): every instance of every process type a
// service declares (the order saga is type `order`, a return type `return`), its state, the step it waits for, its
// compensations, its step log, and the actions an operator can take. The order saga's own view (/admin/sagas) stays.
import { type Static, Type } from 'typebox'
import { OrderLinks } from './orders.ts'
import { pageParameters, QueryObject, sortParameter } from './pagination.ts'
import { CompensationState, SagaLogEntry } from './sagas.ts'
import { StringEnum } from './schema-kinds.ts'

const Timestamp = Type.String({ format: 'date-time', maxLength: 64 })
/** A declared name (a process type, a state): its maxLength is what the pattern allows. */
const namePattern = '^[a-z][a-z0-9_]{0,39}$'
const Name = Type.String({ pattern: namePattern, maxLength: 40, description: 'a declared name' })

/** One line of an instance's step log: what happened to which step, when, on which event (the saga's lines' shape). */
export const ProcessLogEntry = Type.Object(
  {
    ...SagaLogEntry.properties,
    step: Type.String({ description: 'a step of the process, or the process type for the instance itself' }),
  },
  { additionalProperties: false },
)
export type ProcessLogEntry = Static<typeof ProcessLogEntry>

export const ProcessInstance = Type.Object(
  {
    type: Name,
    id: Type.String({ description: "the instance's key within its type (the order's id, the return's id)" }),
    state: Type.String({ description: "one of its type's states (GET /admin/processes/types)" }),
    step: Type.Union([Type.String(), Type.Null()], {
      description: 'the step awaited now; null when none is',
    }),
    attempt: Type.Integer({ minimum: 1, description: "the awaited step's attempt" }),
    deadline: Type.Union([Timestamp, Type.Null()], {
      description:
        'when the awaited step times out (asked again, or failed / escalated after its last attempt)',
    }),
    compensation: CompensationState,
    failedStep: Type.Union([Type.String(), Type.Null()]),
    failureReason: Type.Union([Type.String(), Type.Null()]),
    escalated: Type.Boolean({
      description: 'a step or a compensation failed after its retries: an operator must act',
    }),
    escalation: Type.Optional(
      Type.String({ description: 'why an operator must act; present while the instance is escalated' }),
    ),
    data: Type.Record(
      Type.String(),
      Type.Union([Type.String(), Type.Number(), Type.Boolean(), Type.Null()]),
      {
        description: "the instance's own fields (the ids its steps answered with, …)",
      },
    ),
    createdAt: Timestamp,
    updatedAt: Timestamp,
    /** in GET /admin/processes/{type}/{id} only */
    log: Type.Optional(Type.Array(ProcessLogEntry)),
    _links: OrderLinks,
  },
  { additionalProperties: false },
)
export type ProcessInstance = Static<typeof ProcessInstance>

/** A declared process type: what its instances can be, for filters and views. */
export const ProcessType = Type.Object(
  {
    type: Name,
    description: Type.String(),
    states: Type.Array(Type.String()),
    finalStates: Type.Array(Type.String()),
    steps: Type.Array(
      Type.Object(
        {
          name: Type.String(),
          kind: StringEnum(['forward', 'compensation'] as const),
          attempts: Type.Integer({ minimum: 1 }),
          deadlineMs: Type.Integer({ minimum: 0 }),
        },
        { additionalProperties: false },
      ),
    ),
  },
  { additionalProperties: false },
)
export type ProcessType = Static<typeof ProcessType>

export const ProcessTypes = Type.Object({ data: Type.Array(ProcessType) }, { additionalProperties: false })
export type ProcessTypes = Static<typeof ProcessTypes>

export const processSortFields = ['createdAt', 'updatedAt'] as const

/** GET /api/v1/admin/processes: filter by type, state, compensation, escalated. */
export const ProcessListQuery = QueryObject(
  {
    ...pageParameters,
    sort: sortParameter(processSortFields, {
      description: `field:asc or field:desc, comma-separated; fields: ${processSortFields.join(', ')}`,
    }),
    type: Type.Optional(Name),
    state: Type.Optional(Type.String({ pattern: namePattern, maxLength: 40 })),
    compensation: Type.Optional(CompensationState),
    escalated: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
)
export type ProcessListQuery = Static<typeof ProcessListQuery>

export const ProcessParams = Type.Object({
  type: Name,
  id: Type.String({ minLength: 1, maxLength: 100, pattern: '^[A-Za-z0-9_.:-]+$' }),
})
export type ProcessParams = Static<typeof ProcessParams>

/** POST /admin/processes/{type}/{id}/compensate: why (kept in the step log). */
export const CompensateProcessBody = Type.Object(
  { reason: Type.Optional(Type.String({ minLength: 1, maxLength: 300 })) },
  { additionalProperties: false },
)
export type CompensateProcessBody = Static<typeof CompensateProcessBody>

/**
 * A process's command, and the answer to it, carry this stamp as a Kafka header (`process` on the command,
 * `process-answer` on every event its handler writes in reply), JSON-encoded: the process manager routes an answer by
 * it to the instance and step that asked, so the services that answer never learn a process's ids.
 */
export const ProcessStamp = Type.Object(
  {
    type: Name,
    key: Type.String({ minLength: 1, maxLength: 255, description: "the instance's key within its type" }),
    step: Type.String({ pattern: namePattern, maxLength: 40, description: 'the step that asked' }),
    attempt: Type.Integer({ minimum: 1, maximum: 1000, description: "the step's attempt that asked" }),
  },
  { additionalProperties: false },
)
export type ProcessStamp = Static<typeof ProcessStamp>
/** The longest stamp header taken: the fields' maxLengths with the JSON around them fit under it. */
export const maxProcessStampLength = 512
