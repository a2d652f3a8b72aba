// The inbox: event ids a consumer group has processed, recorded in the transaction of their effect.
import type { Queryable, Sql } from '@meridian/db'

/** The spec's retention of processed event ids: 24 hours. */
export const defaultInboxRetentionMs = 24 * 60 * 60 * 1000

/**
 * Records that `group` processed `eventId`. Returns false when it already had, so the caller skips the event;
 * run it in the transaction of the effect, so that the record and the effect commit or roll back together.
 */
export async function recordInInbox(
  tx: Queryable,
  entry: { group: string; eventId: string; topic: string },
): Promise<boolean> {
  const inserted = await tx`
    insert into inbox (consumer_group, event_id, topic)
    values (${entry.group}, ${entry.eventId}, ${entry.topic})
    on conflict do nothing
    returning event_id
  `
  return inserted.length === 1
}

/**
 * Records several events of one group at once (one statement) and returns the ids that were new; the caller applies
 * only those. An id that occurs twice in `eventIds` is returned once.
 */
export async function recordManyInInbox(
  tx: Queryable,
  entries: { group: string; topic: string; eventIds: readonly string[] },
): Promise<Set<string>> {
  // .values(): rows as arrays, whatever column-name transform the caller's client applies
  const inserted = await tx`
    insert into inbox (consumer_group, event_id, topic)
    select ${entries.group}, event_id, ${entries.topic}
    from unnest(${tx.array([...entries.eventIds])}::varchar[]) as event_id
    on conflict do nothing
    returning event_id
  `.values()
  return new Set(inserted.map(([eventId]) => String(eventId)))
}

export interface CleanInboxOptions {
  /** only this group's ids; all groups when absent */
  group?: string
  /** ids processed longer ago than this are removed; default 24 hours */
  retentionMs?: number
  /** rows per delete statement, so a large backlog never holds locks for long; default 5000 */
  batchSize?: number
}

/** Removes processed ids older than the retention; returns how many were removed. */
export async function cleanInbox(sql: Sql, options: CleanInboxOptions = {}): Promise<number> {
  const retentionSeconds = (options.retentionMs ?? defaultInboxRetentionMs) / 1000
  const batchSize = options.batchSize ?? 5000
  const group = options.group ?? null
  let removed = 0
  for (;;) {
    const rows = await sql`
      delete from inbox
      where (consumer_group, event_id) in (
        select consumer_group, event_id from inbox
        where processed_at < now() - make_interval(secs => ${retentionSeconds})
          and (${group}::varchar is null or consumer_group = ${group})
        limit ${batchSize}
      )
      returning event_id
    `
    removed += rows.length
    if (rows.length < batchSize) return removed
  }
}
