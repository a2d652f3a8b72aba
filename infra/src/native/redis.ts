// redis-server from the operating system's packages, run on 127.0.0.1:6379.
import { join } from 'node:path'
import type { Layout } from '../layout.ts'
import { MissingPrerequisite } from '../missing-prerequisite.ts'
import { redisVersion } from '../probes.ts'
import { startDaemon } from '../processes.ts'
import { type NativeEngine, PidFile, which } from './engine.ts'

const PORT = 6379
export const nativeRedisUrl = `redis://127.0.0.1:${PORT}`

/**
 * The arguments of a redis-server on the standard port (or `port`; 0: no plaintext port, the secure one's): in the
 * foreground, nothing written to disk (what it holds is derived state the services rebuild: docs/how-to/scaling-out.md,
 * "Redis").
 */
export function redisServerArgs(options: { bind: string[]; dir: string; port?: number }): string[] {
  return [
    '--port',
    String(options.port ?? PORT),
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

/** Debian's redis-server, which every Redis of infra runs (native, secure, the cluster's): a MissingPrerequisite without it. */
export function assertRedisServer(): void {
  if (!which('redis-server'))
    throw new MissingPrerequisite("Debian's redis-server", 'installs it with apt-get')
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

    async start() {
      assertRedisServer()
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
