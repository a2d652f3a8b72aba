// scripts/backup and scripts/restore refuse what would make a wrong or partial backup or restore before anything is
// written or connected: a folder already used, a restore point's name PostgreSQL would take as something else, a folder
// that is no base backup, a missing archive, a target that is no time or WAL position, two targets at once. The
// PostgreSQL's backups and restores themselves run on a system in tests/e2e/alone/backup-restore.test.ts; here, on
// the running engines, a server that does not archive its WAL refused, and Redis' snapshot taken and loaded by a new
// server.
import { execFile } from 'node:child_process'
import { randomUUID } from 'node:crypto'
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { afterAll, describe, expect, it } from 'vitest'
import { createRestorePoint, takeBaseBackup } from '../src/backup/postgres-backup.ts'
import { prepareRestore, recoverySettings } from '../src/backup/postgres-restore.ts'
import {
  placeRedisSnapshot,
  restoreConsulSnapshot,
  saveConsulSnapshot,
  saveRedisSnapshot,
} from '../src/backup/store-snapshots.ts'
import { freePort } from '../src/free-port.ts'
import { infraDir, layoutFromEnv } from '../src/layout.ts'
import { consulBinary, nativeConsulAddr } from '../src/native/consul.ts'
import { nativePostgresUrl } from '../src/native/postgres.ts'
import { nativeRedisUrl, redisServerArgs } from '../src/native/redis.ts'
import { run, startDaemon, stopPid, waitFor } from '../src/processes.ts'

