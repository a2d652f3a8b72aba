// Payments in PostgreSQL: SQL only; every function takes the pool or an open transaction. No card number is ever
// written: brand and last four only.
import { lockKey, type Queryable, type TransactionSql, tryLockKey } from '@meridian/db'

/** The advisory lock of an order's charge and refund (and the reconciler's replay). */
const orderLockKey = (orderId: string) => `payment-order:${orderId}`

export type PaymentRecordStatus = 'succeeded' | 'failed' | 'refunded'

export interface PaymentRecord {
  id: string
  orderId: string
  payerId: string | null
  amountCents: number
  currency: string
  status: PaymentRecordStatus
  providerChargeId: string | null
  brand: string | null
  last4: string | null
  failureReason: string | null
  refundedCents: number
  /** when the provider reported a dispute of its charge (charge.dispute.created); null: never */
  disputedAt?: Date | null
  createdAt: Date
  updatedAt: Date
}

export interface NewPayment {
  orderId: string
  /**
   * the order's charge (one per order: a unique index); default: a succeeded payment is. False only for a charge
   * recorded to be refunded because the order has its charge already.
   */
  orderCharge?: boolean
  payerId?: string | null
  amountCents: number
  currency: string
  status: 'succeeded' | 'failed'
  providerChargeId?: string | null
  brand?: string | null
  last4?: string | null
  failureReason?: string | null
}

/** What the order step reads of an order under its lock before it charges. */
export interface OrderStepStanding {
  /** the order's refund was requested (it is not charged any more) */
  refundRequested: boolean
  /** the order's charge (succeeded, or refunded since), as findChargeOfOrder */
  charge: PaymentRecord | undefined
  /** the latest payment of the order step, as findLatestOfOrderStep */
  latestOfOrderStep: PaymentRecord | undefined
  /** the order step's charge waits for the customer's authentication (an `authenticating` charge attempt) */
  authenticating: boolean
  /** payment's record of the order (its orders row) exists, as the reader sees it: committed, or written by its own transaction */
  recorded: boolean
}

const columns = (sql: Queryable) =>
  sql`id, order_id, payer_id, amount_cents::float8 as amount_cents, currency, status, provider_charge_id, brand,
      last4, failure_reason, refunded_cents::float8 as refunded_cents, disputed_at, created_at, updated_at`

