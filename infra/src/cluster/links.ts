// The links between cluster hosts through Toxiproxy, so that a fault can slow them down and lose packets: this
// machine's kernel has no netem qdisc (docs/explanation/scaling.md, "Network faults on one machine").
import { mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { infraDir, type Layout, layoutFromEnv } from '../layout.ts'
import { PidFile } from '../native/engine.ts'
import { builtGoBinary, type GoBuild, requiredVersion } from '../native/go-build.ts'
import { isAlive, startDaemon, waitFor } from '../processes.ts'
import type { ClusterHost, Hosts } from './hosts.ts'

/**
 * TCP ports the engines use between hosts: Consul RPC, serf LAN and WAN; Kafka broker and controller; PostgreSQL and
 * Patroni's API; Redis and its sentinels.
 */
export const clusterPorts = [8300, 8301, 8302, 9092, 9093, 5432, 8008, 6379, 26379]
/** Toxiproxy's API on the bridge address */
const API_PORT = 8474
/**
 * The proxies listen on the bridge address from here: host n's k-th port is FIRST_PROXY_PORT + 100·n + k. Below
 * Linux's ephemeral range (32768–60999): a connection from the machine to a host holds a port of that range on the
 * bridge address, which a proxy could not listen on then.
 */
const FIRST_PROXY_PORT = 29_000
/** the chain in each host's nat table that sends its connections to other hosts through their proxies */
const natChain = 'MERIDIAN-LINKS'
/** the chain in each host's filter table that loses packets (degradeLinks) and cuts links (partition) */
const filterChain = 'MERIDIAN-LINK-FAULTS'
const wrapperDir = join(infraDir, 'toxiproxy')
const toxiproxyModule = 'github.com/Shopify/toxiproxy/v2'

export interface LinksOptions {
  /** ports the services listen on that other hosts connect to (besides clusterPorts) */
  servicePorts?: number[]
  /**
   * ports of this machine's loopback the hosts reach (the machine's Mailpit for notification's SMTP): each through a
   * proxy on the bridge address (Links.machinePort), which no fault degrades or cuts
   */
  machinePorts?: number[]
}

export interface LinkFault {
  /** added to every packet's way in each direction: a round trip between two hosts takes twice this */
  latencyMs: number
  /** up to this much more or less, at random */
  jitterMs?: number
  /** share of packets dropped in each direction on every link, in percent (TCP retransmits them) */
  lossPercent?: number
}

export interface Links {
  /** Toxiproxy's API, on the bridge address */
  apiUrl: string
  /** the port on the bridge address where the hosts reach `port` of this machine's loopback (LinksOptions.machinePorts) */
  machinePort(port: number): number
  /** Toxiproxy's process, in the machine's namespace */
  pid(): number | undefined
  /** latency (Toxiproxy, both directions) and loss (a packet filter in each host) on every link between hosts */
  degradeLinks(fault: LinkFault): Promise<void>
  /** removes what degradeLinks added */
  restoreLinks(): Promise<void>
  /**
   * Cuts `host` off from the others: host.partition() and, since connections between hosts go through the proxies
   * (from the bridge address), a filter on the connections' original addresses in every host. Undone by heal().
   */
  partition(host: ClusterHost): Promise<void>
  heal(host: ClusterHost): Promise<void>
  /** stops Toxiproxy by its pid and removes the hosts' rules */
  close(): Promise<void>
}

const stateDir = (prefix: string) => {
  const dir = join(layoutFromEnv().componentDir('cluster'), prefix, 'toxiproxy')
  mkdirSync(dir, { recursive: true })
  return dir
}

/** Stops the Toxiproxy a run of the cluster `prefix` left (an interrupted one), by the pid in its pid file. */
export async function destroyLinks(prefix: string): Promise<void> {
  await new PidFile(stateDir(prefix)).stop('SIGTERM', 5_000)
}

/** How the Toxiproxy server is built from infra/toxiproxy, once per version, into the cache's toxiproxy/bin. */
export function toxiproxyBuild(layout: Layout): GoBuild {
  const version = requiredVersion(wrapperDir, toxiproxyModule)
  return {
    name: 'toxiproxy',
    title: `Toxiproxy ${version}`,
    version,
    wrapperDir,
    mainPackage: `${toxiproxyModule}/cmd/server`,
    toolchain: 'local',
    binDir: join(layout.componentDir('toxiproxy'), 'bin'),
  }
}

interface Proxy {
  name: string
  host: ClusterHost
  port: number
  listenPort: number
}

async function api(apiUrl: string, method: string, path: string, body?: unknown): Promise<void> {
  const response = await fetch(`${apiUrl}${path}`, {
    method,
    signal: AbortSignal.timeout(5_000),
    ...(body === undefined
      ? {}
      : { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }),
  })
  const text = await response.text()
  if (!response.ok) throw new Error(`toxiproxy ${method} ${path}: ${response.status} ${text.slice(0, 300)}`)
}

const iptables = (host: ClusterHost, args: string[]) =>
  host.run('iptables', ['-w', ...args], { timeoutMs: 10_000 })

/** A chain of ours, empty, jumped to from `from` in `table`. */
async function ownChain(host: ClusterHost, table: string, chain: string, from: string[]): Promise<void> {
  await iptables(host, ['-t', table, '-N', chain]).catch(() => {})
  await iptables(host, ['-t', table, '-F', chain])
  for (const builtIn of from)
    await iptables(host, ['-t', table, '-C', builtIn, '-j', chain]).catch(() =>
      iptables(host, ['-t', table, '-I', builtIn, '-j', chain]),
    )
}

/**
 * Starts Toxiproxy on the bridge address with a proxy for every host and port that other hosts use, and sends every
 * connection between hosts through it from the start (a DNAT rule per host and port in each host's nat table), with no
 * toxic: a fault only adds toxics, so connections made before it are slowed down too.
 */
export async function startLinks(hosts: Hosts, options: LinksOptions = {}): Promise<Links> {
  const ports = [...new Set([...clusterPorts, ...(options.servicePorts ?? [])])]
  if (ports.length > 99) throw new Error('links: at most 99 ports per host')
  await destroyLinks(hosts.prefix)
  const dir = stateDir(hosts.prefix)
  const pidFile = new PidFile(dir)
  const apiUrl = `http://${hosts.bridgeAddress}:${API_PORT}`
  const proxies: Proxy[] = hosts.hosts.flatMap((host, n) =>
    ports.map((port, k) => ({
      name: `${host.name}-${port}`,
      host,
      port,
      listenPort: FIRST_PROXY_PORT + 100 * (n + 1) + k,
    })),
  )
  // the hosts' proxies (a link's loss applies to them, not to the machine's own ports below)
  const proxyPorts = `${FIRST_PROXY_PORT + 100}:${FIRST_PROXY_PORT + 100 * (hosts.hosts.length + 1)}`
  // the machine's own ports, in the first hundred (the hosts' start at FIRST_PROXY_PORT + 100)
  const machinePorts = [...new Set(options.machinePorts ?? [])]
  if (machinePorts.length > 99) throw new Error('links: at most 99 machine ports')
  const machineProxies = machinePorts.map((port, k) => ({
    name: `machine-${port}`,
    listen: `${hosts.bridgeAddress}:${FIRST_PROXY_PORT + k}`,
    upstream: `127.0.0.1:${port}`,
    enabled: true,
  }))

  const pid = startDaemon({
    command: builtGoBinary(toxiproxyBuild(layoutFromEnv())),
    args: ['-host', hosts.bridgeAddress, '-port', String(API_PORT)],
    logFile: join(dir, 'toxiproxy.log'),
    cwd: dir,
    // its default level logs every connection's every step
    env: { ...process.env, LOG_LEVEL: 'warn' },
  })
  pidFile.write(pid)
  try {
    await waitFor('toxiproxy', () => api(apiUrl, 'GET', '/version'), {
      timeoutMs: 20_000,
      intervalMs: 100,
      alive: () => isAlive(pid),
    })
    await api(apiUrl, 'POST', '/populate', [
      ...proxies.map((proxy) => ({
        name: proxy.name,
        listen: `${hosts.bridgeAddress}:${proxy.listenPort}`,
        upstream: `${proxy.host.address}:${proxy.port}`,
        enabled: true,
      })),
      ...machineProxies,
    ])
    for (const host of hosts.hosts) {
      await ownChain(host, 'nat', natChain, ['OUTPUT'])
      for (const proxy of proxies.filter((each) => each.host !== host))
        await iptables(host, [
          '-t',
          'nat',
          '-A',
          natChain,
          '-p',
          'tcp',
          '-d',
          proxy.host.address,
          '--dport',
          String(proxy.port),
          '-j',
          'DNAT',
          '--to-destination',
          `${hosts.bridgeAddress}:${proxy.listenPort}`,
        ])
      await ownChain(host, 'filter', filterChain, ['INPUT', 'OUTPUT'])
    }
  } catch (error) {
    await pidFile.stop('SIGTERM', 5_000)
    throw error
  }

  /** the hosts whose connections to or from `host` are cut */
  const partitioned = new Set<ClusterHost>()
  let loss = 0

  /** The filter chain of every host: loss on its side of each link, and the cut links of partitioned hosts. */
  async function writeFilters(): Promise<void> {
    for (const host of hosts.hosts) {
      await iptables(host, ['-F', filterChain])
      if (loss > 0) {
        const probability = String(loss / 100)
        // the host's side of a link is its connection with a proxy: to the proxies' ports, and their answers
        for (const direction of [
          ['-d', hosts.bridgeAddress, '--dport', proxyPorts],
          ['-s', hosts.bridgeAddress, '--sport', proxyPorts],
        ])
          await iptables(host, [
            '-A',
            filterChain,
            '-p',
            'tcp',
            ...direction,
            '-m',
            'statistic',
            '--mode',
            'random',
            '--probability',
            probability,
            '-j',
            'DROP',
          ])
      }
      for (const cut of partitioned) {
        // a connection's original destination survives the DNAT in conntrack: the partitioned host's connections to
        // others are dropped in it, the others' connections to it in each of them (both directions of each)
        const targets = cut === host ? hosts.hosts.filter((other) => other !== host) : [cut]
        for (const target of targets)
          await iptables(host, [
            '-A',
            filterChain,
            '-m',
            'conntrack',
            '--ctorigdst',
            target.address,
            '-j',
            'DROP',
          ])
      }
    }
  }

  return {
    apiUrl,
    machinePort(port) {
      const k = machinePorts.indexOf(port)
      if (k < 0) throw new Error(`links: ${port} is not one of the machine's ports the hosts reach`)
      return FIRST_PROXY_PORT + k
    },
    pid: () => pidFile.live(),

    async degradeLinks(fault) {
      if (!(fault.latencyMs >= 0) || (fault.lossPercent ?? 0) < 0 || (fault.lossPercent ?? 0) > 100)
        throw new Error('links: latency ≥ 0 ms and loss between 0 and 100 %')
      await api(apiUrl, 'POST', '/reset')
      if (fault.latencyMs > 0)
        for (const proxy of proxies)
          for (const stream of ['upstream', 'downstream'])
            await api(apiUrl, 'POST', `/proxies/${proxy.name}/toxics`, {
              name: `latency-${stream}`,
              type: 'latency',
              stream,
              toxicity: 1,
              attributes: { latency: fault.latencyMs, jitter: fault.jitterMs ?? 0 },
            })
      loss = fault.lossPercent ?? 0
      await writeFilters()
    },

    async restoreLinks() {
      // every toxic removed (and every proxy enabled)
      await api(apiUrl, 'POST', '/reset')
      loss = 0
      await writeFilters()
    },

    async partition(host) {
      await host.partition()
      partitioned.add(host)
      await writeFilters()
    },

    async heal(host) {
      partitioned.delete(host)
      await writeFilters()
      await host.heal()
    },

    async close() {
      for (const host of hosts.hosts) {
        for (const [table, chain] of [
          ['nat', natChain],
          ['filter', filterChain],
        ] as const)
          await iptables(host, ['-t', table, '-F', chain]).catch(() => {})
      }
      await pidFile.stop('SIGTERM', 5_000)
    },
  }
}
