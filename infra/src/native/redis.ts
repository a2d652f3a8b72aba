// redis-server from the operating system's packages, run on 127.0.0.1:6379.
import { existsSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import type { Layout } from '../layout.ts'
import { redisVersion } from '../probes.ts'
import { run, startDaemon } from '../processes.ts'
import { type NativeEngine, PidFile, which } from './engine.ts'

const PORT = 6379
export const nativeRedisUrl = `redis://127.0.0.1:${PORT}`

/**
 * The arguments of a redis-server on the standard port: in the foreground, nothing written to disk (what it holds is
 * derived state the services rebuild: docs/scaling-out.md, "Redis").
 */
export function redisServerArgs(options: { bind: string[]; dir: string }): string[] {
  return [
    '--port',
    String(PORT),
    '--bind',
    options.bind.join(' '),
    '--dir',
    options.dir,
    '--save',
    '',
    '--appendonly',
    'no',
    '--daemonize',
    'no',
  ]
}

/** Installs Debian's redis-server without letting its maintainer scripts start a system-wide server. */
export async function installRedis(progress: (m: string) => void): Promise<void> {
  if (process.getuid?.() !== 0 || !which('apt-get')) {
    throw new Error(
      'redis: redis-server is not installed. Install it from your operating system packages ' +
        '(Debian/Ubuntu: sudo apt-get install redis-server; macOS: brew install redis) and retry.',
    )
  }
  progress('installing redis-server from Debian packages (apt-get); first run only')
  const policy = '/usr/sbin/policy-rc.d'
  const ownPolicy = !existsSync(policy)
  if (ownPolicy)
    writeFileSync(
      policy,
      '#!/bin/sh\n# scripts/infra: do not start services during this install\nexit 101\n',
      { mode: 0o755 },
    )
  try {
    const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' }
    await run('apt-get', ['update', '-q'], { env, showOutput: true })
    await run('apt-get', ['install', '-y', '-q', '--no-install-recommends', 'redis-server'], {
      env,
      showOutput: true,
    })
  } finally {
    if (ownPolicy) rmSync(policy, { force: true })
  }
}

export function nativeRedis(layout: Layout): NativeEngine {
  const home = layout.componentDir('redis')
  const logFile = join(home, 'redis.log')
  const pidFile = new PidFile(home)

  return {
    name: 'redis',
    ports: [PORT],
    endpoint: nativeRedisUrl,
    logFile,
    startTimeoutMs: 30_000,
    runningPid: () => pidFile.live(),
    probe: () => redisVersion(nativeRedisUrl),

    async start(progress) {
      if (!which('redis-server')) await installRedis(progress)
      const pid = startDaemon({
        command: 'redis-server',
        args: redisServerArgs({ bind: ['127.0.0.1'], dir: home }),
        logFile,
        cwd: home,
      })
      pidFile.write(pid)
      return pid
    },

    stop: () => pidFile.stop('SIGTERM', 10_000),
  }
}
