// The refunds of an amount under a key in PostgreSQL (migrations/0010): SQL only; every function takes the pool or an
// open transaction. One row per key refunded, written with the refunded payment's refunded cents in one statement, and
// the provider's declines of a key's refund counted.
import type { Queryable } from '@meridian/db'

export interface KeyedRefundRecord {
  refundKey: string
  orderId: string
  paymentId: string
  /** integer minor units (cents), what the provider refunded */
  amountCents: number
  providerRefundId: string
  createdAt: Date
}

export type NewKeyedRefund = Omit<KeyedRefundRecord, 'createdAt'>

const columns = (sql: Queryable) =>
  sql`refund_key, order_id, payment_id, amount_cents::float8 as amount_cents, provider_refund_id, created_at`

export function createKeyedRefundsRepository(db: Queryable) {
  return {
    /** See keyedRefundRecorded. */
    record: (refund: NewKeyedRefund, sql: Queryable = db): Promise<KeyedRefundRecord> =>
      keyedRefundRecorded(sql, refund),

    /** The key's refund (undefined while never refunded) and how many times the provider declined it, in one read. */
    async refundStateOf(
      refundKey: string,
      sql: Queryable = db,
    ): Promise<{ recorded: KeyedRefundRecord | undefined; declines: number }> {
      const [row] = await sql<(Partial<KeyedRefundRecord> & { declines: number | null })[]>`
        select ${columns(sql)},
          (select declines::int from keyed_refund_declines where refund_key = ${refundKey}) as declines
        from (select 1) as one left join keyed_refunds on refund_key = ${refundKey}`
      const declines = row?.declines ?? 0
      if (!row || row.refundKey === null || row.refundKey === undefined)
        return { recorded: undefined, declines }
      const { declines: _, ...recorded } = row
      return { recorded: recorded as KeyedRefundRecord, declines }
    },

    /** One more decline of the key's refund by the provider. */
    async recordDecline(refundKey: string, sql: Queryable = db): Promise<void> {
      await sql`
        insert into keyed_refund_declines (refund_key, declines) values (${refundKey}, 1)
        on conflict (refund_key) do update
          set declines = keyed_refund_declines.declines + 1, updated_at = now()`
    },
  }
}

export type KeyedRefundsRepository = ReturnType<typeof createKeyedRefundsRepository>

/**
 * The key's refund recorded and its amount added to the payment's refunded cents (unless the provider's webhook
 * counted that refund already), in one statement; the payment refunded in full is marked refunded. A key recorded
 * already fails the statement: the caller reads it first, under the order's lock.
 */
async function keyedRefundRecorded(sql: Queryable, refund: NewKeyedRefund): Promise<KeyedRefundRecord> {
  const [row] = await sql<KeyedRefundRecord[]>`
    with inserted as (
      insert into keyed_refunds (refund_key, order_id, payment_id, amount_cents, provider_refund_id)
      values (${refund.refundKey}, ${refund.orderId}, ${refund.paymentId}, ${refund.amountCents},
        ${refund.providerRefundId})
      returning *
    ),
    -- the provider's refund, counted once: the provider's webhook may have recorded it first (this refund's answer
    -- had been lost, and its process asked again under its key), and then nothing is added (migrations/0009)
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
  if (!row) throw new Error(`the refund ${refund.refundKey} was not recorded`)
  return row
}
