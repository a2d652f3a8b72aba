// Charge attempts in PostgreSQL (migrations/0003_charge_attempts.sql, 0004): the order step's and POST /payments';
// SQL only; every function takes the pool or an open transaction. An attempt is recorded through the pool right
// before the provider is called (so it outlives a rolled-back transaction) and settled once the outcome is known. It
// keeps the provider token only, never card data.
import type { Queryable } from '@meridian/db'
import type { ChargedOrderData, NewOrderToPay } from './orders-repository.ts'

export type { ChargedOrderData }

/** pending: its outcome unknown; authenticating: the customer is asked (3-D Secure); settled: known and recorded */
export type ChargeAttemptStatus = 'pending' | 'authenticating' | 'settled'

export interface ChargeAttempt {
  /** the provider's Idempotency-Key of the charge: `order-<orderId>`, or a POST /payments request's `pay-…` */
  idempotencyKey: string
  orderId: string
  /** who pays: the caller of POST /payments; null for the order step (order.placed, payment.requested) */
  payerId: string | null
  amountCents: number
  currency: string
  /** the provider's payment method (pm_…): never log it */
  token: string
  orderData: ChargedOrderData
  status: ChargeAttemptStatus
  /** the payment its charge was recorded as, once settled with a charge; null otherwise */
  paymentId: string | null
  createdAt: Date
  checkedAt: Date | null
  /** the provider's payment (pi_…) once it asked for authentication */
  intentId: string | null
  /** the provider's page for the customer, when it gave one */
  authenticateUrl: string | null
  /** when a payment waiting for authentication is cancelled */
  authenticationExpiresAt: Date | null
}

export interface NewChargeAttempt {
  idempotencyKey: string
  orderId: string
  /** the caller of POST /payments; absent for the order step */
  payerId?: string | null
  amountCents: number
  currency: string
  token: string
  orderData: ChargedOrderData
}

const columns = (sql: Queryable) =>
  sql`idempotency_key, order_id, payer_id, amount_cents::float8 as amount_cents, currency, token, order_data, status,
      payment_id, created_at, checked_at, intent_id, authenticate_url, authentication_expires_at`

