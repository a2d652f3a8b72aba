// Reservations of stock for orders, their lines, and the stock they hold, in PostgreSQL: SQL only; every function
// takes the pool or an open transaction. Holding, shipping and releasing an order's stock are each one statement
// (data-modifying CTEs): a consumer pays a round trip to PostgreSQL per statement, and the product rows, locked in
// id order, stay locked from that statement to the commit, so the later they are taken the shorter others wait.
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

/** What holding stock read of a product it locked. */
export interface LockedStock {
  id: string
  active: boolean
  available: number
}

export interface HeldStock {
  /** the order's reservation made before (held, shipped or released): nothing was locked nor written */
  earlier: ReservationRecord | undefined
  /** the order's release was requested before: nothing was locked nor written */
  releaseRequested: boolean
  /** the stock of the lines' products that exist, as locked (id order); none when the order had either of the above */
  stock: LockedStock[]
  /**
   * the order had neither, and every line could be reserved: each product exists, is active and has the units
   * available
   */
  reservable: boolean
  /** the new held reservation; undefined when not reservable, or when the order has one already (order_id unique) */
  reservationId: string | undefined
}

/** How a held reservation is settled: shipped (its stock leaves) or released (its stock is available again). */
export interface Settlement {
  status: Exclude<ReservationStatus, 'held'>
  /** the stock_movements reason */
  reason: string
}

// the lines of the reservation aliased `r`, as [{productId, quantity}] in product id order ([] without one)
const linesOfR = (sql: Queryable) => sql`
  coalesce(
    (select json_agg(json_build_object('productId', l.product_id, 'quantity', l.quantity) order by l.product_id)
     from reservation_lines l where l.reservation_id = r.id),
    '[]'::json)`

/** What holding an order's stock is asked. */
export interface StockToHold {
  orderId: string
  /** the order's lines whose product id can name a row (a uuid): distinct products, in id order */
  lines: readonly ReservationLine[]
  /** how many lines the order has, those that name no product included: with any of those, nothing is held */
  lineCount: number
  /** the stock_movements reason */
  reason: string
}