const dir = mkdtempSync(join(tmpdir(), 'meridian-backup-inputs-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

// nothing listens there: a check that connected would fail with ECONNREFUSED, not the message expected
const nowhere = 'postgres://postgres:x@127.0.0.1:1/postgres'

describe('the backup and restore commands', () => {
  it('when a base backup would go into a folder that holds files, then it is refused before connecting', async () => {
    const used = join(dir, 'used')
    mkdirSync(used)
    writeFileSync(join(used, 'base.tar'), 'an earlier backup')
    await expect(takeBaseBackup({ url: nowhere, to: used })).rejects.toThrow(
      `${used} is not empty: a backup goes into a new folder`,
    )
  })

  it('when a restore point is named with quotes, spaces or 64 characters, then it is refused before connecting', async () => {
    for (const name of ["x'); drop table orders; --", 'two words', 'a'.repeat(64), '']) {
      await expect(createRestorePoint(nowhere, name)).rejects.toThrow(
        "a restore point's name is 1-63 letters",
      )
    }
  })

  it('when the recovery target is a name, a time, a position or the end, then the settings say exactly that', () => {
    const archive = "/backup/it's wal"
    const restore = `restore_command = 'cp ''/backup/it''\\''''s wal/%f'' %p'`
    expect(recoverySettings(archive, 'latest')).toEqual([restore])
    expect(recoverySettings(archive, { name: "before'upgrade" })).toEqual([
      restore,
      "recovery_target_name = 'before''upgrade'",
      'recovery_target_inclusive = on',
      "recovery_target_action = 'promote'",
    ])
    expect(recoverySettings(archive, { time: '2026-12-03T14:05:00Z' })[1]).toBe(
      "recovery_target_time = '2026-12-03T14:05:00Z'",
    )
    expect(recoverySettings(archive, { lsn: '0/5000028' })[1]).toBe("recovery_target_lsn = '0/5000028'")
    expect(() => recoverySettings(archive, { time: 'yesterday' })).toThrow("'yesterday' is no time")
    expect(() => recoverySettings(archive, { lsn: "0/1'; --" })).toThrow('is no WAL position')
  })

  it('when the folder is no base backup, the archive is missing or the data folder holds files, then nothing is written', async () => {
    const notBackup = join(dir, 'not-a-backup')
    mkdirSync(notBackup)
    const archive = join(dir, 'archive')
    mkdirSync(archive)
    const target = join(dir, 'target')
    const restore = (from: string, archiveDir: string, dataDir: string) =>
      prepareRestore({ from, archiveDir, dataDir, target: 'latest' })
    await expect(restore(notBackup, archive, target)).rejects.toThrow(
      'holds no backup.json: it is no base backup',
    )
    const backup = join(dir, 'backup')
    mkdirSync(backup)
    for (const file of ['backup.json', 'base.tar', 'backup_label']) writeFileSync(join(backup, file), '{}')
    await expect(restore(backup, join(dir, 'no-archive'), target)).rejects.toThrow(
      `the WAL archive ${join(dir, 'no-archive')} does not exist`,
    )
    const occupied = join(dir, 'occupied')
    mkdirSync(occupied)
    writeFileSync(join(occupied, 'PG_VERSION'), '17')
    await expect(restore(backup, archive, occupied)).rejects.toThrow(
      `${occupied} is not empty: a restore goes into a new data folder`,
    )
    await expect(
      prepareRestore({ from: backup, archiveDir: archive, dataDir: target, target: { time: 'soon' } }),
    ).rejects.toThrow("'soon' is no time")
  })

  it('when the command is unknown or two targets are given, then it says how it is used and restores nothing', async () => {
    const cli = (...args: string[]) =>
      promisify(execFile)(join(infraDir, 'node_modules', '.bin', 'tsx'), [
        join(infraDir, 'src/backup/main.ts'),
        ...args,
      ])
    await expect(cli('backup', 'everything')).rejects.toMatchObject({
      code: 2,
      stderr: expect.stringContaining('usage: ./scripts/backup postgres --to DIR'),
    })
    await expect(
      cli(
        'restore',
        'postgres',
        '--from',
        dir,
        '--archive',
        dir,
        '--data-dir',
        join(dir, 'x'),
        '--to-point',
        'a',
        '--to-time',
        '2026-12-03T00:00:00Z',
      ),
    ).rejects.toMatchObject({
      code: 1,
      stderr: 'restore: one of --to-point, --to-time and --to-lsn at most\n',
    })
    const help = await cli('restore', '--help').catch((error: { stderr: string }) => error)
    expect(help.stderr).toContain('usage: ./scripts/restore postgres --from DIR --archive DIR --data-dir DIR')
  })

  it('when the server does not archive its WAL, then no base backup is taken (it would restore to no point)', async () => {
    const url = process.env.DATABASE_URL ?? nativePostgresUrl
    const to = join(dir, 'unarchived')
    await expect(takeBaseBackup({ url, to })).rejects.toThrow(
      'the server does not archive its WAL (archive_mode=off)',
    )
  })

  it("when Redis' snapshot is placed in a new server's folder, then that server starts with what Redis held", async () => {
    const url = process.env.REDIS_URL ?? nativeRedisUrl
    const database = new URL(url).pathname.slice(1) || '0'
    const key = `meridian-backup-test:${randomUUID()}`
    const cli = (target: string, ...args: string[]) =>
      run('redis-cli', ['-u', target, '--no-auth-warning', ...args])
    await cli(url, 'SET', key, 'kept', 'EX', '600')
    const file = join(dir, 'redis', 'snapshot.rdb')
    try {
      expect(await saveRedisSnapshot({ url, file })).toBeGreaterThan(0)
    } finally {
      await cli(url, 'DEL', key)
    }
    await expect(saveRedisSnapshot({ url, file })).rejects.toThrow(
      `${file} exists: a snapshot goes into a new file`,
    )
    const serverDir = join(dir, 'redis', 'server')
    expect(placeRedisSnapshot({ file, dir: serverDir })).toBe(join(serverDir, 'dump.rdb'))
    const port = await freePort()
    const pid = startDaemon({
      command: 'redis-server',
      args: redisServerArgs({ bind: ['127.0.0.1'], dir: serverDir, port }),
      logFile: join(dir, 'redis', 'server.log'),
    })
    try {
      const restored = `redis://127.0.0.1:${port}/${database}`
      const value = await waitFor('the restored Redis', () => cli(restored, 'GET', key), {
        timeoutMs: 30_000,
      })
      expect(value.trim()).toBe('kept')
    } finally {
      await stopPid(pid, 'SIGTERM', 10_000)
    }
  })

  it("when Consul's snapshot is restored into a new agent, then its KV store holds what was saved", async () => {
    const live = { ...process.env, CONSUL_HTTP_ADDR: process.env.CONSUL_HTTP_ADDR ?? nativeConsulAddr }
    const consul = (env: NodeJS.ProcessEnv, ...args: string[]) =>
      run(consulBinary(layoutFromEnv()), args, { env })
    const key = `meridian-backup-test/${randomUUID()}`
    await consul(live, 'kv', 'put', key, 'kept')
    const file = join(dir, 'consul', 'snapshot.snap')
    try {
      expect(await saveConsulSnapshot(file, live)).toBeGreaterThan(0)
    } finally {
      await consul(live, 'kv', 'delete', key)
    }
    await expect(saveConsulSnapshot(file, live)).rejects.toThrow(
      `${file} exists: a snapshot goes into a new file`,
    )
    // a second development agent of its own, on free ports (no DNS, no gRPC: the shared agent holds 8502 and 8503)
    const [http, serfLan, serfWan, server] = [
      await freePort(),
      await freePort(),
      await freePort(),
      await freePort(),
    ]
    const agentDir = join(dir, 'consul', 'agent')
    mkdirSync(agentDir, { recursive: true })
    const pid = startDaemon({
      command: consulBinary(layoutFromEnv()),
      args: [
        'agent',
        '-dev',
        '-node=restore-test',
        '-bind=127.0.0.1',
        '-client=127.0.0.1',
        `-http-port=${http}`,
        '-dns-port=-1',
        '-grpc-port=-1',
        '-grpc-tls-port=-1',
        `-serf-lan-port=${serfLan}`,
        `-serf-wan-port=${serfWan}`,
        `-server-port=${server}`,
        '-log-level=warn',
      ],
      logFile: join(agentDir, 'consul.log'),
      cwd: agentDir,
    })
    try {
      const fresh = { ...live, CONSUL_HTTP_ADDR: `127.0.0.1:${http}` }
      // a restore needs the agent's Raft leader
      await waitFor(
        'the new agent has a leader',
        async () => {
          const leader = await consul(fresh, 'operator', 'raft', 'list-peers')
          if (!leader.includes('leader')) throw new Error('no leader yet')
        },
        { timeoutMs: 60_000 },
      )
      await expect(consul(fresh, 'kv', 'get', key)).rejects.toThrow()
      await restoreConsulSnapshot(file, fresh)
      expect((await consul(fresh, 'kv', 'get', key)).trim()).toBe('kept')
    } finally {
      await stopPid(pid, 'SIGINT', 20_000)
    }
  })
})
