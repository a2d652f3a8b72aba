// Users' notification preferences in PostgreSQL: a row per (user, type) that has a channel turned off; a missing row
// is every channel on. SQL only, plain objects out.
import type { NotificationType } from '@meridian/contracts'
import type { Queryable } from '@meridian/db'

export interface ChannelSwitches {
  inApp: boolean
  realtime: boolean
  email: boolean
}

export interface PreferenceRecord extends ChannelSwitches {
  type: NotificationType
}

export function createPreferencesRepository(db: Queryable) {
  return {
    /** The user's rows (types with a channel off), by type. */
    async ofUser(userId: string, sql: Queryable = db): Promise<PreferenceRecord[]> {
      return sql<PreferenceRecord[]>`
        select type, in_app as "inApp", realtime, email from notification_preferences
        where user_id = ${userId} order by type`
    },

    /**
     * Replaces the user's preferences: only types with a channel off keep a row. One statement: the types no longer
     * off are deleted and the others written over (an upsert), so a replace with rows already there, or two at once,
     * never meets the unique key (a delete of every row beside an insert of the same keys in one statement does: its
     * parts see one snapshot).
     */
    async replace(userId: string, records: readonly PreferenceRecord[], sql: Queryable = db): Promise<void> {
      const off = records.filter((record) => !(record.inApp && record.realtime && record.email))
      const types = off.map((record) => record.type)
      await sql`
        with removed as (
          delete from notification_preferences
          where user_id = ${userId} and type <> all(${sql.array(types)}::text[])
        )
        insert into notification_preferences (user_id, type, in_app, realtime, email)
        select ${userId}::uuid, type, in_app, realtime, email
        from unnest(
          ${sql.array(types)}::text[],
          ${sql.array(off.map((record) => record.inApp))}::boolean[],
          ${sql.array(off.map((record) => record.realtime))}::boolean[],
          ${sql.array(off.map((record) => record.email))}::boolean[]
        ) as wanted (type, in_app, realtime, email)
        on conflict (user_id, type) do update set in_app = excluded.in_app, realtime = excluded.realtime,
          email = excluded.email, updated_at = now()`
    },

    /** Turns e-mail of one type off for the user, leaving its other channels as they are. */
    async turnEmailOff(userId: string, type: NotificationType, sql: Queryable = db): Promise<void> {
      await sql`
        insert into notification_preferences (user_id, type, email) values (${userId}, ${type}, false)
        on conflict (user_id, type) do update set email = false, updated_at = now()`
    },
  }
}

export type PreferencesRepository = ReturnType<typeof createPreferencesRepository>
