// The order saga as operators see it (GET /api/v1/admin/sagas): one instance per order, its state, the step it
// waits for, its compensations and its step log, and the actions an operator can take.
import { type Static, Type } from 'typebox'
import { OrderLinks, OrderStatus } from './orders.ts'
import { pageParameters, QueryObject, sortParameter } from './pagination.ts'
import { StringEnum } from './schema-kinds.ts'

/**
 * The spec's saga states, and `cancelled` for an order its customer cancelled (the compensations run as for a
 * failure, but nothing failed):
 * - `created`: order.placed is out, the payment step runs
 * - `payment_processed`: charged; the inventory step runs
 * - `inventory_reserved`: stock held; the shipment step runs
 * - `shipped`: every step succeeded (final for the saga; the order goes on to delivered)
 * - `failed`: a step failed or timed out after its retries; the compensations run in reverse order
 * - `cancelled`: cancelled before shipping; the compensations run in reverse order
 */
export const sagaStates = [
  'created',
  'payment_processed',
  'inventory_reserved',
  'shipped',
  'failed',
  'cancelled',
] as const
export type SagaState = (typeof sagaStates)[number]
export const SagaState = StringEnum(sagaStates)

/** The forward steps, then the compensations (run in reverse order: release the stock, then refund). */
export const sagaSteps = ['payment', 'inventory', 'shipment', 'release', 'refund'] as const
export type SagaStep = (typeof sagaSteps)[number]
export const SagaStep = StringEnum(sagaSteps)

/**
 * Where the compensations stand: `none` (nothing to undo, or not failed), `running`, `done`, or `escalated` (a
 * compensation still failed after its retries: an operator must act, see the actions).
 */
export const compensationStates = ['none', 'running', 'done', 'escalated'] as const
export type CompensationState = (typeof compensationStates)[number]
export const CompensationState = StringEnum(compensationStates)

/** What a step-log entry records. */
export const stepOutcomes = [
  'started',
  'requested',
  /** the step waits for the customer (the payment's 3-D Secure authentication) */
  'waiting',
  'succeeded',
  'failed',
  'timed_out',
  'late',
  'escalated',
  'operator',
] as const
export type StepOutcome = (typeof stepOutcomes)[number]

const Timestamp = Type.String({ format: 'date-time', maxLength: 64 })

/** One line of the step log: what happened to which step, when, on which event. */
export const SagaLogEntry = Type.Object(
  {
    step: Type.String({ description: 'a saga step, or `order` for the order itself' }),
    outcome: StringEnum(stepOutcomes),
    attempt: Type.Optional(Type.Integer({ minimum: 1 })),
    eventType: Type.Optional(Type.String()),
    eventId: Type.Optional(Type.String()),
    detail: Type.Optional(Type.String()),
    at: Timestamp,
  },
  { additionalProperties: false },
)
export type SagaLogEntry = Static<typeof SagaLogEntry>

export const Saga = Type.Object(
  {
    orderId: Type.String({ format: 'uuid', maxLength: 36 }),
    state: SagaState,
    orderStatus: OrderStatus,
    step: Type.Union([SagaStep, Type.Null()], { description: 'the step awaited now; null when none is' }),
    attempt: Type.Integer({ minimum: 1, description: "the awaited step's attempt" }),
    deadline: Type.Union([Timestamp, Type.Null()], {
      description: 'when the awaited step times out (retried, or failed after its last attempt)',
    }),
    compensation: CompensationState,
    failedStep: Type.Union([Type.String(), Type.Null()]),
    failureReason: Type.Union([Type.String(), Type.Null()]),
    /** the ids the steps answered with, once they did (absent before) */
    paymentId: Type.Optional(Type.String()),
    reservationId: Type.Optional(Type.String()),
    shipmentId: Type.Optional(Type.String()),
    createdAt: Timestamp,
    updatedAt: Timestamp,
    /** in GET /admin/sagas/{orderId} only */
    log: Type.Optional(Type.Array(SagaLogEntry)),
    _links: OrderLinks,
  },
  { additionalProperties: false },
)
export type Saga = Static<typeof Saga>

export const sagaSortFields = ['createdAt', 'updatedAt'] as const

/** GET /api/v1/admin/sagas: filter by state and compensation (escalated ones: `compensation=escalated`). */
export const SagaListQuery = QueryObject(
  {
    ...pageParameters,
    sort: sortParameter(sagaSortFields, {
      description: `field:asc or field:desc, comma-separated; fields: ${sagaSortFields.join(', ')}`,
    }),
    state: Type.Optional(SagaState),
    compensation: Type.Optional(CompensationState),
  },
  { additionalProperties: false },
)
export type SagaListQuery = Static<typeof SagaListQuery>

export const SagaParams = Type.Object({ orderId: Type.String({ format: 'uuid', maxLength: 36 }) })
export type SagaParams = Static<typeof SagaParams>

/** POST /admin/sagas/{orderId}/compensate: why (kept in the step log and the order.failed event). */
export const CompensateSagaBody = Type.Object(
  { reason: Type.Optional(Type.String({ minLength: 1, maxLength: 300 })) },
  { additionalProperties: false },
)
export type CompensateSagaBody = Static<typeof CompensateSagaBody>
