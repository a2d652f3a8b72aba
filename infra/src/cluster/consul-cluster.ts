// Three Consul servers, one on each cluster host, that elect a leader among themselves: services talk to their own
// host's agent, and the catalog is one across the hosts.
import { join } from 'node:path'
import { layoutFromEnv } from '../layout.ts'
import { consulBinary } from '../native/consul.ts'
import { waitFor } from '../processes.ts'
import { clusterStateDir, daemonEngine } from './daemon.ts'
import type { HostEngine } from './engine.ts'
import type { ClusterHost } from './hosts.ts'

const HTTP_PORT = 8500

export interface ConsulClusterOptions {
  prefix: string
  /** keep the servers' data from an earlier run with this prefix; default false (a new cluster) */
  keepData?: boolean
}

export interface ConsulCluster {
  /** one server agent per host, in the hosts' order */
  agents: HostEngine[]
  /** the HTTP address of a host's agent: what that host's services get as CONSUL_HTTP_ADDR */
  httpAddrOf(host: ClusterHost): string
  /** resolves once every agent that runs sees a leader and as many alive servers as there are hosts */
  waitForLeader(timeoutMs?: number): Promise<void>
  /** the host whose server leads now, as a running agent sees it */
  leader(): Promise<ClusterHost>
  /** the host that `host`'s agent sees leading; undefined while it sees none or does not answer */
  leaderSeenBy(host: ClusterHost): Promise<ClusterHost | undefined>
  /** stops every agent by its pid */
  close(): Promise<void>
}

interface Member {
  Name: string
  Addr: string
  /** serf's status: 1 alive, 2 leaving, 3 left, 4 failed */
  Status: number
}

const httpAddr = (host: ClusterHost) => `http://${host.address}:${HTTP_PORT}`

async function consulGet<T>(host: ClusterHost, path: string): Promise<T> {
  const response = await fetch(`${httpAddr(host)}${path}`, { signal: AbortSignal.timeout(3000) })
  if (!response.ok) throw new Error(`${host.name} consul: GET ${path} answered ${response.status}`)
  return (await response.json()) as T
}

/** What one agent sees: the leader's RPC address ('' while there is none) and the servers alive in its LAN pool. */
export async function consulView(host: ClusterHost): Promise<{ leader: string; alive: string[] }> {
  const [leader, members] = await Promise.all([
    consulGet<string>(host, '/v1/status/leader'),
    consulGet<Member[]>(host, '/v1/agent/members'),
  ])
  return { leader, alive: members.filter((member) => member.Status === 1).map((member) => member.Name) }
}

/**
 * Starts a Consul server on each host (`-bootstrap-expect` the number of hosts, `-retry-join` the others) and
 * resolves once every agent answers; `waitForLeader()` then waits for the election. Each agent listens on its host's
 * address and on the host's own 127.0.0.1, with the standard ports, and without ACLs like the development agent.
 */
export async function startConsulCluster(
  hosts: ClusterHost[],
  options: ConsulClusterOptions,
): Promise<ConsulCluster> {
  const binary = consulBinary(layoutFromEnv())
  const agents = hosts.map((host) => {
    const dir = clusterStateDir(options.prefix, host, 'consul', !options.keepData)
    return daemonEngine({
      name: 'consul',
      host,
      dir,
      logFile: join(dir, 'consul.log'),
      daemon: async () => ({
        command: binary,
        args: [
          'agent',
          '-server',
          `-bootstrap-expect=${hosts.length}`,
          `-node=${host.name}`,
          `-bind=${host.address}`,
          `-client=${host.address} 127.0.0.1`,
          ...hosts.filter((other) => other !== host).map((other) => `-retry-join=${other.address}`),
          '-retry-interval=1s',
          // HashiCorp's production setting (the default, 5, suits small development machines): a dead leader is
          // replaced after about a second's missed heartbeats instead of five, and PostgreSQL's failover waits on it
          // when the leader's host is the primary's (Patroni cannot take its lock while Consul has no leader)
          '-hcl=performance { raft_multiplier = 1 }',
          `-data-dir=${join(dir, 'data')}`,
          '-log-level=warn',
        ],
        cwd: dir,
      }),
      // the agent answers before there is a leader: the election is waitForLeader's
      ready: () => consulGet(host, '/v1/agent/self'),
      readyTimeoutMs: 30_000,
      // SIGTERM: a server shuts down without leaving, so that it stays a raft peer and rejoins on start
      stopSignal: 'SIGTERM',
      stopGraceMs: 15_000,
    })
  })
  const cluster: ConsulCluster = {
    agents,
    httpAddrOf: httpAddr,
    async waitForLeader(timeoutMs = 60_000) {
      await waitFor(
        `consul cluster ${options.prefix}`,
        async () => {
          for (const agent of agents) {
            if (agent.pid() === undefined) continue
            const view = await consulView(agent.host)
            if (view.leader === '') throw new Error(`${agent.host.name} sees no leader`)
            if (view.alive.length !== hosts.length)
              throw new Error(`${agent.host.name} sees ${view.alive.length} alive: ${view.alive.join(' ')}`)
          }
        },
        { timeoutMs, intervalMs: 250 },
      )
    },
    async leader() {
      const asking = agents.find((agent) => agent.pid() !== undefined)
      if (!asking) throw new Error(`consul cluster ${options.prefix}: no agent runs`)
      const host = await cluster.leaderSeenBy(asking.host)
      if (!host) throw new Error(`consul cluster ${options.prefix}: ${asking.host.name} sees no leader`)
      return host
    },
    async leaderSeenBy(host) {
      // the leader's RPC address, `<address>:8300`
      const leader = await consulGet<string>(host, '/v1/status/leader').catch(() => '')
      return hosts.find((each) => leader !== '' && leader.startsWith(`${each.address}:`))
    },
    async close() {
      await Promise.all(agents.map((agent) => agent.stop()))
    },
  }
  try {
    await Promise.all(agents.map((agent) => agent.start()))
  } catch (error) {
    await cluster.close()
    throw error
  }
  return cluster
}