export function createChargeAttemptsRepository(db: Queryable) {
  return {
    /**
     * Records that the charge is about to be sent (one row per key). A row of the key kept is pending again with its
     * first parameters and its first created_at: the provider answers a key with the outcome of its first call.
     */
    async record(attempt: NewChargeAttempt, sql: Queryable = db): Promise<void> {
      await sql`
        insert into charge_attempts (idempotency_key, order_id, payer_id, amount_cents, currency, token, order_data)
        values (${attempt.idempotencyKey}, ${attempt.orderId}, ${attempt.payerId ?? null}, ${attempt.amountCents},
          ${attempt.currency}, ${attempt.token}, ${sql.json(attempt.orderData as Parameters<typeof sql.json>[0])})
        on conflict (idempotency_key) do update set status = 'pending'`
    },

    /**
     * As the orders' record (the order recorded the first time payment hears of it) and record, in one statement:
     * the order step's charge, right before the provider is called.
     */
    async recordWithOrder(
      attempt: NewChargeAttempt,
      order: NewOrderToPay,
      sql: Queryable = db,
    ): Promise<void> {
      await sql`
        with known as (
          insert into orders (order_id, customer_id, amount_cents, currency, order_data)
          values (${order.orderId}, ${order.customerId}, ${order.amountCents}, ${order.currency},
            ${sql.json(order.orderData as Parameters<typeof sql.json>[0])})
          on conflict (order_id) do nothing
        )
        insert into charge_attempts (idempotency_key, order_id, payer_id, amount_cents, currency, token, order_data)
        values (${attempt.idempotencyKey}, ${attempt.orderId}, ${attempt.payerId ?? null}, ${attempt.amountCents},
          ${attempt.currency}, ${attempt.token}, ${sql.json(attempt.orderData as Parameters<typeof sql.json>[0])})
        on conflict (idempotency_key) do update set status = 'pending'`
    },

    /**
     * The outcome of the attempt is known and recorded (a payment of the order, named when it charged): nothing left
     * to reconcile.
     */
    async settle(
      idempotencyKey: string,
      sql: Queryable = db,
      paymentId: string | null = null,
    ): Promise<void> {
      await sql`
        update charge_attempts set status = 'settled', payment_id = coalesce(${paymentId}::uuid, payment_id)
        where idempotency_key = ${idempotencyKey}`
    },

    /**
     * The provider's payment asks the customer to authenticate it: the attempt waits as `authenticating` with the
     * payment, its page and its deadline (the reconciler's rounds no longer replay it).
     */
    async markAuthenticating(
      idempotencyKey: string,
      authentication: { intentId: string; authenticateUrl: string | undefined; expiresAt: Date },
      sql: Queryable = db,
    ): Promise<void> {
      await sql`
        update charge_attempts set status = 'authenticating', intent_id = ${authentication.intentId},
          authenticate_url = ${authentication.authenticateUrl ?? null},
          authentication_expires_at = ${authentication.expiresAt.toISOString()}::timestamptz
        where idempotency_key = ${idempotencyKey}`
    },

    /** Attempts still waiting for authentication past their deadline, the oldest deadline first. */
    async listExpiredAuthentications(limit: number, sql: Queryable = db): Promise<ChargeAttempt[]> {
      const rows = await sql<ChargeAttempt[]>`
        select ${columns(sql)} from charge_attempts
        where status = 'authenticating' and authentication_expires_at <= now()
        order by authentication_expires_at
        limit ${limit}`
      return [...rows]
    },

    /** The attempt of the provider's payment `intentId` while it waits for authentication, its row locked. */
    async lockAuthenticating(intentId: string, sql: Queryable = db): Promise<ChargeAttempt | undefined> {
      const [row] = await sql<ChargeAttempt[]>`
        select ${columns(sql)} from charge_attempts
        where intent_id = ${intentId} and status = 'authenticating'
        for update`
      return row
    },

    /** The reconciler asked the provider now (its outcome was still unknown). */
    async markChecked(idempotencyKey: string, sql: Queryable = db): Promise<void> {
      await sql`update charge_attempts set checked_at = now() where idempotency_key = ${idempotencyKey}`
    },

    /** Pending attempts made at least `olderThanMs` ago, the least recently checked first. */
    async listDue(olderThanMs: number, limit: number, sql: Queryable = db): Promise<ChargeAttempt[]> {
      const rows = await sql<ChargeAttempt[]>`
        select ${columns(sql)} from charge_attempts
        where status = 'pending' and created_at <= now() - make_interval(secs => ${olderThanMs / 1000})
        order by checked_at nulls first, created_at
        limit ${limit}`
      return [...rows]
    },

    /** The attempt if it is still pending, its row locked for update; undefined when it was settled meanwhile. */
    async lockPending(idempotencyKey: string, sql: Queryable = db): Promise<ChargeAttempt | undefined> {
      const [row] = await sql<ChargeAttempt[]>`
        select ${columns(sql)} from charge_attempts
        where idempotency_key = ${idempotencyKey} and status = 'pending'
        for update`
      return row
    },

    /** True when a charge of the order under another key is pending: its outcome is not known yet. */
    async hasPendingOfOrder(orderId: string, exceptKey: string, sql: Queryable = db): Promise<boolean> {
      const [row] = await sql<{ pending: boolean }[]>`
        select exists (
          select 1 from charge_attempts
          where order_id = ${orderId} and status = 'pending' and idempotency_key <> ${exceptKey}
        ) as pending`
      return row?.pending ?? false
    },

    /** The attempt of the provider's payment `intentId` (one that asked for authentication), if any. */
    async findByIntent(intentId: string, sql: Queryable = db): Promise<ChargeAttempt | undefined> {
      const [row] = await sql<ChargeAttempt[]>`
        select ${columns(sql)} from charge_attempts where intent_id = ${intentId}`
      return row
    },

    async findByKey(idempotencyKey: string, sql: Queryable = db): Promise<ChargeAttempt | undefined> {
      const [row] = await sql<ChargeAttempt[]>`
        select ${columns(sql)} from charge_attempts where idempotency_key = ${idempotencyKey}`
      return row
    },
  }
}

export type ChargeAttemptsRepository = ReturnType<typeof createChargeAttemptsRepository>
