// The backup drill: a system of its own on a PostgreSQL server that archives its WAL; orders placed and shipped, a
// base backup (./scripts/backup postgres), more orders, a named restore point (./scripts/backup point) taken while
// nothing moves, more orders after it; then ./scripts/restore postgres into a new data folder, a server started on it,
// and every table of every service's database compared with what it held at the point: the orders, the payments, the
// reservations, the shipments, and the outboxes and inboxes with them. What the restore times say is the drill's RTO
// for this size; the archive's timeout bounds its RPO (docs/how-to/backup-and-restore.md).
import { execFile } from 'node:child_process'
import { chmodSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { freePort, postgresClient, repoRoot } from '@meridian/infra'
import {
  type PostgresServer,
  serverAccount,
  startPostgresServer,
  walArchiveSettings,
} from '@meridian/infra/backup'
import { startSystem } from '@meridian/infra/system'
import { eventually } from '@meridian/testkit'
import { e2eClient } from './client.ts'

const run = promisify(execFile)

/** The services an order needs from placed to shipped, and auth for its customer and administrator. */
export const drillServices = ['auth', 'gateway', 'order', 'payment', 'inventory', 'shipping']

/** Every table of one database: its rows' count and a digest of them all, in a fixed order. */
export type Fingerprint = Record<string, { rows: number; digest: string }>

export interface BackupDrillResult {
  /** database name -> its tables at the restore point, just before and just after it was made */
  atPointBefore: Record<string, Fingerprint>
  atPointAfter: Record<string, Fingerprint>
  /** the same, read from the restored server */
  restored: Record<string, Fingerprint>
  /** the orders placed before the base backup, between it and the point, after the point */
  orders: { beforeBackup: string[]; beforePoint: string[]; afterPoint: string[] }
  /** order id -> status, as the restored order database has them */
  restoredOrders: Record<string, string>
  /** unpublished outbox rows in the restored databases (what a restarted relay would send again) */
  unpublished: number
  /** what a server said when asked to recover to a point the archive does not hold (it must not start) */
  unreachedTarget: string
  timings: { backupMs: number; prepareMs: number; recoveryMs: number }
}

/** The tables of the database at `url`, each as a count and an md5 of its rows' text, sorted. */
export async function fingerprint(url: string): Promise<Fingerprint> {
  const sql = postgresClient(url, { max: 1, onnotice: () => {} })
  try {
    const tables = await sql<{ schema: string; name: string }[]>`
      select table_schema as schema, table_name as name from information_schema.tables
      where table_type = 'BASE TABLE' and table_schema not in ('pg_catalog', 'information_schema')
      order by 1, 2`
    const result: Fingerprint = {}
    for (const { schema, name } of tables) {
      const [row] = await sql<{ rows: number; digest: string }[]>`
        select count(*)::int as rows, md5(coalesce(string_agg(t::text, E'\n' order by t::text), '')) as digest
        from ${sql(schema)}.${sql(name)} t`
      result[`${schema}.${name}`] = { rows: row?.rows ?? 0, digest: row?.digest ?? '' }
    }
    return result
  } finally {
    await sql.end({ timeout: 5 })
  }
}

/** The outbox rows of the database at `url` not yet published (0 where it has no outbox). */
async function unpublishedIn(url: string): Promise<number> {
  const sql = postgresClient(url, { max: 1, onnotice: () => {} })
  try {
    const [table] = await sql<
      { present: boolean }[]
    >`select to_regclass('public.outbox') is not null as present`
    if (!table?.present) return 0
    const [row] = await sql<
      { count: number }[]
    >`select count(*)::int as count from outbox where not published`
    return row?.count ?? 0
  } finally {
    await sql.end({ timeout: 5 })
  }
}

/** `url` with another port and database (the restored server is the live one's copy: the same superuser). */
const on = (url: string, port: number, database: string) => {
  const next = new URL(url)
  next.port = String(port)
  next.pathname = `/${database}`
  return next.toString()
}

const script = (name: string, args: string[]) =>
  run(join(repoRoot, 'scripts', name), args, { cwd: repoRoot, maxBuffer: 16 * 1024 * 1024 })

export async function backupDrill(options: {
  ordersPerBatch: number
  say: (line: string) => void
}): Promise<BackupDrillResult> {
  const { say } = options
  const home = mkdtempSync(join(tmpdir(), 'meridian-backup-drill-'))
  // the server's account (as root) passes through to its own folders
  chmodSync(home, 0o711)
  const archive = join(home, 'archive')
  mkdirSync(archive)
  const account = await serverAccount()
  if (account) await run('chown', [`${account.uid}:${account.gid}`, archive])
  const servers: PostgresServer[] = []
  try {
    const live = await startPostgresServer({
      home: join(home, 'server'),
      port: await freePort(),
      settings: walArchiveSettings(archive),
    })
    servers.push(live)
    say(`a PostgreSQL server archiving its WAL into ${archive}: ${new URL(live.url).port}`)
    const system = await startSystem({
      prefix: 'backup',
      only: drillServices,
      baseEnv: { ...process.env, DATABASE_URL: live.url },
      gatewayPort: await freePort(),
      simulatorPort: 0,
      settings: { LOG_LEVEL: 'warn' },
      log: say,
    })
    let databases: string[] = []
    let orders: BackupDrillResult['orders']
    let atPointBefore: BackupDrillResult['atPointBefore'] = {}
    let atPointAfter: BackupDrillResult['atPointAfter'] = {}
    let backupMs = 0
    try {
      if (!system.admin) throw new Error('the drill needs auth in the system')
      databases = [
        ...new Set(
          Object.values(system.services).flatMap(({ databaseUrl }) =>
            databaseUrl ? [new URL(databaseUrl).pathname.slice(1)] : [],
          ),
        ),
      ]
      const client = e2eClient({ ...system, admin: system.admin })
      const admin = await client.loginAdmin()
      const customer = await client.registerCustomer()
      const product = await client.createProduct(admin, { stock: options.ordersPerBatch * 3 })
      const batch = async (what: string) => {
        const ids: string[] = []
        for (let i = 0; i < options.ordersPerBatch; i++)
          ids.push(await client.placeOrderOk(customer, { product }))
        for (const id of ids) await client.orderReaches(customer, id, 'shipped')
        say(`${ids.length} orders ${what}: shipped`)
        return ids
      }
      const beforeBackup = await batch('before the base backup')
      const backupStarted = Date.now()
      await script('backup', ['postgres', '--url', live.url, '--to', join(home, 'base')])
      backupMs = Date.now() - backupStarted
      const beforePoint = await batch('between the base backup and the restore point')
      // the point is taken where nothing moves: every outbox published, so what the point holds is settled
      const livePort = Number(new URL(live.url).port)
      await eventually('every outbox is published', async () => {
        for (const database of databases)
          if ((await unpublishedIn(on(live.url, livePort, database))) > 0) return false
        return true
      })
      const prints = async () =>
        Object.fromEntries(
          await Promise.all(
            databases.map(
              async (database) => [database, await fingerprint(on(live.url, livePort, database))] as const,
            ),
          ),
        )
      atPointBefore = await prints()
      await script('backup', ['point', 'drill-point', '--url', live.url])
      atPointAfter = await prints()
      const afterPoint = await batch('after the restore point')
      orders = { beforeBackup, beforePoint, afterPoint }
    } finally {
      // its databases are dropped: after the point, so the restore does not see it
      await system.close()
    }

    const restoredDir = join(home, 'restored')
    const prepareStarted = Date.now()
    const restoreArgs = (dataDir: string, point: string) => [
      'postgres',
      '--from',
      join(home, 'base'),
      '--archive',
      archive,
      '--data-dir',
      dataDir,
      '--to-point',
      point,
    ]
    await script('restore', restoreArgs(restoredDir, 'drill-point'))
    const prepareMs = Date.now() - prepareStarted
    const recoveryStarted = Date.now()
    const restoredPort = await freePort()
    const restoredServer = await startPostgresServer({
      home: join(home, 'server'),
      port: restoredPort,
      dataDir: restoredDir,
      settings: { archive_mode: 'off' },
    })
    servers.push(restoredServer)
    await eventually('the restored server has reached the point and takes writes', async () => {
      const sql = postgresClient(restoredServer.url, { max: 1 })
      try {
        const [row] = await sql<{ recovering: boolean }[]>`select pg_is_in_recovery() as recovering`
        return row?.recovering === false
      } finally {
        await sql.end({ timeout: 5 })
      }
    })
    const recoveryMs = Date.now() - recoveryStarted
    const restored = Object.fromEntries(
      await Promise.all(
        databases.map(
          async (database) => [database, await fingerprint(on(live.url, restoredPort, database))] as const,
        ),
      ),
    )
    const orderDatabase = databases.find((name) => name.includes('_order_')) ?? ''
    const sql = postgresClient(on(live.url, restoredPort, orderDatabase), { max: 1 })
    const all = [...orders.beforeBackup, ...orders.beforePoint, ...orders.afterPoint]
    const rows = await sql<{ id: string; status: string }[]>`
      select id::text as id, status from orders where id::text in ${sql(all)}`.finally(() =>
      sql.end({ timeout: 5 }),
    )
    let unpublished = 0
    for (const database of databases) unpublished += await unpublishedIn(on(live.url, restoredPort, database))
    // a point the archive never had: the server replays everything, finds no such point and stops rather than serve
    const unreachedDir = join(home, 'unreached')
    await script('restore', restoreArgs(unreachedDir, 'never-taken'))
    const unreachedTarget = await startPostgresServer({
      home: join(home, 'server'),
      port: await freePort(),
      dataDir: unreachedDir,
      settings: { archive_mode: 'off' },
    }).then(
      (server) => {
        servers.push(server)
        return 'the server started'
      },
      (error: unknown) => (error instanceof Error ? error.message : String(error)),
    )
    return {
      unreachedTarget,
      atPointBefore,
      atPointAfter,
      restored,
      orders,
      restoredOrders: Object.fromEntries(rows.map(({ id, status }) => [id, status])),
      unpublished,
      timings: { backupMs, prepareMs, recoveryMs },
    }
  } finally {
    for (const server of servers.reverse()) await server.stop().catch(() => undefined)
    rmSync(home, { recursive: true, force: true })
  }
}
