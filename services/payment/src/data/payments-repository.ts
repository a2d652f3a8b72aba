// Payments in PostgreSQL: SQL only; every function takes the pool or an open transaction. No card number is ever
// written: brand and last four only.
import type { Queryable } from '@meridian/db'

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
  createdAt: Date
  updatedAt: Date
}

export interface NewPayment {
  orderId: string
  payerId?: string | null
  amountCents: number
  currency: string
  status: 'succeeded' | 'failed'
  providerChargeId?: string | null
  brand?: string | null
  last4?: string | null
  failureReason?: string | null
}

const columns = (sql: Queryable) =>
  sql`id, order_id, payer_id, amount_cents::float8 as amount_cents, currency, status, provider_charge_id, brand,
      last4, failure_reason, refunded_cents::float8 as refunded_cents, created_at, updated_at`

export function createPaymentsRepository(db: Queryable) {
  return {
    /** The new payment; undefined when its provider charge is recorded already (a replayed charge). */
    async insert(payment: NewPayment, sql: Queryable = db): Promise<PaymentRecord | undefined> {
      const [row] = await sql<PaymentRecord[]>`
        insert into payments (order_id, payer_id, amount_cents, currency, status, provider_charge_id, brand, last4,
          failure_reason)
        values (${payment.orderId}, ${payment.payerId ?? null}, ${payment.amountCents}, ${payment.currency},
          ${payment.status}, ${payment.providerChargeId ?? null}, ${payment.brand ?? null}, ${payment.last4 ?? null},
          ${payment.failureReason?.slice(0, 500) ?? null})
        on conflict (provider_charge_id) where provider_charge_id is not null do nothing
        returning ${columns(sql)}`
      return row
    },

    async findById(id: string, sql: Queryable = db): Promise<PaymentRecord | undefined> {
      const [row] = await sql<PaymentRecord[]>`select ${columns(sql)} from payments where id = ${id}`
      return row
    },

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

    async markRefunded(id: string, refundedCents: number, sql: Queryable = db): Promise<void> {
      await sql`
        update payments set status = 'refunded', refunded_cents = ${refundedCents}, updated_at = now()
        where id = ${id}`
    },
  }
}

export type PaymentsRepository = ReturnType<typeof createPaymentsRepository>
