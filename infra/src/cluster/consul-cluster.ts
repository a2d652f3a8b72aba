// Three Consul servers, one on each cluster host, that elect a leader among themselves: services talk to their own
// host's agent, and the catalog is one across the hosts. Secure (issue 45): ACLs on with default deny (one management
// token shared by the servers, an agent token per node, a token per service with only its own service and key
// prefix, and tokens for further roles such as Patroni's), HTTPS only on the API, the servers' RPC over mutual TLS
// with their names checked, gossip encrypted.
import { randomBytes, randomUUID } from 'node:crypto'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { type ConsulSettings, consulCall, consulEnvOf } from '../consul-http.ts'
import { layoutFromEnv } from '../layout.ts'
import { consulBinary } from '../native/consul.ts'
import { waitFor } from '../processes.ts'
import type { CertificateAuthority } from '../secure/certificates.ts'
import {
  consulAgentRules,
  consulHardening,
  consulHttpsAddress,
  consulServiceRules,
  consulToken,
  provisionConsulToken,
  type TokenCredential,
} from '../secure/consul.ts'
import { assertPrincipals, instanceSecrets } from '../secure/engine.ts'
import { clusterStateDir, daemonEngine } from './daemon.ts'
import type { HostEngine } from './engine.ts'
import type { ClusterHost } from './hosts.ts'

const HTTP_PORT = 8500
const HTTPS_PORT = 8501

export interface ConsulClusterOptions {
  prefix: string
  /** keep the servers' data from an earlier run with this prefix; default false (a new cluster) */
  keepData?: boolean
  /**
   * ACLs (default deny), HTTPS, RPC over mutual TLS and encrypted gossip, with certificates of `ca`: a token per
   * principal (a service: consulServiceRules) and per further role (its name and its own rules, e.g. Patroni's), the
   * secrets kept in `dir`. Default: plaintext without ACLs, like the development agent.
   */
  secure?: {
    ca: CertificateAuthority
    principals: readonly string[]
    /** further tokens: a name (not a principal's) and its ACL rules (HCL) */
    roles?: Readonly<Record<string, string>>
    dir: string
  }
}

