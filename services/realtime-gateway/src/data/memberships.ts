// Members of a room or a document in PostgreSQL: one table per resource (chat_room_members, document_members), the
// same SQL for both. SQL only, plain objects out; every function takes the pool or an open transaction.
import type { Queryable } from '@meridian/db'

/** Which table holds the members, and the column naming the resource. Fixed names, never from a request. */
export interface MembershipTable {
  table: 'chat_room_members' | 'document_members'
  resourceColumn: 'room_id' | 'document_id'
}

export interface MemberRecord {
  userId: string
  joinedAt: Date
}

export function createMembershipsRepository(db: Queryable, { table, resourceColumn }: MembershipTable) {
  return {
    async isMember(resourceId: string, userId: string, sql: Queryable = db): Promise<boolean> {
      const [row] = await sql<{ one: number }[]>`
        select 1 as one from ${sql(table)} where ${sql(resourceColumn)} = ${resourceId} and user_id = ${userId}`
      return row !== undefined
    },

    /** Adds the member; `created` is false when they were one already (their membership is answered as it is). */
    async add(
      resourceId: string,
      userId: string,
      sql: Queryable = db,
    ): Promise<{ member: MemberRecord; created: boolean }> {
      // one statement: the insert, or the existing row when the insert did nothing (a concurrent removal between
      // two statements cannot make it answer nothing)
      const [row] = await sql<(MemberRecord & { created: boolean })[]>`
        with inserted as (
          insert into ${sql(table)} ${sql({ [resourceColumn]: resourceId, user_id: userId })}
          on conflict do nothing
          returning user_id, joined_at
        )
        select user_id, joined_at, true as created from inserted
        union all
        select user_id, joined_at, false as created from ${sql(table)}
        where ${sql(resourceColumn)} = ${resourceId} and user_id = ${userId} and not exists (select 1 from inserted)`
      if (!row)
        throw new Error(`membership of ${userId} in ${table} ${resourceId} was neither added nor found`)
      return { member: { userId: row.userId, joinedAt: row.joinedAt }, created: row.created }
    },

    /** Removes the member; false when they were not one. */
    async remove(resourceId: string, userId: string, sql: Queryable = db): Promise<boolean> {
      const removed = await sql`
        delete from ${sql(table)} where ${sql(resourceColumn)} = ${resourceId} and user_id = ${userId}`
      return removed.count > 0
    },
  }
}

export type MembershipsRepository = ReturnType<typeof createMembershipsRepository>
