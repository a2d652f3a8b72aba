// The instances and their step log in the owning service's PostgreSQL (migrations/0001_processes.sql): SQL only, plain
// objects out; every function takes the pool or an open transaction.
import type { CompensationState, StepOutcome } from '@meridian/contracts'
import {
  defineList,
  type Fragment,
  type ListInput,
  type ListRequestOf,
  type ListResult,
  type Queryable,
} from '@meridian/db'
import type { Scalar, StoredInstance } from './definition.ts'

export interface StoredLogLine {
  step: string
  outcome: StepOutcome
  attempt: number | null
  eventType: string | null
  eventId: string | null
  detail: string | null
  at: Date
}

export interface NewLogLine {
  step: string
  outcome: StepOutcome
  attempt?: number | undefined
  eventType?: string | undefined
  eventId?: string | undefined
  detail?: string | undefined
}

/** What a decision writes of an instance; the deadline: ms from now, null (none), or 'keep'. */
export interface InstanceChange {
  state: string
  step: string | null
  attempt: number
  compensation: CompensationState
  failedStep: string | null
  failureReason: string | null
  escalation: string | null
  data: Record<string, Scalar>
  deadlineInMs: number | null | 'keep'
}

const columns = {
  type: 'type',
  key: 'key',
  state: 'state',
  step: 'step',
  attempt: 'attempt',
  deadline: 'deadline',
  compensation: 'compensation',
  failedStep: 'failed_step',
  failureReason: 'failure_reason',
  escalation: 'escalation',
  escalated: 'escalated',
  data: 'data',
  createdAt: 'created_at',
  updatedAt: 'updated_at',
} as const
const selected = Object.values(columns).filter((column) => column !== 'escalated')

/** GET /admin/processes: every instance of every type, filtered by type, state, compensation, escalated. */
export const processList = defineList({
  table: 'process_instances',
  columns,
  selectable: Object.keys(columns) as (keyof typeof columns)[],
  sortable: ['createdAt', 'updatedAt'],
  filterable: ['type', 'state', 'compensation', 'escalated'],
  defaultSort: 'createdAt:desc',
  alwaysSelected: ['type', 'key'],
  tieBreaker: 'key',
})
export type ProcessListRequest = ListRequestOf<typeof processList>
type ProcessListFilter = 'type' | 'state' | 'compensation' | 'escalated'

/** A log line's length cap: a reason from another service never grows a row without bound. */
const maximumDetail = 500

const deadlineOf = (deadlineInMs: number | null | 'keep', sql: Queryable) =>
  deadlineInMs === 'keep'
    ? sql`deadline`
    : deadlineInMs === null
      ? null
      : sql`now() + ${deadlineInMs}::double precision * interval '1 millisecond'`

/** The log's lines as a further data-modifying CTE (`, steps as (insert ...)`), in the order given. */
function logInsert(type: string, key: string, lines: readonly NewLogLine[], sql: Queryable) {
  if (lines.length === 0) return sql``
  return sql`,
        steps as (
          insert into process_steps ${sql(
            lines.map((line) => ({
              type,
              key,
              step: line.step,
              outcome: line.outcome,
              attempt: line.attempt ?? null,
              event_type: line.eventType ?? null,
              event_id: line.eventId ?? null,
              detail: line.detail === undefined ? null : line.detail.slice(0, maximumDetail),
            })),
          )}
        )`
}

type LockedRow = StoredInstance & { owner: Record<string, unknown> | null }

