// Restocking a return (inventory.restock_requested, sent by the order service's return process once the goods came
// back): the returned lines go back to available stock once per return, and every request is answered with
// inventory.restocked, in the caller's transaction (a consumer's), so the stock, the return's record and the outbox
// row commit together.
import type { TransactionSql } from '@meridian/db'
import { appendToOutbox, createEvent } from '@meridian/events'
import type { RestockRecord, RestocksRepository } from '../data/restocks-repository.ts'
import { serviceSource } from './reservations.ts'
import { isUuid, mergeLines, type StockLine } from './stock-rules.ts'

export interface ReturnToRestock {
  returnId: string
  orderId: string
  items: readonly StockLine[]
}

export type RestockOutcome =
  /** the lines were put back now (those whose product exists) */
  | { outcome: 'restocked'; items: StockLine[] }
  /** the return was restocked before (the process asking again, a redelivery): nothing moved, answered again */
  | { outcome: 'already restocked'; items: StockLine[] }

/** An id the order service would never send (its ids are uuids) makes the event bad: thrown, retried, dead-lettered. */
function assertUuid(id: string, what: string): void {
  if (!isUuid(id)) throw new Error(`${what} '${id}' is not a uuid`)
}

export function createRestockUseCases(deps: { restocks: RestocksRepository }) {
  const { restocks } = deps

  /** inventory.restocked with the return's recorded lines, keyed by its order (as inventory's other answers). */
  async function answer(restock: RestockRecord, tx: TransactionSql): Promise<void> {
    const restocked = createEvent(
      'inventory.restocked',
      { returnId: restock.returnId, orderId: restock.orderId, items: restock.items },
      { source: serviceSource },
    )
    await appendToOutbox(tx, restocked, { aggregateId: restock.orderId })
  }

  return {
    /**
     * The return's lines go back to available stock, once per return, and `inventory.restocked` answers every call.
     * The rule for each line: its product exists (active or not), and its quantity is added to `available` and
     * audited ('restocked: return <id>'); it does not exist (an id this catalogue never had: products are never
     * deleted), and it is not put back and not in the answer — the return's other lines are, and the return's process
     * goes on to its refund. The first call records the return with the lines put back; a later one (the process
     * asking again on its deadline, a redelivery the inbox forgot) moves nothing and answers with the recorded
     * lines and order, whatever it carries. Two calls at the same moment: the second waits for the first to commit.
     */
    async restockReturn(request: ReturnToRestock, tx: TransactionSql): Promise<RestockOutcome> {
      assertUuid(request.returnId, 'return id')
      assertUuid(request.orderId, 'order id')
      const asked = mergeLines(request.items)
      const done = await restocks.restock(
        {
          returnId: request.returnId,
          orderId: request.orderId,
          lines: asked.filter((line) => isUuid(line.productId)),
          asked,
          reason: `restocked: return ${request.returnId}`,
        },
        tx,
      )
      // recorded by another transaction while this one ran: its row is committed now, read it again
      const restock = done.restock ?? (await restocks.findByReturn(request.returnId, tx))
      if (!restock) throw new Error(`return ${request.returnId} has neither a new nor a recorded restock`)
      await answer(restock, tx)
      return { outcome: done.moved ? 'restocked' : 'already restocked', items: restock.items }
    },
  }
}

export type RestockUseCases = ReturnType<typeof createRestockUseCases>
