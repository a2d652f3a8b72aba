// Restocking (inventory.restock_requested.v2, sent by a process once goods came back — a return's once received):
// the lines go back to available stock once per restock id, and every request is answered with
// inventory.restocked.v2, in the caller's transaction (a consumer's), so the stock, the restock's record and the
// outbox row commit together. Which process asked is not inventory's business: the answer goes back by the stamp the
// request carried. A 1.0 request (an order service of a release before 0.2) is read as its v2 and answered in 1.0.
import { restockedV1Of } from '@meridian/contracts'
import type { TransactionSql } from '@meridian/db'
import { appendToOutbox, createEvent } from '@meridian/events'
import type { RestockRecord, RestocksRepository } from '../data/restocks-repository.ts'
import { serviceSource } from './reservations.ts'
import { isUuid, mergeLines, type StockLine } from './stock-rules.ts'

export interface StockToPutBack {
  /** the asking process's id of the restock: its lines go back once per id */
  restockId: string
  orderId: string
  items: readonly StockLine[]
  /** why, as the asker says it (the stock movements' reason after `restocked: `); absent: the restock's id */
  reason?: string
}

/** The answer's version: v2, or 1.0 for a 1.0 request. */
export type RestockAnswer = 'inventory.restocked.v2' | 'inventory.restocked'

export type RestockOutcome =
  /** the lines were put back now (those whose product exists) */
  | { outcome: 'restocked'; items: StockLine[] }
  /** restocked before (the process asking again, a redelivery): nothing moved, answered again */
  | { outcome: 'already restocked'; items: StockLine[] }

/** An id the order service would never send (its ids are uuids) makes the event bad: thrown, retried, dead-lettered. */
function assertUuid(id: string, what: string): void {
  if (!isUuid(id)) throw new Error(`${what} '${id}' is not a uuid`)
}

export function createRestockUseCases(deps: { restocks: RestocksRepository }) {
  const { restocks } = deps

  /** The answer with the restock's recorded lines, keyed by its order (as inventory's other answers). */
  async function answer(restock: RestockRecord, version: RestockAnswer, tx: TransactionSql): Promise<void> {
    const data = { restockId: restock.restockId, orderId: restock.orderId, items: restock.items }
    const restocked =
      version === 'inventory.restocked'
        ? createEvent(version, restockedV1Of(data), { source: serviceSource })
        : createEvent(version, data, { source: serviceSource })
    await appendToOutbox(tx, restocked, { aggregateId: restock.orderId })
  }

  return {
    /**
     * The lines go back to available stock, once per restock id, and the answer (`inventory.restocked.v2`, or 1.0
     * for a 1.0 request) follows every call. The rule for each line: its product exists (active or not), and its
     * quantity is added to `available` and audited ('restocked: <reason>'); it does not exist (an id this catalogue
     * never had: products are never deleted), and it is not put back and not in the answer — the other lines are, and
     * the asking process goes on. The first call records the restock with the lines put back; a later one (the
     * process asking again on its deadline, a redelivery the inbox forgot) moves nothing and answers with the
     * recorded lines and order, whatever it carries. Two calls at the same moment: the second waits for the first.
     */
    async restock(
      request: StockToPutBack,
      tx: TransactionSql,
      answerAs: RestockAnswer = 'inventory.restocked.v2',
    ): Promise<RestockOutcome> {
      assertUuid(request.restockId, 'restock id')
      assertUuid(request.orderId, 'order id')
      const asked = mergeLines(request.items)
      const done = await restocks.restock(
        {
          restockId: request.restockId,
          orderId: request.orderId,
          lines: asked.filter((line) => isUuid(line.productId)),
          asked,
          reason: `restocked: ${request.reason ?? request.restockId}`,
        },
        tx,
      )
      // recorded by another transaction while this one ran: its row is committed now, read it again
      const restock = done.restock ?? (await restocks.findById(request.restockId, tx))
      if (!restock) throw new Error(`restock ${request.restockId} has neither a new nor a recorded row`)
      await answer(restock, answerAs, tx)
      return { outcome: done.moved ? 'restocked' : 'already restocked', items: restock.items }
    },
  }
}

export type RestockUseCases = ReturnType<typeof createRestockUseCases>
