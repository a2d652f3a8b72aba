// The refunds of returns in PostgreSQL (migrations/0005, 0006): SQL only; every function takes the pool or an open
// transaction. One row per return refunded, written with the refunded payment's refunded cents in one statement, and
// the provider's declines of a return's refund counted.
import type { Queryable } from '@meridian/db'

export interface ReturnRefundRecord {
  returnId: string
  orderId: string
  paymentId: string
  /** integer minor units (cents), what the provider refunded */
  amountCents: number
  providerRefundId: string
  createdAt: Date
}

export type NewReturnRefund = Omit<ReturnRefundRecord, 'createdAt'>

const columns = (sql: Queryable) =>
  sql`return_id, order_id, payment_id, amount_cents::float8 as amount_cents, provider_refund_id, created_at`

export function createReturnRefundsRepository(db: Queryable) {
  return {
    /** See returnRefundRecorded. */
    record: (refund: NewReturnRefund, sql: Queryable = db): Promise<ReturnRefundRecord> =>
      returnRefundRecorded(sql, refund),

    /** The return's refund (undefined while never refunded) and how many times the provider declined it, in one read. */
    async refundStateOf(
      returnId: string,
      sql: Queryable = db,
    ): Promise<{ recorded: ReturnRefundRecord | undefined; declines: number }> {
      const [row] = await sql<(Partial<ReturnRefundRecord> & { declines: number | null })[]>`
        select ${columns(sql)}, (select declines from return_refund_declines where return_id = ${returnId}) as declines
        from (select 1) as one left join return_refunds on return_id = ${returnId}`
      const declines = row?.declines ?? 0
      if (!row || row.returnId === null || row.returnId === undefined)
        return { recorded: undefined, declines }
      const { declines: _, ...recorded } = row
      return { recorded: recorded as ReturnRefundRecord, declines }
    },

    /** One more decline of the return's refund by the provider. */
    async recordDecline(returnId: string, sql: Queryable = db): Promise<void> {
      await sql`
        insert into return_refund_declines (return_id, declines) values (${returnId}, 1)
        on conflict (return_id) do update
          set declines = return_refund_declines.declines + 1, updated_at = now()`
    },
  }
}

export type ReturnRefundsRepository = ReturnType<typeof createReturnRefundsRepository>

/**
 * The return's refund recorded and its amount added to the payment's refunded cents (unless the provider's webhook
 * counted that refund already), in one statement; the payment refunded in full is marked refunded. A return recorded already (its id is the key) fails the statement: the caller
 * reads it first, under the order's lock.
 */
async function returnRefundRecorded(sql: Queryable, refund: NewReturnRefund): Promise<ReturnRefundRecord> {
  const [row] = await sql<ReturnRefundRecord[]>`
    with inserted as (
      insert into return_refunds (return_id, order_id, payment_id, amount_cents, provider_refund_id)
      values (${refund.returnId}, ${refund.orderId}, ${refund.paymentId}, ${refund.amountCents},
        ${refund.providerRefundId})
      returning *
    ),
    -- the provider's refund, counted once: the provider's webhook may have recorded it first (this refund's answer
    -- had been lost, and the return asked again under its key), and then nothing is added (migrations/0009)
    counted as (
      insert into payment_refunds (refund_id, payment_id, amount_cents, recorded_by)
      select provider_refund_id, payment_id, amount_cents, 'meridian' from inserted
      on conflict (refund_id) do nothing
      returning amount_cents
    ),
    added as (select coalesce((select amount_cents from counted), 0) as cents),
    refunded as (
      -- the right-hand sides read the row as it was: refunded_cents before this refund
      update payments set
        refunded_cents = least(amount_cents, refunded_cents + (select cents from added)),
        status = case
          when least(amount_cents, refunded_cents + (select cents from added)) = amount_cents then 'refunded'
          else status
        end,
        updated_at = now()
      where id = ${refund.paymentId} and exists (select 1 from inserted)
    )
    select ${columns(sql)} from inserted`
  if (!row) throw new Error(`the refund of return ${refund.returnId} was not recorded`)
  return row
}