export function createPaymentsRepository(db: Queryable) {
  return {
    /**
     * The new payment; undefined when its provider charge is recorded already (a replayed charge), or when it would
     * be a second charge of the order (the order's charge is another payment).
     */
    async insert(payment: NewPayment, sql: Queryable = db): Promise<PaymentRecord | undefined> {
      const orderCharge = payment.orderCharge ?? payment.status === 'succeeded'
      const [row] = await sql<PaymentRecord[]>`
        insert into payments (order_id, payer_id, amount_cents, currency, status, provider_charge_id, brand, last4,
          failure_reason, order_charge)
        values (${payment.orderId}, ${payment.payerId ?? null}, ${payment.amountCents}, ${payment.currency},
          ${payment.status}, ${payment.providerChargeId ?? null}, ${payment.brand ?? null}, ${payment.last4 ?? null},
          ${payment.failureReason?.slice(0, 500) ?? null}, ${orderCharge})
        on conflict do nothing
        returning ${columns(sql)}`
      return row
    },

    async findById(id: string, sql: Queryable = db): Promise<PaymentRecord | undefined> {
      const [row] = await sql<PaymentRecord[]>`select ${columns(sql)} from payments where id = ${id}`
      return row
    },

    /**
     * Records a succeeded charge as the order's charge, or, when the provider replayed one recorded already (its
     * charge id is unique), answers that record; undefined when the order's charge is another payment.
     */
    async recordCharge(
      payment: NewPayment & { providerChargeId: string },
      sql: Queryable = db,
    ): Promise<PaymentRecord | undefined> {
      return (await this.insert(payment, sql)) ?? (await this.findByChargeId(payment.providerChargeId, sql))
    },

    /** The order's charge (succeeded, or refunded since); undefined while the order has none. */
    async findChargeOfOrder(orderId: string, sql: Queryable = db): Promise<PaymentRecord | undefined> {
      const [row] = await sql<PaymentRecord[]>`
        select ${columns(sql)} from payments where order_id = ${orderId} and order_charge`
      return row
    },

    /** See orderChargeRecorded. */
    recordOrderCharge: (
      payment: NewPayment & { providerChargeId: string },
      attemptKey: string,
      sql: Queryable = db,
    ): Promise<PaymentRecord | undefined> => orderChargeRecorded(sql, payment, attemptKey),

    /** See orderStepStandingOf. */
    findOrderStepStanding: (orderId: string, sql: Queryable = db): Promise<OrderStepStanding> =>
      orderStepStandingOf(sql, orderId),

    async findByChargeId(chargeId: string, sql: Queryable = db): Promise<PaymentRecord | undefined> {
      const [row] = await sql<PaymentRecord[]>`
        select ${columns(sql)} from payments where provider_charge_id = ${chargeId}`
      return row
    },

    /** The order's succeeded payments, oldest first, locked for update (a refund of one order at a time). */
    async lockSucceededOfOrder(orderId: string, sql: Queryable = db): Promise<PaymentRecord[]> {
      const rows = await sql<PaymentRecord[]>`
        select ${columns(sql)} from payments
        where order_id = ${orderId} and status = 'succeeded'
        order by created_at, id
        for update`
      return [...rows]
    },

    /**
     * Takes the order's transaction-scoped advisory lock: an order's charge and its refund run one after the other
     * (a refund requested while the charge is in flight waits for it, then sees and refunds it).
     */
    async lockOrder(orderId: string, tx: TransactionSql): Promise<void> {
      await lockKey(tx, orderLockKey(orderId))
    },

    /**
     * Takes the order's advisory lock (as lockOrder) only if no other transaction holds it: false when one does (a
     * charge or refund of the order is running; the charge reconciler skips the order for now).
     */
    tryLockOrder: (orderId: string, tx: TransactionSql): Promise<boolean> =>
      tryLockKey(tx, orderLockKey(orderId)),

    /**
     * The latest payment of the order step (no payer: charged on order.placed or payment.requested) of the order,
     * succeeded (or refunded) first, then failed; undefined when the step never charged the order.
     */
    async findLatestOfOrderStep(orderId: string, sql: Queryable = db): Promise<PaymentRecord | undefined> {
      const [row] = await sql<PaymentRecord[]>`
        select ${columns(sql)} from payments
        where order_id = ${orderId} and payer_id is null
        order by status = 'failed', created_at desc, id desc
        limit 1`
      return row
    },

    /** True when some payment of the order was refunded already. */
    async hasRefunded(orderId: string, sql: Queryable = db): Promise<boolean> {
      const [row] = await sql<{ refunded: boolean }[]>`
        select exists (select 1 from payments where order_id = ${orderId} and status = 'refunded') as refunded`
      return row?.refunded ?? false
    },

    /** Records that the order's refund was requested (the first request's reason stays). */
    async recordRefundRequest(orderId: string, reason: string, sql: Queryable = db): Promise<void> {
      await sql`
        insert into refund_requests (order_id, reason) values (${orderId}, ${reason.slice(0, 500)})
        on conflict (order_id) do nothing`
    },

    /** True when the order's refund was requested: it is not charged any more. */
    async refundRequested(orderId: string, sql: Queryable = db): Promise<boolean> {
      const [row] = await sql<{ requested: boolean }[]>`
        select exists (select 1 from refund_requests where order_id = ${orderId}) as requested`
      return row?.requested ?? false
    },

    /** The reason of the order's refund request; undefined when its refund was never requested. */
    async findRefundRequest(orderId: string, sql: Queryable = db): Promise<{ reason: string } | undefined> {
      const [row] = await sql<{ reason: string }[]>`
        select reason from refund_requests where order_id = ${orderId}`
      return row
    },

    /** See ownRefundRecorded. */
    recordOwnRefund: (
      paymentId: string,
      refund: ProviderRefundRecord,
      options: { whole: boolean },
      sql: Queryable = db,
    ): Promise<number> => ownRefundRecorded(sql, paymentId, refund, options.whole),

    /** See providerRefundsRecorded. */
    recordProviderRefunds: (
      paymentId: string,
      refunds: readonly ProviderRefundRecord[],
      providerRefundedCents: number,
      sql: Queryable = db,
    ): Promise<{ before: number; after: number } | undefined> =>
      providerRefundsRecorded(sql, paymentId, refunds, providerRefundedCents),

    /**
     * Marks the payment disputed by the provider's dispute; false when it was disputed already (by this dispute or
     * an earlier one), and then nothing is written.
     */
    async markDisputed(
      paymentId: string,
      dispute: { disputeId: string; reason: string },
      sql: Queryable = db,
    ): Promise<boolean> {
      const updated = await sql`
        update payments set disputed_at = now(), provider_dispute_id = ${dispute.disputeId},
          dispute_reason = ${dispute.reason.slice(0, 100)}, updated_at = now()
        where id = ${paymentId} and provider_dispute_id is null
          and not exists (select 1 from payments where provider_dispute_id = ${dispute.disputeId})
        returning id`
      return updated.length === 1
    },

    /** The payment's dispute, when it has one. */
    async findDispute(
      paymentId: string,
      sql: Queryable = db,
    ): Promise<{ disputeId: string; reason: string; disputedAt: Date } | undefined> {
      const [row] = await sql<{ disputeId: string | null; reason: string | null; disputedAt: Date | null }[]>`
        select provider_dispute_id as dispute_id, dispute_reason as reason, disputed_at from payments
        where id = ${paymentId}`
      if (!row?.disputeId || !row.reason || !row.disputedAt) return undefined
      return { disputeId: row.disputeId, reason: row.reason, disputedAt: row.disputedAt }
    },
  }
}