export interface ConsulCluster {
  /** one server agent per host, in the hosts' order */
  agents: HostEngine[]
  /**
   * the HTTP address of a host's agent: what that host's services get as CONSUL_HTTP_ADDR (`https://<host>:8501`
   * on a secure cluster, `http://<host>:8500` otherwise)
   */
  httpAddrOf(host: ClusterHost): string
  /** how the administrator reaches a host's agent (the management token and the CA on a secure cluster) */
  adminOf(host: ClusterHost): ConsulSettings
  /** what one agent sees: the leader's RPC address ('' while there is none) and the servers alive in its LAN pool */
  view(host: ClusterHost): Promise<{ leader: string; alive: string[] }>
  /**
   * a principal's or a role's token and the CA (CONSUL_HTTP_TOKEN, CONSUL_CACERT; no address: each host's services
   * use their own host's agent); nothing on a plaintext cluster
   */
  envFor(name: string): Record<string, string>
  /** how a principal or a role reaches a host's agent: its address, and its token and the CA when secure */
  settingsFor(name: string, host: ClusterHost): ConsulSettings
  /** the administrator's variables for a host's agent: CONSUL_HTTP_ADDR, and the management token and CA when secure */
  adminEnv(host: ClusterHost): { CONSUL_HTTP_ADDR: string } & Record<string, string>
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

interface ClusterCredentials {
  /** `encrypt`: 32 random bytes, base64 */
  gossipKey: string
  /** `acl.tokens.initial_management` of every server */
  managementToken: string
  /** each node's agent token, by host name */
  agents: Record<string, TokenCredential>
  /** each principal's and role's token, by name */
  tokens: Record<string, TokenCredential>
}

/** The secure cluster's secrets, made once per folder (credentials.json, 0600). */
function clusterCredentials(
  dir: string,
  hosts: readonly ClusterHost[],
  names: readonly string[],
): ClusterCredentials {
  return instanceSecrets<ClusterCredentials>(dir, (stored) => ({
    gossipKey: stored.gossipKey ?? randomBytes(32).toString('base64'),
    managementToken: stored.managementToken ?? randomUUID(),
    agents: Object.fromEntries(hosts.map((host) => [host.name, stored.agents?.[host.name] ?? consulToken()])),
    tokens: Object.fromEntries(names.map((name) => [name, stored.tokens?.[name] ?? consulToken()])),
  }))
}

/** The name every server's certificate holds when servers check each other (`verify_server_hostname`). */
const serverName = 'server.dc1.consul'

/** A secure server's configuration (JSON): what the plaintext one's flags say, and ACLs, TLS and the gossip key. */
function secureServerConfig(
  host: ClusterHost,
  hosts: readonly ClusterHost[],
  dir: string,
  credentials: ClusterCredentials,
  tls: { caFile: string; certFile: string; keyFile: string },
) {
  const agent = credentials.agents[host.name]
  if (!agent) throw new Error(`consul cluster: no agent token for ${host.name}`)
  return {
    node_name: host.name,
    datacenter: 'dc1',
    server: true,
    bootstrap_expect: hosts.length,
    bind_addr: host.address,
    advertise_addr: host.address,
    client_addr: `${host.address} 127.0.0.1`,
    retry_join: hosts.filter((other) => other !== host).map((other) => other.address),
    retry_interval: '1s',
    data_dir: join(dir, 'data'),
    // the API on HTTPS only; no DNS interface (nothing of Meridian asks it)
    ports: { http: -1, https: HTTPS_PORT, dns: -1, grpc: -1 },
    // the agent token is made by the provisioning once there is a leader; until then the agent's syncs are refused
    ...consulHardening(credentials.gossipKey, {
      initial_management: credentials.managementToken,
      agent: agent.secret,
    }),
    tls: {
      defaults: {
        ca_file: tls.caFile,
        cert_file: tls.certFile,
        key_file: tls.keyFile,
        verify_outgoing: true,
      },
      // servers connect to each other (raft, forwarded calls) only with a certificate of the CA naming a server
      internal_rpc: { verify_incoming: true, verify_server_hostname: true },
      // HTTPS clients are authenticated by their token, not by a certificate (as the single secure agent)
      https: { verify_incoming: false },
    },
    performance: { raft_multiplier: 1 },
    disable_update_check: true,
    log_level: 'warn',
  }
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
  const { secure } = options
  // every token's name and its rules: each service's, then the further roles'
  const tokenRules: [string, string][] = secure
    ? [
        ...secure.principals.map((principal): [string, string] => [principal, consulServiceRules(principal)]),
        ...Object.entries(secure.roles ?? {}),
      ]
    : []
  if (secure) assertPrincipals(tokenRules.map(([name]) => name))
  const credentials = secure
    ? clusterCredentials(
        secure.dir,
        hosts,
        tokenRules.map(([name]) => name),
      )
    : undefined
  // one certificate naming every host and the servers' common name
  const tls =
    secure &&
    (await secure.ca.server('consul-cluster', [
      ...hosts.map((host) => host.address),
      serverName,
      'localhost',
      '127.0.0.1',
    ]))
  const httpAddr = (host: ClusterHost) =>
    secure ? consulHttpsAddress(host.address, HTTPS_PORT) : `http://${host.address}:${HTTP_PORT}`
  const adminOf = (host: ClusterHost): ConsulSettings =>
    secure && credentials
      ? { address: httpAddr(host), token: credentials.managementToken, caFile: secure.ca.caFile }
      : { address: httpAddr(host) }
  const consulGet = async <T>(host: ClusterHost, path: string): Promise<T> =>
    JSON.parse(await consulCall(adminOf(host), 'GET', path, { timeoutMs: 3000 })) as T
  const view = async (host: ClusterHost) => {
    const [leader, members] = await Promise.all([
      consulGet<string>(host, '/v1/status/leader'),
      consulGet<Member[]>(host, '/v1/agent/members'),
    ])
    return { leader, alive: members.filter((member) => member.Status === 1).map((member) => member.Name) }
  }
  /** a principal's or role's token and the CA; nothing on a plaintext cluster */
  const tokenOf = (name: string): { token?: string; caFile?: string } => {
    if (!secure || !credentials) return {}
    const token = credentials.tokens[name]
    if (!token)
      throw new Error(
        `consul cluster: '${name}' has no token (${Object.keys(credentials.tokens).join(', ')})`,
      )
    return { token: token.secret, caFile: secure.ca.caFile }
  }
  const agents = hosts.map((host) => {
    const dir = clusterStateDir(options.prefix, host, 'consul', !options.keepData)
    return daemonEngine({
      name: 'consul',
      host,
      dir,
      logFile: join(dir, 'consul.log'),
      daemon: async () => {
        if (secure && credentials && tls) {
          const configFile = join(dir, 'consul.json')
          const config = secureServerConfig(host, hosts, dir, credentials, {
            caFile: secure.ca.caFile,
            ...tls,
          })
          writeFileSync(configFile, `${JSON.stringify(config, null, 2)}\n`, { mode: 0o600 })
          return { command: binary, args: ['agent', `-config-file=${configFile}`], cwd: dir }
        }
        return {
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
        }
      },
      // the agent answers before there is a leader (the status endpoints need no token, which a secure server can
      // only check once it has one): the election is waitForLeader's
      ready: () => consulGet(host, '/v1/status/leader'),
      readyTimeoutMs: 30_000,
      // SIGTERM: a server shuts down without leaving, so that it stays a raft peer and rejoins on start
      stopSignal: 'SIGTERM',
      stopGraceMs: 15_000,
    })
  })
  const cluster: ConsulCluster = {
    agents,
    httpAddrOf: httpAddr,
    adminOf,
    view,
    envFor(name): Record<string, string> {
      const { token, caFile } = tokenOf(name)
      return token && caFile ? { CONSUL_HTTP_TOKEN: token, CONSUL_CACERT: caFile } : {}
    },
    settingsFor: (name, host) => ({ address: httpAddr(host), ...tokenOf(name) }),
    adminEnv: (host) => ({ ...consulEnvOf(adminOf(host)), CONSUL_HTTP_ADDR: httpAddr(host) }),
    async waitForLeader(timeoutMs = 60_000) {
      await waitFor(
        `consul cluster ${options.prefix}`,
        async () => {
          for (const agent of agents) {
            if (agent.pid() === undefined) continue
            const seen = await view(agent.host)
            if (seen.leader === '') throw new Error(`${agent.host.name} sees no leader`)
            if (seen.alive.length !== hosts.length)
              throw new Error(`${agent.host.name} sees ${seen.alive.length} alive: ${seen.alive.join(' ')}`)
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
    if (secure && credentials) {
      // ACL writes need a leader; the tokens are the ones the servers' configuration names
      await cluster.waitForLeader()
      const [first] = hosts as [ClusterHost]
      const admin = adminOf(first)
      for (const host of hosts) {
        const agent = credentials.agents[host.name] as TokenCredential
        await provisionConsulToken(admin, `agent-${host.name}`, consulAgentRules(host.name), agent)
      }
      for (const [name, rules] of tokenRules)
        await provisionConsulToken(admin, `token-${name}`, rules, credentials.tokens[name] as TokenCredential)
    }
  } catch (error) {
    await cluster.close()
    throw error
  }
  return cluster
}
