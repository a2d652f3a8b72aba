// `./scripts/backup` and `./scripts/restore`: PostgreSQL base backups, restore points and point-in-time restores,
// Redis and Consul snapshots (docs/how-to/backup-and-restore.md).
import { resolve } from 'node:path'
import { parseArgs } from 'node:util'
import { serverAccount } from '../native/postgres.ts'
import { BackupError, createRestorePoint, takeBaseBackup } from './postgres-backup.ts'
import { prepareRestore, type RecoveryTarget } from './postgres-restore.ts'
import {
  placeRedisSnapshot,
  restoreConsulSnapshot,
  saveConsulSnapshot,
  saveRedisSnapshot,
} from './store-snapshots.ts'

const backupUsage = `usage: ./scripts/backup postgres --to DIR [--url URL] [--data-dir DIR] [--label TEXT]
       ./scripts/backup point NAME [--url URL]
       ./scripts/backup redis --to FILE [--url URL] [--ca FILE]
       ./scripts/backup consul --to FILE

  postgres   a base backup of the server (run on its host, as a superuser): DIR/base.tar, backup_label, backup.json.
             The server must archive its WAL (archive_mode=on, an archive_command): the restore replays it.
  point      a named restore point (before an upgrade or a bulk change), its WAL segment archived at once
  redis      the Redis' RDB snapshot (redis-cli --rdb), from any host that reaches it
  consul     the Consul cluster's snapshot (consul snapshot save; CONSUL_HTTP_ADDR, CONSUL_HTTP_TOKEN, CONSUL_CACERT)

  --url      PostgreSQL: a superuser's URL (default DATABASE_URL); Redis: default REDIS_URL
  --ca       the CA of a rediss:// server (default REDIS_TLS_CA)`

const restoreUsage = `usage: ./scripts/restore postgres --from DIR --archive DIR --data-dir DIR [--to-point NAME | --to-time TIME | --to-lsn LSN]
       ./scripts/restore redis --from FILE --dir DIR [--dbfilename NAME]
       ./scripts/restore consul --from FILE

  postgres   makes the new, empty --data-dir a copy of the backup in --from that replays the WAL of --archive up to
             the target (default: all of it) and then takes writes: start PostgreSQL (the same major version) on it
  redis      places the snapshot where a stopped Redis server loads it at start (--dir, --dbfilename: default dump.rdb)
  consul     restores the snapshot into the Consul cluster CONSUL_HTTP_ADDR reaches`

function targetOf(values: { 'to-point'?: string; 'to-time'?: string; 'to-lsn'?: string }): RecoveryTarget {
  const given = [values['to-point'], values['to-time'], values['to-lsn']].filter(
    (value) => value !== undefined,
  )
  if (given.length > 1) throw new BackupError('one of --to-point, --to-time and --to-lsn at most')
  if (values['to-point'] !== undefined) return { name: values['to-point'] }
  if (values['to-time'] !== undefined) return { time: values['to-time'] }
  if (values['to-lsn'] !== undefined) return { lsn: values['to-lsn'] }
  return 'latest'
}

const say = (line: string) => process.stdout.write(`${line}\n`)
const path = (value: string) => resolve(process.env.INIT_CWD ?? process.cwd(), value)

function required(value: string | undefined, what: string): string {
  if (!value) throw new BackupError(`${what} is required`)
  return value
}

async function backup(command: string | undefined, args: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: {
      to: { type: 'string' },
      url: { type: 'string' },
      'data-dir': { type: 'string' },
      label: { type: 'string' },
      ca: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  })
  const env = process.env
  switch (values.help ? 'help' : command) {
    case 'postgres': {
      const manifest = await takeBaseBackup({
        url: required(values.url ?? env.DATABASE_URL, '--url (or DATABASE_URL)'),
        to: path(required(values.to, '--to')),
        ...(values['data-dir'] ? { dataDir: path(values['data-dir']) } : {}),
        ...(values.label ? { label: values.label } : {}),
        log: say,
      })
      say(`base backup '${manifest.label}': WAL ${manifest.startLsn} to ${manifest.stopLsn}`)
      return 0
    }
    case 'point': {
      const name = required(positionals[0], "the restore point's NAME")
      const lsn = await createRestorePoint(
        required(values.url ?? env.DATABASE_URL, '--url (or DATABASE_URL)'),
        name,
      )
      say(`restore point '${name}' at ${lsn}`)
      return 0
    }
    case 'redis': {
      const file = path(required(values.to, '--to'))
      const ca = values.ca ?? env.REDIS_TLS_CA
      const bytes = await saveRedisSnapshot({
        url: required(values.url ?? env.REDIS_URL, '--url (or REDIS_URL)'),
        file,
        ...(ca ? { caFile: ca } : {}),
      })
      say(`Redis snapshot: ${file} (${bytes} bytes)`)
      return 0
    }
    case 'consul': {
      const file = path(required(values.to, '--to'))
      say(`Consul snapshot: ${file} (${await saveConsulSnapshot(file)} bytes)`)
      return 0
    }
    default:
      process.stderr.write(`${backupUsage}\n`)
      return values.help ? 0 : 2
  }
}

async function restore(command: string | undefined, args: string[]): Promise<number> {
  const { values } = parseArgs({
    args,
    options: {
      from: { type: 'string' },
      archive: { type: 'string' },
      'data-dir': { type: 'string' },
      'to-point': { type: 'string' },
      'to-time': { type: 'string' },
      'to-lsn': { type: 'string' },
      dir: { type: 'string' },
      dbfilename: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  })
  switch (values.help ? 'help' : command) {
    case 'postgres': {
      const dataDir = path(required(values['data-dir'], '--data-dir'))
      const account = await serverAccount()
      const manifest = await prepareRestore({
        from: path(required(values.from, '--from')),
        archiveDir: path(required(values.archive, '--archive')),
        dataDir,
        target: targetOf(values),
        ...(account ? { account } : {}),
      })
      say(
        `${dataDir}: '${manifest.label}' recovers when PostgreSQL ${manifest.serverVersion.split('.')[0]} starts on it`,
      )
      return 0
    }
    case 'redis': {
      const placed = placeRedisSnapshot({
        file: path(required(values.from, '--from')),
        dir: path(required(values.dir, '--dir')),
        ...(values.dbfilename ? { dbfilename: values.dbfilename } : {}),
      })
      say(`${placed}: loaded when Redis starts with this dir and dbfilename`)
      return 0
    }
    case 'consul': {
      await restoreConsulSnapshot(path(required(values.from, '--from')))
      say('Consul snapshot restored')
      return 0
    }
    default:
      process.stderr.write(`${restoreUsage}\n`)
      return values.help ? 0 : 2
  }
}

const [mode, ...args] = process.argv.slice(2)
// the command first (`postgres`, `point`, ...); `--help` alone has none
const command = args[0]?.startsWith('-') ? undefined : args.shift()
try {
  process.exitCode = await (mode === 'restore' ? restore : backup)(command, args)
} catch (error) {
  process.stderr.write(`${mode}: ${error instanceof Error ? error.message : String(error)}\n`)
  process.exitCode = error instanceof BackupError || error instanceof TypeError ? 1 : 2
}