export type PaymentsRepository = ReturnType<typeof createPaymentsRepository>

/** A refund at the provider: its id (re_…) and amount in cents. */
export interface ProviderRefundRecord {
  refundId: string
  amountCents: number
}

/**
 * One of Meridian's own refunds, answered by the provider: recorded by its refund id and its amount added to the
 * payment's refunded cents, in one statement, unless the refund was recorded already (the provider's webhook told of
 * it first: its answer had been lost, and this is the same refund asked again under its key), when nothing is added.
 * `whole` marks the payment refunded (the saga's compensation and a late charge's refund give back the whole rest);
 * otherwise it is refunded once its refunded cents reach its amount. Never above the amount. Answers the refunded
 * cents after it.
 */
async function ownRefundRecorded(
  sql: Queryable,
  paymentId: string,
  refund: ProviderRefundRecord,
  whole: boolean,
): Promise<number> {
  const [row] = await sql<{ refundedCents: number }[]>`
    with counted as (
      insert into payment_refunds (refund_id, payment_id, amount_cents, recorded_by)
      values (${refund.refundId}, ${paymentId}, ${refund.amountCents}, 'meridian')
      on conflict (refund_id) do nothing
      returning amount_cents
    ),
    added as (select coalesce((select amount_cents from counted), 0) as cents)
    update payments set
      refunded_cents = least(amount_cents, refunded_cents + (select cents from added)),
      status = case
        when ${whole} or least(amount_cents, refunded_cents + (select cents from added)) = amount_cents
          then 'refunded'
        else status
      end,
      updated_at = now()
    where id = ${paymentId}
    returning refunded_cents::float8 as refunded_cents`
  if (!row) throw new Error(`payment ${paymentId} is not recorded: its refund ${refund.refundId} cannot be`)
  return row.refundedCents
}

/**
 * What the provider says of a payment's refunds (its charge.refunded webhook): each refund not recorded yet is
 * recorded as the provider's, so that Meridian's own path adds nothing for it later; and the payment's refunded
 * cents become the provider's own total when that is more (never above the amount; refunded when it reaches it).
 * Comparing totals keeps a refund counted once even when it was recorded before refunds had ids here. Answers the
 * refunded cents before and after; undefined when the payment is not recorded.
 */
async function providerRefundsRecorded(
  sql: Queryable,
  paymentId: string,
  refunds: readonly ProviderRefundRecord[],
  providerRefundedCents: number,
): Promise<{ before: number; after: number } | undefined> {
  const [current] = await sql<{ refundedCents: number }[]>`
    select refunded_cents::float8 as refunded_cents from payments where id = ${paymentId} for update`
  if (!current) return undefined
  for (const refund of refunds)
    await sql`
      insert into payment_refunds (refund_id, payment_id, amount_cents, recorded_by)
      values (${refund.refundId}, ${paymentId}, ${refund.amountCents}, 'provider')
      on conflict (refund_id) do nothing`
  const [row] = await sql<{ refundedCents: number }[]>`
    update payments set
      refunded_cents = least(amount_cents, greatest(refunded_cents, ${providerRefundedCents})),
      status = case
        when least(amount_cents, greatest(refunded_cents, ${providerRefundedCents})) = amount_cents then 'refunded'
        else status
      end,
      updated_at = now()
    where id = ${paymentId} and status <> 'failed'
    returning refunded_cents::float8 as refunded_cents`
  return { before: current.refundedCents, after: row?.refundedCents ?? current.refundedCents }
}

