// The order saga's instances as operators list and read them (GET /admin/sagas): the `sagas` view of the process
// module's table (migration 0004; the module writes it, and reads the step log). SQL only, plain objects out.
import type { CompensationState, SagaState, SagaStep } from '@meridian/contracts'
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

export function createSagasRepository(db: Queryable) {
  return {
    async findByOrder(orderId: string, sql: Queryable = db): Promise<SagaRecord | undefined> {
      const [row] = await sql<
        SagaRecord[]
      >`select ${sql(selectedColumns)} from sagas where order_id = ${orderId}`
      return row
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
