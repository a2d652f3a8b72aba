// The order saga's instances and step log in PostgreSQL: SQL only, plain objects out; every function takes the pool
// or an open transaction.
import type { CompensationState, OrderStatus, SagaState, SagaStep, StepOutcome } from '@meridian/contracts'
import { defineList, type ListInput, type ListRequestOf, type ListResult, type Queryable } from '@meridian/db'
import { fromItemJson, type ItemJson, itemsJson, type OrderContent } from './orders-repository.ts'

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

/** What a decision reads, both rows locked: the instance, and its order's status and content. */
export interface LockedSaga {
  saga: SagaRecord
  order: OrderContent
}

// bigint columns come back as text from postgres.js: read back as numbers
type LockedRow = SagaRecord &
  Omit<OrderContent, 'id' | 'status' | 'totalCents' | 'items'> & {
    orderStatus: OrderStatus
    totalCents: string | number
    items: ItemJson[]
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

/**
 * The step log's lines as a further data-modifying CTE of the statement that changes the instance (`, steps as
 * (insert ...)`), inserted in the order given; nothing when there are none.
 */
function logInsert(orderId: string, lines: readonly NewSagaLogLine[], sql: Queryable) {
  if (lines.length === 0) return sql``
  return sql`,
        steps as (
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
          )}
        )`
}

export function createSagasRepository(db: Queryable) {
  return {
    /**
     * A new instance for a just placed order, waiting for its payment until `deadlineInMs` from now, and its first
     * step-log lines: one statement (the log's rows reference the instance inserted beside them).
     */
    async start(
      orderId: string,
      deadlineInMs: number,
      lines: readonly NewSagaLogLine[],
      sql: Queryable = db,
    ): Promise<void> {
      await sql`
        with saga as (
          insert into sagas (order_id, state, step, attempt, deadline)
          values (${orderId}, 'created', 'payment', 1, now() + ${deadlineInMs}::double precision * interval '1 millisecond')
        )${logInsert(orderId, lines, sql)}
        select 1`
    },

    async findByOrder(orderId: string, sql: Queryable = db): Promise<SagaRecord | undefined> {
      const [row] = await sql<
        SagaRecord[]
      >`select ${sql(selectedColumns)} from sagas where order_id = ${orderId}`
      return row
    },

    /**
     * Locks the order's row, then its instance's, for a decision, and reads what the decision and the commands it
     * sends need: the instance, the order's status and its content (one statement; the order is locked first, as a
     * cancel locks it, so the two never wait on each other in opposite orders). Undefined when the order or its
     * instance does not exist; with `onlyIfDue`, also when the instance's deadline has not passed (its answer came
     * meanwhile) or another process holds it (the order's row stays locked until the transaction ends, as before).
     */
    async lockForDecision(
      orderId: string,
      { onlyIfDue = false }: { onlyIfDue?: boolean } = {},
      sql: Queryable = db,
    ): Promise<LockedSaga | undefined> {
      // materialized: the order's row is locked as the CTE yields it, before the join reaches the instance's row,
      // which the outer locking clause locks once the joined row exists
      const [row] = await sql<LockedRow[]>`
        with locked_order as materialized (
          select id, customer_id, status as order_status, total_cents, shipping_address, payment_token
          from orders where id = ${orderId}
          for update
        )
        select ${sql(selectedColumns)},
          o.customer_id, o.order_status, o.total_cents, o.shipping_address, o.payment_token,
          ${itemsJson(sql)} as items
        from locked_order o join sagas s on s.order_id = o.id
        where s.order_id = ${orderId}${
          onlyIfDue ? sql` and s.deadline is not null and s.deadline <= now()` : sql``
        }
        for update of s${onlyIfDue ? sql` skip locked` : sql``}`
      if (!row) return undefined
      const { customerId, orderStatus, totalCents, shippingAddress, paymentToken, items, ...saga } = row
      return {
        saga,
        order: {
          id: saga.orderId,
          customerId,
          status: orderStatus,
          totalCents: Number(totalCents),
          shippingAddress,
          paymentToken,
          items: items.map(fromItemJson),
        },
      }
    },

    /** The orders of up to `limit` instances whose deadline has passed, the most overdue first. */
    async dueOrders(limit: number, sql: Queryable = db): Promise<string[]> {
      const rows = await sql<{ orderId: string }[]>`
        select order_id from sagas where deadline is not null and deadline <= now() order by deadline limit ${limit}`
      return rows.map((row) => row.orderId)
    },

    /**
     * A decision's writes, in one statement: the instance's change, the order's status when the decision changed it
     * (`orderStatus`; null: unchanged) and the step log's lines, in their order. The caller holds both rows
     * (lockForDecision).
     */
    async record(
      orderId: string,
      change: SagaChange,
      orderStatus: OrderStatus | null,
      lines: readonly NewSagaLogLine[],
      sql: Queryable = db,
    ): Promise<void> {
      const { deadlineInMs, ...fields } = change
      await sql`
        with saga as (
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
          where order_id = ${orderId}
        )${
          orderStatus === null
            ? sql``
            : sql`,
        order_status as (
          update orders set status = ${orderStatus}, version = version + 1, updated_at = now() where id = ${orderId}
        )`
        }${logInsert(orderId, lines, sql)}
        select 1`
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
