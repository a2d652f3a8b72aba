// The backup drill (src/backup-drill.ts): a system of its own on a PostgreSQL server that archives its WAL, backed up
// with ./scripts/backup and restored with ./scripts/restore to a named point between two batches of orders. A file of
// alone/: ./scripts/test runs it beside the end-to-end suite.
import { describe, expect, it } from 'vitest'
import { backupDrill } from '../src/backup-drill.ts'

const say = (line: string) => process.stderr.write(`[backup] ${line}\n`)

describe('a backup restored to a point in time', () => {
  it('when the databases are restored to a point between two batches of orders, then every table is as it was at the point: the orders before it shipped, none after, the outboxes and inboxes with them', async () => {
    const result = await backupDrill({ ordersPerBatch: 4, say })
    const { beforeBackup, beforePoint, afterPoint } = result.orders
    say(
      `base backup ${result.timings.backupMs} ms; restore prepared in ${result.timings.prepareMs} ms, recovered to the point in ${result.timings.recoveryMs} ms`,
    )
    const tables = Object.values(result.restored).flatMap((fingerprint) => Object.values(fingerprint))
    say(
      `compared: ${Object.keys(result.restored).length} databases, ${tables.length} tables, ${tables.reduce((sum, table) => sum + table.rows, 0)} rows`,
    )
    // auth's, order's, payment's, inventory's and shipping's databases, each with its tables
    expect(Object.keys(result.restored)).toHaveLength(5)
    for (const fingerprint of Object.values(result.restored))
      expect(Object.keys(fingerprint).length).toBeGreaterThan(2)
    // nothing moved while the point was made: what it holds is what was read around it
    expect(result.atPointAfter).toEqual(result.atPointBefore)
    // every table of every database, the outboxes and inboxes among them, as it was at the point
    expect(result.restored).toEqual(result.atPointBefore)
    // the comparison covers the consumers' side: the order service applied each order's payment, reservation and
    // shipment (three events an order) and its inbox holds them
    const orderInbox = Object.entries(result.restored).find(([name]) => name.includes('_order_'))?.[1][
      'public.inbox'
    ]
    expect(orderInbox?.rows).toBeGreaterThanOrEqual((beforeBackup.length + beforePoint.length) * 3)
    // the orders from before the backup (the base) and from after it (the archived WAL) are there, shipped
    for (const id of [...beforeBackup, ...beforePoint]) expect(result.restoredOrders[id]).toBe('shipped')
    // the orders after the point are not
    for (const id of afterPoint) expect(result.restoredOrders[id]).toBeUndefined()
    // nothing a restarted relay would send again: every event of the point was published, and the consumers' inboxes
    // (compared above) hold each one they applied
    expect(result.unpublished).toBe(0)
    // a point the archive does not hold: the server stops instead of serving a half-restored state
    expect(result.unreachedTarget).toContain('recovery ended before configured recovery target was reached')
  })
})