export function createProcessStore(db: Queryable) {
  return {
    /** A new instance and its first log lines, in one statement (sent as it is called). */
    async start(
      type: string,
      key: string,
      change: Omit<InstanceChange, 'deadlineInMs' | 'escalation'> & { deadlineInMs: number | null },
      lines: readonly NewLogLine[],
      sql: Queryable = db,
    ): Promise<void> {
      await sql`
        with instance as (
          insert into process_instances
            (type, key, state, step, attempt, compensation, failed_step, failure_reason, data, deadline)
          values (${type}, ${key}, ${change.state}, ${change.step}, ${change.attempt}, ${change.compensation},
            ${change.failedStep}, ${change.failureReason}, ${sql.json(change.data)},
            ${deadlineOf(change.deadlineInMs, sql)})
        )${logInsert(type, key, lines, sql)}
        select 1`
    },

    /**
     * Locks the owner's row (when `owner` is given), then the instance's, and reads both in one statement.
     * Undefined when either does not exist; with `onlyIfDue`, also when the deadline has not passed (its answer came
     * meanwhile) or another process holds the instance.
     */
    async lock(
      type: string,
      key: string,
      owner: Fragment | undefined,
      { onlyIfDue = false }: { onlyIfDue?: boolean } = {},
      sql: Queryable = db,
    ): Promise<LockedRow | undefined> {
      const due = onlyIfDue ? sql` and p.deadline is not null and p.deadline <= now()` : sql``
      const skip = onlyIfDue ? sql` skip locked` : sql``
      // materialized: the owner's row is locked as the CTE yields it, before the instance's row is reached
      const [row] = owner
        ? await sql<LockedRow[]>`
            with owner as materialized (${owner} for update)
            select ${sql(selected.map((column) => `p.${column}`))}, to_jsonb(o) as owner
            from owner o, process_instances p
            where p.type = ${type} and p.key = ${key}${due}
            for update of p${skip}`
        : await sql<LockedRow[]>`
            select ${sql(selected.map((column) => `p.${column}`))}, null as owner
            from process_instances p
            where p.type = ${type} and p.key = ${key}${due}
            for update of p${skip}`
      return row
    },

    /** A decision's writes in one statement: the instance, the owner's change (if any) and the log lines. */
    async record(
      type: string,
      key: string,
      change: InstanceChange,
      ownerWrite: Fragment | null,
      lines: readonly NewLogLine[],
      sql: Queryable = db,
    ): Promise<void> {
      await sql`
        with instance as (
          update process_instances set
            state = ${change.state}, step = ${change.step}, attempt = ${change.attempt},
            compensation = ${change.compensation}, failed_step = ${change.failedStep},
            failure_reason = ${change.failureReason}, escalation = ${change.escalation},
            data = ${sql.json(change.data)}, deadline = ${deadlineOf(change.deadlineInMs, sql)}, updated_at = now()
          where type = ${type} and key = ${key}
        )${
          ownerWrite
            ? sql`,
        owner_write as (${ownerWrite})`
            : sql``
        }${logInsert(type, key, lines, sql)}
        select 1`
    },

    /**
     * The owners' rows of `keys` (as to_jsonb gives them), read as they are (no lock) in one statement: what the
     * operators' view restores instances with.
     */
    async ownersOf(
      select: (key: string, sql: Queryable) => Fragment,
      keys: readonly string[],
      sql: Queryable = db,
    ): Promise<Map<string, Record<string, unknown>>> {
      if (keys.length === 0) return new Map()
      const parts = keys.map(
        (key) => sql`select ${key}::text as key, to_jsonb(o) as owner from (${select(key, sql)}) o`,
      )
      const union = parts.slice(1).reduce((all, part) => sql`${all} union all ${part}`, parts[0] as Fragment)
      const rows = await sql<{ key: string; owner: Record<string, unknown> }[]>`${union}`
      return new Map(rows.map((row) => [row.key, row.owner]))
    },

    async find(type: string, key: string, sql: Queryable = db): Promise<StoredInstance | undefined> {
      const [row] = await sql<StoredInstance[]>`
        select ${sql(selected)} from process_instances where type = ${type} and key = ${key}`
      return row
    },

    async logOf(type: string, key: string, sql: Queryable = db): Promise<StoredLogLine[]> {
      return sql<StoredLogLine[]>`
        select step, outcome, attempt, event_type, event_id, detail, at
        from process_steps where type = ${type} and key = ${key} order by id`
    },

    /** Up to `limit` instances of the given types whose deadline has passed, the most overdue first. */
    async due(types: readonly string[], limit: number, sql: Queryable = db) {
      return sql<{ type: string; key: string }[]>`
        select type, key from process_instances
        where deadline is not null and deadline <= now() and type in ${sql(types)}
        order by deadline limit ${limit}`
    },

    listRequest: (query: ListInput<ProcessListFilter>): ProcessListRequest => processList.parse(query),

    async list(request: ProcessListRequest, sql: Queryable = db): Promise<ListResult<StoredInstance>> {
      const { rows, total } = await processList.run<Record<string, unknown>>(sql, request)
      return { total, rows: rows as unknown as StoredInstance[] }
    },
  }
}

export type ProcessStore = ReturnType<typeof createProcessStore>
