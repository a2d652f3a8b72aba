// Backups and restores (scripts/backup, scripts/restore): PostgreSQL's base backups with WAL archiving for a
// point-in-time restore, Redis' and Consul's snapshots; and a PostgreSQL server of its own for a drill.
export { type PostgresServer, serverAccount, startPostgresServer } from '../native/postgres.ts'
export {
  BackupError,
  type BaseBackupManifest,
  createRestorePoint,
  takeBaseBackup,
  walArchiveSettings,
} from './postgres-backup.ts'
export { prepareRestore, type RecoveryTarget, recoverySettings } from './postgres-restore.ts'
export {
  placeRedisSnapshot,
  restoreConsulSnapshot,
  saveConsulSnapshot,
  saveRedisSnapshot,
} from './store-snapshots.ts'
