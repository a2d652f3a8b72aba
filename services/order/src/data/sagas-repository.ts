// The order saga's instances and step log in PostgreSQL: SQL only, plain objects out; every function takes the pool
// or an open transaction.
import type { CompensationState, SagaState, SagaStep, StepOutcome } from '@meridian/contracts'
import { defineList, type ListInput, type ListRequestOf, type ListResult, type Queryable } from '@meridian/db'

export interface SagaRecord {
  orderId: string
  state: SagaState
  step: SagaStep | null
  attempt: number
  deadline: Date | null
  compensation: CompensationState
  failedStep: string | null
  failureReason: string | null
  paymentId: string | null
  reservationId: string | null
  shipmentId: string | null
  createdAt: Date
  updatedAt: Date
}

export interface SagaLogRecord {
  step: string
  outcome: StepOutcome
  attempt: number | null
  eventType: string | null
  eventId: string | null
  detail: string | null
  at: Date
}

export type NewSagaLogLine = Omit<SagaLogRecord, 'at' | 'attempt' | 'eventType' | 'eventId' | 'detail'> & {
  attempt?: number | undefined
  eventType?: string | undefined
  eventId?: string | undefined
  detail?: string | undefined
}

/** What a decision changes of an instance; the deadline: a date, null (none), or undefined (kept). */
export type SagaChange = Pick<
  SagaRecord,
  | 'state'
  | 'step'
  | 'attempt'
  | 'compensation'
  | 'failedStep'
  | 'failureReason'
  | 'paymentId'
  | 'reservationId'
  | 'shipmentId'
> & { deadlineInMs: number | null | 'keep' }

const sagaColumns = {
  orderId: 'order_id',
  state: 'state',
  step: 'step',
  attempt: 'attempt',
  deadline: 'deadline',
  compensation: 'compensation',
  failedStep: 'failed_step',
  failureReason: 'failure_reason',
  paymentId: 'payment_id',
  reservationId: 'reservation_id',
  shipmentId: 'shipment_id',
  createdAt: 'created_at',
  updatedAt: 'updated_at',
} as const
const selectedColumns = Object.values(sagaColumns)

/** GET /admin/sagas: every instance, filtered by state and compensation, newest first (the domain reaches it through
 * `listRequest` and `list`: see order-columns.ts). */
export const sagaList = defineList({
  table: 'sagas',
  columns: sagaColumns,
  selectable: Object.keys(sagaColumns) as (keyof typeof sagaColumns)[],
  sortable: ['createdAt', 'updatedAt'],
  filterable: ['state', 'compensation'],
  defaultSort: 'createdAt:desc',
  alwaysSelected: ['orderId'],
  tieBreaker: 'orderId',
})
export type SagaListRequest = ListRequestOf<typeof sagaList>
type SagaListFilter = 'state' | 'compensation'

/** The step log's line length cap: a reason from another service never grows a row without bound. */
const maximumDetail = 500

export function createSagasRepository(db: Queryable) {
  return {
    /** A new instance for a just placed order, waiting for its payment until `deadlineInMs` from now. */
    async start(orderId: string, deadlineInMs: number, sql: Queryable = db): Promise<void> {
      await sql`
        insert into sagas (order_id, state, step, attempt, deadline)
        values (${orderId}, 'created', 'payment', 1, now() + ${deadlineInMs}::double precision * interval '1 millisecond')`
    },

    async findByOrder(orderId: string, sql: Queryable = db): Promise<SagaRecord | undefined> {
      const [row] = await sql<
        SagaRecord[]
      >`select ${sql(selectedColumns)} from sagas where order_id = ${orderId}`
      return row
    },

    /** Locks the instance for a decision; undefined when the order has none. */
    async lockByOrder(orderId: string, sql: Queryable = db): Promise<SagaRecord | undefined> {
      const [row] = await sql<SagaRecord[]>`
        select ${sql(selectedColumns)} from sagas where order_id = ${orderId} for update`
      return row
    },

    /** The orders of up to `limit` instances whose deadline has passed, the most overdue first. */
    async dueOrders(limit: number, sql: Queryable = db): Promise<string[]> {
      const rows = await sql<{ orderId: string }[]>`
        select order_id from sagas where deadline is not null and deadline <= now() order by deadline limit ${limit}`
      return rows.map((row) => row.orderId)
    },

    /**
     * Locks the instance if its deadline has still passed (its answer may have come meanwhile) and no other process
     * holds it; false otherwise.
     */
    async lockIfDue(orderId: string, sql: Queryable = db): Promise<boolean> {
      const rows = await sql`
        select 1 from sagas where order_id = ${orderId} and deadline is not null and deadline <= now()
        for update skip locked`
      return rows.length > 0
    },

    async update(orderId: string, change: SagaChange, sql: Queryable = db): Promise<void> {
      const { deadlineInMs, ...fields } = change
      await sql`
        update sagas set
          state = ${fields.state}, step = ${fields.step}, attempt = ${fields.attempt},
          compensation = ${fields.compensation}, failed_step = ${fields.failedStep},
          failure_reason = ${fields.failureReason}, payment_id = ${fields.paymentId},
          reservation_id = ${fields.reservationId}, shipment_id = ${fields.shipmentId},
          deadline = ${
            deadlineInMs === 'keep'
              ? sql`deadline`
              : deadlineInMs === null
                ? null
                : sql`now() + ${deadlineInMs}::double precision * interval '1 millisecond'`
          },
          updated_at = now()
        where order_id = ${orderId}`
    },

    async appendLog(orderId: string, lines: readonly NewSagaLogLine[], sql: Queryable = db): Promise<void> {
      if (lines.length === 0) return
      await sql`
        insert into saga_steps ${sql(
          lines.map((line) => ({
            order_id: orderId,
            step: line.step,
            outcome: line.outcome,
            attempt: line.attempt ?? null,
            event_type: line.eventType ?? null,
            event_id: line.eventId ?? null,
            detail: line.detail === undefined ? null : line.detail.slice(0, maximumDetail),
          })),
        )}`
    },

    async logOf(orderId: string, sql: Queryable = db): Promise<SagaLogRecord[]> {
      return sql<SagaLogRecord[]>`
        select step, outcome, attempt, event_type, event_id, detail, at
        from saga_steps where order_id = ${orderId} order by id`
    },

    /** A list query checked against the list's allow-lists (422 VALIDATION_ERROR outside them), for `list`. */
    listRequest: (query: ListInput<SagaListFilter>): SagaListRequest => sagaList.parse(query),

    async list(request: SagaListRequest, sql: Queryable = db): Promise<ListResult<SagaRecord>> {
      const { rows, total } = await sagaList.run<Record<string, unknown>>(sql, request)
      return { total, rows: rows as unknown as SagaRecord[] }
    },
  }
}

export type SagasRepository = ReturnType<typeof createSagasRepository>
