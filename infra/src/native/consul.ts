// Consul built once from the Go module proxy (wrapper module infra/consul) and run as a dev agent on loopback.
import { existsSync, mkdirSync, readFileSync, renameSync } from 'node:fs'
import { join } from 'node:path'
import { infraDir, type Layout } from '../layout.ts'
import { consulVersion } from '../probes.ts'
import { run, startDaemon } from '../processes.ts'
import { type NativeEngine, PidFile, which } from './engine.ts'

const HTTP_PORT = 8500
const DNS_PORT = 8600
export const nativeConsulAddr = `http://127.0.0.1:${HTTP_PORT}`

const wrapperDir = join(infraDir, 'consul')

/** The Consul version the wrapper module pins. */
export function pinnedConsulVersion(): string {
  const match = /github\.com\/hashicorp\/consul (v[\d.]+)/.exec(
    readFileSync(join(wrapperDir, 'go.mod'), 'utf8'),
  )
  if (!match?.[1])
    throw new Error(`consul: no version of github.com/hashicorp/consul required in ${wrapperDir}/go.mod`)
  return match[1]
}

/** The Consul binary built from infra/consul once per version into `home`/bin (the engine image copies it too). */
export async function consulBinary(home: string, progress: (m: string) => void): Promise<string> {
  const version = pinnedConsulVersion()
  const path = join(home, 'bin', `consul-${version}`)
  if (existsSync(path)) return path
  if (!which('go'))
    throw new Error('consul: the Go toolchain is needed once to build Consul; install Go 1.21+ and retry')
  progress(
    `building Consul ${version} from the Go module proxy into ${path}; first run only, takes several minutes`,
  )
  mkdirSync(join(home, 'bin'), { recursive: true })
  await run('go', ['build', '-v', '-trimpath', '-o', `${path}.partial`, 'github.com/hashicorp/consul'], {
    cwd: wrapperDir,
    // go.sum in infra/consul pins every module; nothing else is consulted
    env: { ...process.env, CGO_ENABLED: '0', GOFLAGS: '-mod=readonly', GOTOOLCHAIN: 'local' },
    showOutput: true,
  })
  renameSync(`${path}.partial`, path)
  return path
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
    probe: () => consulVersion(nativeConsulAddr),

    async start(progress) {
      const path = await consulBinary(home, progress)
      const pid = startDaemon({
        command: path,
        args: [
          'agent',
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
      })
      pidFile.write(pid)
      return pid
    },

    // SIGINT makes the agent leave gracefully
    stop: () => pidFile.stop('SIGINT', 20_000),
  }
}
