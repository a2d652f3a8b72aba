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
      if (!which('redis-server'))
        throw new MissingPrerequisite("Debian's redis-server", 'installs it with apt-get')
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
