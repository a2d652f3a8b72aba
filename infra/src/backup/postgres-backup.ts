// A PostgreSQL server's base backup and named restore points, by PostgreSQL's own low-level API (pg_backup_start, a
// copy of the data folder, pg_backup_stop: the "low level" base backup of PostgreSQL's manual, §26.3.3), for point-in-time
// recovery together with the WAL the server archives (archive_mode=on and an archive_command: walArchiveSettings).
// It runs on the server's host (it reads the data folder) as a superuser, over the server's own SQL connection: no
// replication connection and no client tools of the server's version are needed (Debian's pg_basebackup is 15, the
// servers 17). postgres-restore.ts makes a data folder from what it writes.
import { existsSync, mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { postgresClient } from '../probes.ts'
import { run } from '../processes.ts'

/** What a backup folder holds beside the copy itself (base.tar) and the label PostgreSQL gave it (backup_label). */
export interface BaseBackupManifest {
  label: string
  /** the WAL position the backup starts at and the one a restore must reach before the copy is consistent */
  startLsn: string
  stopLsn: string
  startedAt: string
  stoppedAt: string
  serverVersion: string
  /** the data folder copied (base.tar holds its contents) */
  dataDirectory: string
}

export const manifestFile = 'backup.json'
export const baseArchive = 'base.tar'

/**
 * The server settings that archive every finished WAL segment into `archiveDir` (never overwriting one already
 * there) and close a segment at least every `timeoutSeconds`: what the restore replays on top of a base backup, and
 * what bounds the data a lost server can take with it (its RPO).
 */
export function walArchiveSettings(archiveDir: string, timeoutSeconds = 60): Record<string, string> {
  const quoted = archiveDir.replaceAll("'", "'\\''")
  return {
    wal_level: 'replica',
    archive_mode: 'on',
    archive_command: `test ! -f '${quoted}/%f' && cp %p '${quoted}/%f'`,
    archive_timeout: String(timeoutSeconds),
  }
}

/**
 * What the copy leaves out (PostgreSQL's manual and pg_basebackup's own list): the WAL (the archive has it), the
 * running server's own files, and folders the server empties at start. Their folders stay, empty.
 */
const excluded = [
  './pg_wal/*',
  './postmaster.pid',
  './postmaster.opts',
  './pg_replslot/*',
  './pg_dynshmem/*',
  './pg_notify/*',
  './pg_serial/*',
  './pg_snapshots/*',
  './pg_stat_tmp/*',
  './pg_subtrans/*',
  'pgsql_tmp*',
  'pg_internal.init',
]

export class BackupError extends Error {}

/** `to` must be a new or empty folder: a backup never mixes with another's files. */
function newFolder(to: string): void {
  if (existsSync(to) && readdirSync(to).length > 0)
    throw new BackupError(`${to} is not empty: a backup goes into a new folder`)
  mkdirSync(to, { recursive: true })
}

/**
 * A base backup of the server at `url` (a superuser's URL; the server runs on this host) into the new folder `to`:
 * base.tar (the data folder), backup_label (and tablespace_map when there are tablespaces) and backup.json. Refused
 * when the server does not archive its WAL: a base backup alone restores to no point at all.
 */
export async function takeBaseBackup(options: {
  url: string
  to: string
  /** the data folder; default the server's own (data_directory) */
  dataDir?: string
  label?: string
  log?: (line: string) => void
}): Promise<BaseBackupManifest> {
  const log = options.log ?? (() => {})
  newFolder(options.to)
  const sql = postgresClient(options.url, { max: 1, onnotice: () => {} })
  try {
    const session = await sql.reserve()
    try {
      const [settings] = await session<
        { archive_mode: string; data_directory: string; server_version: string }[]
      >`select current_setting('archive_mode') as archive_mode, current_setting('data_directory') as data_directory,
        current_setting('server_version') as server_version`
      if (!settings) throw new BackupError('the server answered no settings')
      if (settings.archive_mode === 'off') {
        throw new BackupError(
          'the server does not archive its WAL (archive_mode=off): set archive_mode=on and an archive_command first (docs/how-to/backup-and-restore.md)',
        )
      }
      const dataDir = options.dataDir ?? settings.data_directory
      if (!existsSync(join(dataDir, 'PG_VERSION')))
        throw new BackupError(`${dataDir} is no PostgreSQL data folder here: run this on the server's host`)
      const label = options.label ?? `meridian ${new Date().toISOString()}`
      const startedAt = new Date().toISOString()
      // fast: a checkpoint now rather than spread over checkpoint_timeout
      const [start] = await session<{ lsn: string }[]>`select pg_backup_start(${label}, true)::text as lsn`
      log(`backup started at ${start?.lsn}: copying ${dataDir}`)
      let stopped = false
      try {
        await copyDataFolder(dataDir, join(options.to, baseArchive))
        // waits until the WAL the copy needs is archived: the backup is whole once this returns
        const [stop] = await session<{ lsn: string; labelfile: string; spcmapfile: string | null }[]>`
          select lsn::text as lsn, labelfile, spcmapfile from pg_backup_stop(true)`
        stopped = true
        if (!stop) throw new BackupError('pg_backup_stop answered nothing')
        writeFileSync(join(options.to, 'backup_label'), stop.labelfile)
        if (stop.spcmapfile) writeFileSync(join(options.to, 'tablespace_map'), stop.spcmapfile)
        const manifest: BaseBackupManifest = {
          label,
          startLsn: start?.lsn ?? '',
          stopLsn: stop.lsn,
          startedAt,
          stoppedAt: new Date().toISOString(),
          serverVersion: settings.server_version,
          dataDirectory: dataDir,
        }
        writeFileSync(join(options.to, manifestFile), `${JSON.stringify(manifest, null, 2)}\n`)
        log(`backup finished at ${stop.lsn}: ${options.to}`)
        return manifest
      } finally {
        if (!stopped) await session`select pg_backup_stop(false)`.catch(() => undefined)
      }
    } finally {
      session.release()
    }
  } catch (error) {
    rmSync(join(options.to, baseArchive), { force: true })
    throw error
  } finally {
    await sql.end({ timeout: 5 })
  }
}

/**
 * The data folder into `file` as a tar. Files the running server changes or removes meanwhile are expected (the WAL
 * replayed from the backup's start mends them): GNU tar reports those with status 1, which is no failure here.
 */
async function copyDataFolder(dataDir: string, file: string): Promise<void> {
  const args = [
    '--create',
    `--file=${file}`,
    `--directory=${dataDir}`,
    '--ignore-failed-read',
    '--warning=no-file-changed',
    '--warning=no-file-removed',
    ...excluded.map((pattern) => `--exclude=${pattern}`),
    '.',
  ]
  try {
    await run('tar', args)
  } catch (error) {
    if (!(error instanceof Error) || !/ exited with 1\n/.test(error.message)) throw error
  }
}

/**
 * A named point to restore to (before an upgrade, a migration, a bulk change), written to the WAL and the segment
 * holding it closed at once so that the archive has it; returns the WAL position.
 */
export async function createRestorePoint(url: string, name: string): Promise<string> {
  if (!/^[A-Za-z0-9._-]{1,63}$/.test(name))
    throw new BackupError(`a restore point's name is 1-63 letters, digits, '.', '_' or '-' (got '${name}')`)
  const sql = postgresClient(url, { max: 1, onnotice: () => {} })
  try {
    const [point] = await sql<{ lsn: string }[]>`select pg_create_restore_point(${name})::text as lsn`
    await sql`select pg_switch_wal()`
    return point?.lsn ?? ''
  } finally {
    await sql.end({ timeout: 5 })
  }
}