/**
 * The order step's succeeded charge, in one statement: recorded as recordCharge does (or its record found, when
 * the provider replayed it), the charge attempt of `attemptKey` settled with the record and, when the record
 * stands succeeded, the order marked paid (as the orders' markPaid). Nothing is written when there is no record
 * (the order's charge is another payment: undefined).
 */
async function orderChargeRecorded(
  sql: Queryable,
  payment: NewPayment & { providerChargeId: string },
  attemptKey: string,
): Promise<PaymentRecord | undefined> {
  const orderCharge = payment.orderCharge ?? payment.status === 'succeeded'
  const [row] = await sql<PaymentRecord[]>`
    with inserted as (
      insert into payments (order_id, payer_id, amount_cents, currency, status, provider_charge_id, brand, last4,
        failure_reason, order_charge)
      values (${payment.orderId}, ${payment.payerId ?? null}, ${payment.amountCents}, ${payment.currency},
        ${payment.status}, ${payment.providerChargeId}, ${payment.brand ?? null}, ${payment.last4 ?? null},
        ${payment.failureReason?.slice(0, 500) ?? null}, ${orderCharge})
      on conflict do nothing
      returning *
    ),
    record as (
      select * from inserted
      union all
      -- a replayed charge: its record (the order's lock keeps any other writer of it committed before this)
      select * from payments
      where provider_charge_id = ${payment.providerChargeId} and not exists (select 1 from inserted)
    ),
    settled as (
      update charge_attempts set status = 'settled', payment_id = (select id from record)
      where idempotency_key = ${attemptKey} and exists (select 1 from record)
    ),
    paid as (
      update orders set payment_state = 'paid', updated_at = now()
      where order_id = ${payment.orderId} and payment_state <> 'paid'
        and exists (select 1 from record where status = 'succeeded')
    )
    select ${columns(sql)} from record`
  return row
}

/**
 * The order's refund request, its charge, the latest payment of its order step and whether the order is recorded, in
 * one read (the order step asks for them together under the order's lock).
 */
async function orderStepStandingOf(sql: Queryable, orderId: string): Promise<OrderStepStanding> {
  const rows = await sql<
    (Omit<PaymentRecord, 'id'> & {
      id: string | null
      refundRequested: boolean
      authenticating: boolean
      recorded: boolean
      isCharge: boolean | null
      isLatestOfOrderStep: boolean | null
    })[]
  >`
    select f.refund_requested, f.authenticating, f.recorded, p.order_charge as is_charge,
      p.id = (
        select l.id from payments l
        where l.order_id = ${orderId} and l.payer_id is null
        order by l.status = 'failed', l.created_at desc, l.id desc
        limit 1
      ) as is_latest_of_order_step,
      ${columns(sql)}
    from (
      select exists (select 1 from refund_requests where order_id = ${orderId}) as refund_requested,
        exists (
          select 1 from charge_attempts where order_id = ${orderId} and status = 'authenticating'
        ) as authenticating,
        exists (select 1 from orders where order_id = ${orderId}) as recorded
    ) as f
    left join payments p on p.order_id = ${orderId} and (p.order_charge or p.payer_id is null)`
  const standing: OrderStepStanding = {
    refundRequested: rows[0]?.refundRequested ?? false,
    authenticating: rows[0]?.authenticating ?? false,
    recorded: rows[0]?.recorded ?? false,
    charge: undefined,
    latestOfOrderStep: undefined,
  }
  for (const {
    refundRequested: _requested,
    authenticating: _waits,
    recorded: _recorded,
    isCharge,
    isLatestOfOrderStep,
    id,
    ...payment
  } of rows) {
    if (id === null) continue
    if (isCharge) standing.charge = { id, ...payment }
    if (isLatestOfOrderStep) standing.latestOfOrderStep = { id, ...payment }
  }
  return standing
}
