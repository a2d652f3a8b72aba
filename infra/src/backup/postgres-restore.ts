// A data folder made from a base backup (postgres-backup.ts) that recovers, once a PostgreSQL server of the same major
// version starts on it, by replaying the archived WAL up to a target: a named restore point, a time, a WAL position,
// or the archive's end. The server then promotes itself and takes writes on a new timeline; the old server's archive
// is only read.
import {
  chmodSync,
  copyFileSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  writeFileSync,
} from 'node:fs'
import { join } from 'node:path'
import { run } from '../processes.ts'
import { BackupError, type BaseBackupManifest, baseArchive, manifestFile } from './postgres-backup.ts'

/** Where the recovery stops: a restore point's name, a time, a WAL position, or the last WAL archived. */
export type RecoveryTarget = { name: string } | { time: string } | { lsn: string } | 'latest'

const quote = (value: string) => `'${value.replaceAll("'", "''")}'`

/** The recovery settings for `target`, as postgresql.auto.conf lines. */
export function recoverySettings(archiveDir: string, target: RecoveryTarget): string[] {
  const shellQuoted = archiveDir.replaceAll("'", "'\\''")
  const lines = [`restore_command = ${quote(`cp '${shellQuoted}/%f' %p`)}`]
  if (target !== 'latest') {
    if ('name' in target) lines.push(`recovery_target_name = ${quote(target.name)}`)
    else if ('time' in target) {
      if (Number.isNaN(Date.parse(target.time)))
        throw new BackupError(
          `'${target.time}' is no time (ISO 8601 with its zone, e.g. 2026-12-03T18:00:00Z)`,
        )
      lines.push(`recovery_target_time = ${quote(target.time)}`)
    } else {
      if (!/^[0-9A-F]{1,8}\/[0-9A-F]{1,8}$/i.test(target.lsn))
        throw new BackupError(`'${target.lsn}' is no WAL position (like 0/3000060)`)
      lines.push(`recovery_target_lsn = ${quote(target.lsn)}`)
    }
    // the target's own transaction is kept; then the server ends recovery and takes writes
    lines.push('recovery_target_inclusive = on', `recovery_target_action = 'promote'`)
  }
  return lines
}

/**
 * Makes `dataDir` (new or empty) a copy of the backup in `from` that recovers to `target` from the WAL in
 * `archiveDir`, owned by `account` when given (the server's system account). Returns the backup's manifest.
 */
export async function prepareRestore(options: {
  from: string
  archiveDir: string
  dataDir: string
  target: RecoveryTarget
  account?: { uid: number; gid: number }
}): Promise<BaseBackupManifest> {
  const { from, archiveDir, dataDir, target, account } = options
  for (const file of [manifestFile, baseArchive, 'backup_label']) {
    if (!existsSync(join(from, file))) throw new BackupError(`${from} holds no ${file}: it is no base backup`)
  }
  if (!existsSync(archiveDir)) throw new BackupError(`the WAL archive ${archiveDir} does not exist`)
  if (existsSync(dataDir) && readdirSync(dataDir).length > 0)
    throw new BackupError(`${dataDir} is not empty: a restore goes into a new data folder`)
  const settings = recoverySettings(archiveDir, target)
  const manifest = JSON.parse(readFileSync(join(from, manifestFile), 'utf8')) as BaseBackupManifest
  mkdirSync(dataDir, { recursive: true })
  chmodSync(dataDir, 0o700)
  await run('tar', ['--extract', `--file=${join(from, baseArchive)}`, `--directory=${dataDir}`])
  copyFileSync(join(from, 'backup_label'), join(dataDir, 'backup_label'))
  if (existsSync(join(from, 'tablespace_map')))
    copyFileSync(join(from, 'tablespace_map'), join(dataDir, 'tablespace_map'))
  mkdirSync(join(dataDir, 'pg_wal'), { recursive: true })
  // recovery.signal: replay the archive to the target, then promote (standby.signal would follow it instead)
  writeFileSync(join(dataDir, 'recovery.signal'), '')
  const autoConf = join(dataDir, 'postgresql.auto.conf')
  const before = existsSync(autoConf) ? readFileSync(autoConf, 'utf8') : ''
  writeFileSync(
    autoConf,
    `${before}${before.endsWith('\n') || before === '' ? '' : '\n'}# scripts/restore: recovery from ${manifest.label} (${manifest.stopLsn})\n${settings.join('\n')}\n`,
  )
  if (account) await run('chown', ['-R', `${account.uid}:${account.gid}`, dataDir])
  return manifest
}