export function createReservationsRepository(db: Queryable) {
  return {
    /** The order's reservation with its lines (product id order), or undefined. */
    async findByOrder(orderId: string, sql: Queryable = db): Promise<ReservationRecord | undefined> {
      const [reservation] = await sql<ReservationRecord[]>`
        select r.id, r.order_id, r.status, r.created_at, r.updated_at, ${linesOfR(sql)} as lines
        from reservations r
        where r.order_id = ${orderId}`
      return reservation
    },

    /**
     * Holds the lines' stock for the order, all lines or none, in one statement. First what the order has: a
     * reservation made before, or a release requested before, and nothing else is done. Otherwise the lines'
     * products are locked for update in id order (every writer of several products locks them in this one order, so two reservations, or a
     * reservation and a release, never wait on each other in a cycle) and read; when every line is reservable (the
     * rule of findShortage: the product exists, is active and has the units available) and the order has no
     * reservation yet (order_id is unique: a concurrent one waits for the first to commit, then finds it taken), the
     * held reservation and its lines are inserted, each line's units move from available to reserved, and the
     * movements are audited with the request's reason.
     */
    async holdStock(
      { orderId, lines, lineCount, reason }: StockToHold,
      sql: Queryable = db,
    ): Promise<HeldStock> {
      const [row] = await sql<
        (Omit<ReservationRecord, 'id'> & {
          id: string | null
          releaseRequested: boolean
          stock: LockedStock[]
          reservable: boolean
          reservationId: string | null
        })[]
      >`
        with standing as materialized (
          select not exists (select 1 from reservations where order_id = ${orderId})
            and not exists (select 1 from release_requests where order_id = ${orderId}) as free
        ),
        wanted as (
          select * from unnest(
            ${sql.array(lines.map((line) => line.productId))}::uuid[],
            ${sql.array(lines.map((line) => line.quantity))}::int[]
          ) as w(product_id, quantity)
        ),
        locked as materialized (
          select id, active, available from products
          where id in (select product_id from wanted) and (select free from standing)
          order by id
          for update
        ),
        verdict as materialized (
          select (select free from standing) and count(*) = ${lineCount} as reservable
          from wanted w join locked l on l.id = w.product_id
          where l.active and l.available >= w.quantity
        ),
        reservation as (
          -- reads the verdict first, so every product row is locked before anything is written
          insert into reservations (order_id, status)
          select ${orderId}::uuid, 'held' where (select reservable from verdict)
          on conflict (order_id) do nothing
          returning id
        ),
        held_lines as (
          insert into reservation_lines (reservation_id, product_id, quantity)
          select r.id, w.product_id, w.quantity from reservation r cross join wanted w
        ),
        moved as (
          update products as p
          set available = p.available - w.quantity,
              reserved = p.reserved + w.quantity,
              version = p.version + 1,
              updated_at = now()
          from wanted w, reservation r
          where p.id = w.product_id
        ),
        audited as (
          insert into stock_movements (product_id, delta_available, delta_reserved, reason, order_id)
          select w.product_id, -w.quantity, w.quantity, ${reason}, ${orderId}::uuid
          from wanted w, reservation r
        )
        select r.id, r.order_id, r.status, r.created_at, r.updated_at, ${linesOfR(sql)} as lines,
          exists (select 1 from release_requests where order_id = ${orderId}) as release_requested,
          coalesce(
            (select json_agg(json_build_object('id', id, 'active', active, 'available', available) order by id)
             from locked),
            '[]'::json) as stock,
          (select reservable from verdict) as reservable,
          (select id from reservation) as reservation_id
        from (select 1) as one
        -- the statement's snapshot: the reservation made before, not the one inserted above
        left join reservations r on r.order_id = ${orderId}`
      if (!row) throw new Error('holding stock read no row')
      const { id, releaseRequested, stock, reservable, reservationId, ...earlier } = row
      return {
        earlier: id === null ? undefined : { id, ...earlier },
        releaseRequested,
        stock,
        reservable,
        reservationId: reservationId ?? undefined,
      }
    },

    /**
     * Settles the order's held reservation in one statement: its row is locked for update (a release and a
     * shipment of one order apply one after the other), then, only when it is held, its products are locked in id
     * order, each line's units leave reserved (and, released, come back to available), the movements are audited
     * and the reservation takes the settlement's status. The reservation's id when one was held; else undefined
     * (none, released or shipped already), and nothing changes.
     */
    async settleHeld(
      orderId: string,
      settlement: Settlement,
      sql: Queryable = db,
    ): Promise<string | undefined> {
      const returned = settlement.status === 'released' ? 1 : 0
      const [row] = await sql<{ id: string }[]>`
        with reservation as materialized (
          select id, status from reservations where order_id = ${orderId} for update
        ),
        held as materialized (
          select l.product_id, l.quantity from reservation_lines l
          where l.reservation_id = (select id from reservation where status = 'held')
        ),
        locked as materialized (
          select id from products where id in (select product_id from held) order by id for update
        ),
        moved as (
          -- joined with the locked rows: a row is written only once it was locked in id order
          update products as p
          set available = p.available + h.quantity * ${returned},
              reserved = p.reserved - h.quantity,
              version = p.version + 1,
              updated_at = now()
          from held h join locked k on k.id = h.product_id
          where p.id = k.id
        ),
        audited as (
          insert into stock_movements (product_id, delta_available, delta_reserved, reason, order_id)
          select h.product_id, h.quantity * ${returned}, -h.quantity, ${settlement.reason}, ${orderId}::uuid
          from held h
        )
        update reservations set status = ${settlement.status}, updated_at = now()
        where id = (select id from reservation where status = 'held')
        returning id`
      return row?.id
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
  }
}

export type ReservationsRepository = ReturnType<typeof createReservationsRepository>
