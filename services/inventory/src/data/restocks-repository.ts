// Restocks in PostgreSQL: SQL only; every function takes the pool or an open transaction. Putting a restock's lines
// back is one statement (data-modifying CTEs), as holding and settling a reservation are: the product rows are locked
// in id order first, then the restock's row decides whether the stock moves. The table's key column keeps the name of
// its first asker (`return_id`, migrations/0003): it holds the restock's id, whichever process chose it.
import type { Queryable } from '@meridian/db'

export interface RestockLine {
  productId: string
  quantity: number
}

/** A restock as recorded: its order and the lines put back (product id order). */
export interface RestockRecord {
  restockId: string
  orderId: string
  items: RestockLine[]
}

/** What putting a restock's lines back is asked. */
export interface StockToRestock {
  restockId: string
  orderId: string
  /** the lines whose product id can name a row (a uuid): distinct products, in id order */
  lines: readonly RestockLine[]
  /** every line asked for, merged per product, those that name no product included (kept on the row) */
  asked: readonly RestockLine[]
  /** the stock_movements reason */
  reason: string
}

export interface Restocked {
  /** true when this call recorded the restock and moved its stock; false when it was made before */
  moved: boolean
  /**
   * the restock: the one made now, or the one made before as this statement's snapshot saw it; undefined only when
   * another transaction recorded it while this one ran (read it again: findById)
   */
  restock: RestockRecord | undefined
}

export function createRestocksRepository(db: Queryable) {
  return {
    /** The restock, or undefined. */
    async findById(restockId: string, sql: Queryable = db): Promise<RestockRecord | undefined> {
      const [row] = await sql<RestockRecord[]>`
        select return_id as restock_id, order_id, items from restocks where return_id = ${restockId}`
      return row
    },

    /**
     * Puts the restock's lines back in stock, once per restock id, in one statement. The lines' products are locked for
     * update in id order (as every writer of several products locks them: a restock and a reservation never wait on
     * each other in a cycle), then the restock's row is inserted with the lines whose product exists; only when that
     * insert happens (its id is the key: a restock of the same id running at the same time waits for the
     * first to commit, then finds it taken) does each line's quantity go back to available, audited with the reason
     * and the order's id. A line whose product does not exist is not put back (there is nothing to put it into).
     */
    async restock(
      { restockId, orderId, lines, asked, reason }: StockToRestock,
      sql: Queryable = db,
    ): Promise<Restocked> {
      const [row] = await sql<
        { moved: boolean; restockId: string | null; orderId: string | null; items: RestockLine[] | null }[]
      >`
        with wanted as (
          select * from unnest(
            ${sql.array(lines.map((line) => line.productId))}::uuid[],
            ${sql.array(lines.map((line) => line.quantity))}::int[]
          ) as w(product_id, quantity)
        ),
        locked as materialized (
          select id from products where id in (select product_id from wanted) order by id for update
        ),
        present as materialized (
          select w.product_id, w.quantity from wanted w join locked k on k.id = w.product_id
        ),
        recorded as (
          -- reads the locked rows first, so every product row is locked before the restock's row is written
          insert into restocks (return_id, order_id, items, asked)
          select ${restockId}::uuid, ${orderId}::uuid,
            coalesce(
              (select jsonb_agg(jsonb_build_object('productId', product_id, 'quantity', quantity) order by product_id)
               from present),
              '[]'::jsonb),
            ${sql.json(asked.map(({ productId, quantity }) => ({ productId, quantity })))}::jsonb
          on conflict (return_id) do nothing
          returning return_id, order_id, items
        ),
        moved as (
          update products as p
          set available = p.available + s.quantity, version = p.version + 1, updated_at = now()
          from present s, recorded r
          where p.id = s.product_id
        ),
        audited as (
          insert into stock_movements (product_id, delta_available, delta_reserved, reason, order_id)
          select s.product_id, s.quantity, 0, ${reason}, ${orderId}::uuid
          from present s, recorded r
        )
        select exists (select 1 from recorded) as moved,
          coalesce(r.return_id, e.return_id) as restock_id,
          coalesce(r.order_id, e.order_id) as order_id,
          coalesce(r.items, e.items) as items
        from (select 1) as one
        left join recorded r on true
        -- the statement's snapshot: the restock made before, not the one inserted above
        left join restocks e on e.return_id = ${restockId}`
      if (!row) throw new Error('restocking read no row')
      const { moved, restockId: recorded, orderId: recordedOrder, items } = row
      return {
        moved,
        restock:
          recorded === null || recordedOrder === null || items === null
            ? undefined
            : { restockId: recorded, orderId: recordedOrder, items },
      }
    },
  }
}

export type RestocksRepository = ReturnType<typeof createRestocksRepository>
