// Reservations of stock for orders, and their lines, in PostgreSQL: SQL only; every function takes the pool or an
// open transaction.
import { lockKey, type Queryable, type TransactionSql } from '@meridian/db'

export const reservationStatuses = ['held', 'released', 'shipped'] as const
export type ReservationStatus = (typeof reservationStatuses)[number]

export interface ReservationLine {
  productId: string
  quantity: number
}

export interface ReservationRecord {
  id: string
  orderId: string
  status: ReservationStatus
  lines: ReservationLine[]
  createdAt: Date
  updatedAt: Date
}

export function createReservationsRepository(db: Queryable) {
  return {
    /**
     * The order's reservation with its lines (product id order), or undefined. With `lock`, its row is locked for
     * update, so a release and a shipment of one order are applied one after the other.
     */
    async findByOrder(
      orderId: string,
      sql: Queryable = db,
      { lock = false }: { lock?: boolean } = {},
    ): Promise<ReservationRecord | undefined> {
      const [reservation] = await sql<Omit<ReservationRecord, 'lines'>[]>`
        select id, order_id, status, created_at, updated_at from reservations
        where order_id = ${orderId} ${lock ? sql`for update` : sql``}`
      if (!reservation) return undefined
      const lines = await sql<ReservationLine[]>`
        select product_id, quantity from reservation_lines
        where reservation_id = ${reservation.id} order by product_id`
      return { ...reservation, lines: [...lines] }
    },

    /**
     * A held reservation for the order with its lines; undefined when the order already has one (order_id is
     * unique: a concurrent reservation of the same order waits for the first to commit, then finds it).
     */
    async insertHeld(
      orderId: string,
      lines: readonly ReservationLine[],
      sql: Queryable = db,
    ): Promise<string | undefined> {
      const [row] = await sql<{ id: string }[]>`
        insert into reservations (order_id, status) values (${orderId}, 'held')
        on conflict (order_id) do nothing
        returning id`
      if (!row) return undefined
      await sql`
        insert into reservation_lines (reservation_id, product_id, quantity)
        select ${row.id}::uuid, * from unnest(
          ${sql.array(lines.map((line) => line.productId))}::uuid[],
          ${sql.array(lines.map((line) => line.quantity))}::int[]
        )`
      return row.id
    },

    /**
     * Takes the order's transaction-scoped advisory lock: an order's reservation and its release run one after the
     * other (a release requested while the reservation is being made waits for it, then releases it).
     */
    async lockOrder(orderId: string, tx: TransactionSql): Promise<void> {
      await lockKey(tx, `inventory-order:${orderId}`)
    },

    /** Records that the order's release was requested (the first request's reason stays). */
    async recordReleaseRequest(orderId: string, reason: string, sql: Queryable = db): Promise<void> {
      await sql`
        insert into release_requests (order_id, reason) values (${orderId}, ${reason.slice(0, 500)})
        on conflict (order_id) do nothing`
    },

    /** True when the order's release was requested: its stock is not reserved any more. */
    async releaseRequested(orderId: string, sql: Queryable = db): Promise<boolean> {
      const [row] = await sql<{ requested: boolean }[]>`
        select exists (select 1 from release_requests where order_id = ${orderId}) as requested`
      return row?.requested ?? false
    },

    async setStatus(id: string, status: ReservationStatus, sql: Queryable = db): Promise<void> {
      await sql`update reservations set status = ${status}, updated_at = now() where id = ${id}`
    },
  }
}

export type ReservationsRepository = ReturnType<typeof createReservationsRepository>
