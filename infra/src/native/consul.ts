// Consul built once from the Go module proxy (wrapper module infra/consul) and run as a dev agent on loopback.
import { join } from 'node:path'
import { infraDir, type Layout } from '../layout.ts'
import { consulVersion } from '../probes.ts'
import { startDaemon } from '../processes.ts'
import { type NativeEngine, PidFile } from './engine.ts'
import { builtGoBinary, type GoBuild, requiredVersion } from './go-build.ts'

const HTTP_PORT = 8500
const DNS_PORT = 8600
export const nativeConsulAddr = `http://127.0.0.1:${HTTP_PORT}`

const wrapperDir = join(infraDir, 'consul')

/** The Consul version the wrapper module pins. */
export function pinnedConsulVersion(): string {
  return requiredVersion(wrapperDir, 'github.com/hashicorp/consul')
}

/** How Consul is built from infra/consul, once per version, into the component's `bin` (the engine image copies it). */
export function consulBuild(layout: Layout): GoBuild {
  const version = pinnedConsulVersion()
  return {
    name: 'consul',
    title: `Consul ${version}`,
    version,
    wrapperDir,
    mainPackage: 'github.com/hashicorp/consul',
    toolchain: 'local',
    binDir: join(layout.componentDir('consul'), 'bin'),
  }
}

/** The Consul binary the preparation built; MissingPrerequisite before that. */
export const consulBinary = (layout: Layout): string => builtGoBinary(consulBuild(layout))

/** How a Consul agent we started is stopped: SIGINT (it leaves gracefully, or a server just shuts down), then killed. */
export const consulStop = { signal: 'SIGINT', graceMs: 20_000 } as const satisfies {
  signal: NodeJS.Signals
  graceMs: number
}

/** Starts `consul agent <args>` in the background, its output in `logFile`, and records its pid in `pidFile`. */
export function startConsulAgent(
  layout: Layout,
  options: { args: readonly string[]; logFile: string; cwd: string; pidFile: PidFile },
): number {
  const pid = startDaemon({
    command: consulBinary(layout),
    args: ['agent', ...options.args],
    logFile: options.logFile,
    cwd: options.cwd,
  })
  options.pidFile.write(pid)
  return pid
}

export function nativeConsul(layout: Layout): NativeEngine {
  const home = layout.componentDir('consul')
  const logFile = join(home, 'consul.log')
  const pidFile = new PidFile(home)

  return {
    name: 'consul',
    // HTTP, DNS, server RPC, serf LAN/WAN, gRPC
    ports: [HTTP_PORT, DNS_PORT, 8300, 8301, 8302, 8502],
    endpoint: nativeConsulAddr,
    logFile,
    startTimeoutMs: 60_000,
    runningPid: () => pidFile.live(),
    probe: () => consulVersion({ address: nativeConsulAddr }),

    async start() {
      return startConsulAgent(layout, {
        args: [
          '-dev',
          '-node=meridian-dev',
          '-bind=127.0.0.1',
          '-client=127.0.0.1',
          `-http-port=${HTTP_PORT}`,
          `-dns-port=${DNS_PORT}`,
          '-log-level=warn',
        ],
        logFile,
        cwd: home,
        pidFile,
      })
    },

    stop: () => pidFile.stop(consulStop.signal, consulStop.graceMs),
  }
}
