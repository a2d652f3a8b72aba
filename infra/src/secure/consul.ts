// One Consul agent as production runs it, natively: a single server (its own raft, data in the instance's folder) with
// ACLs on (default deny, a bootstrap token, tokens persisted), TLS on the HTTP API only (no plain HTTP port), gossip
// encrypted, DNS off; then a policy and a token per service, which may register only itself, read its own runtime
// settings and discover the others. For `scripts/infra up --secure`, the secure cluster and the tests of the kit's
// Consul client against ACLs and TLS.
import { randomBytes, randomUUID } from 'node:crypto'
import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { type ConsulSettings, consulCall, consulEnvOf, consulRequest } from '../consul-http.ts'
import { type Layout, layoutFromEnv } from '../layout.ts'
import { consulStop, startConsulAgent } from '../native/consul.ts'
import { PidFile } from '../native/engine.ts'
import { consulVersion } from '../probes.ts'
import { assertPortsFree, isAlive, stopPid, waitFor } from '../processes.ts'
import {
  assertPrincipals,
  instanceSecrets,
  type SecureEngineAccess,
  type SecureEngineInstance,
  type SecureEngineOptions,
  serverHosts,
} from './engine.ts'

export interface SecureConsulPorts {
  /** the HTTP API, TLS only (Consul's plain HTTP port is off) */
  https: number
  /** gossip (Serf LAN), encrypted with the instance's key */
  serfLan: number
  /** server RPC (raft, and other agents' forwarding) */
  server: number
  /** Consul's gRPC API on TLS (`grpc_tls`: Envoy and Consul Dataplane); off when unset, as Meridian needs none */
  grpc?: number
}

export interface SecureConsulOptions extends SecureEngineOptions<SecureConsulPorts> {
  /** where the Consul binary is; default the layout of the environment (MERIDIAN_CACHE_DIR) */
  layout?: Layout
  /** how long the agent may take to elect itself and bootstrap its ACLs; default 60 s */
  startTimeoutMs?: number
}

export interface SecureConsulInstance extends SecureEngineInstance {
  /** `https://host:port` */
  readonly address: string
  /** the name of the agent's node (its token may write it) */
  readonly node: string
  /** the instance's gossip key: what another agent needs to join it (`encrypt`) */
  gossipKey(): string
}

/** A Consul token as it is made: its accessor (its public id) and its secret (what a client sends). */
export interface TokenCredential {
  accessor: string
  secret: string
}

interface ConsulCredentials {
  /** `encrypt`: 32 random bytes, base64 (standard, as Consul reads it) */
  gossipKey: string
  /** `acl.tokens.initial_management`: the bootstrap token, every permission */
  managementToken: string
  /** the agent's own token (its node's catalogue entry) */
  agent: TokenCredential
  /** each service's token, by service name */
  principals: Record<string, TokenCredential>
}

/**
 * A Consul token: Consul requires the secret and the accessor of a token it is handed to be UUIDs, so they are random
 * UUIDs (122 random bits from the system's CSPRNG), not base64url strings like the other engines' secrets.
 */
export const consulToken = (): TokenCredential => ({ accessor: randomUUID(), secret: randomUUID() })

/** The agent's node name. */
const nodeName = 'meridian-secure'

/** The services that write every service's runtime settings: the gateway's maintenance switch (admin-services). */
const runtimeSettingsWriters: ReadonlySet<string> = new Set(['gateway'])

/**
 * The ACL rules of a service's token (HCL), the one source for the agent's policies, the tests and
 * docs/how-to/deploying.md:
 * - `service "<name>"` and `service_prefix "<name>-"` write: it registers, heartbeats and deregisters itself under its
 *   own name and the run-namespaced `<name>-<run>` (the end-to-end runner's), never another service (a plain
 *   `service_prefix "<name>"` would also let `auth` write `authority`);
 * - `service_prefix ""` and `node_prefix ""` read: discovery of every other service's healthy instances (health
 *   answers filter out entries whose node the token cannot read);
 * - `key_prefix "meridian/<name>/"` and `"meridian/<name>-"` read: its runtime settings (maintenance, log level),
 *   followed, never written; the gateway writes everyone's (`key_prefix "meridian/"` write), as its maintenance switch
 *   does. No session rule: nothing of Meridian takes Consul sessions or locks (the outbox relay's leadership is
 *   PostgreSQL's).
 */
export function consulServiceRules(service: string): string {
  assertPrincipals([service])
  const rules = [
    `service "${service}" { policy = "write" }`,
    `service_prefix "${service}-" { policy = "write" }`,
    'service_prefix "" { policy = "read" }',
    'node_prefix "" { policy = "read" }',
    `key_prefix "meridian/${service}/" { policy = "read" }`,
    `key_prefix "meridian/${service}-" { policy = "read" }`,
  ]
  if (runtimeSettingsWriters.has(service)) rules.push('key_prefix "meridian/" { policy = "write" }')
  return `${rules.join('\n')}\n`
}

/** An agent token's rules: its own node's catalogue entry, and reading the services it keeps in sync. */
export const consulAgentRules = (node: string): string =>
  `node "${node}" { policy = "write" }\nservice_prefix "" { policy = "read" }\n`

/**
 * What every secure agent's configuration holds, the single agent's and the cluster's servers': gossip encrypted with
 * `gossipKey` (both ways verified), ACLs on with default deny (a server that cannot reach the leader goes on with the
 * tokens it knows), and these tokens (`initial_management`, `agent`); `persistTokens`: tokens set through the API
 * survive a restart.
 */
export function consulHardening(gossipKey: string, tokens: Record<string, string>, persistTokens = false) {
  return {
    encrypt: gossipKey,
    encrypt_verify_incoming: true,
    encrypt_verify_outgoing: true,
    acl: {
      enabled: true,
      default_policy: 'deny',
      down_policy: 'extend-cache',
      ...(persistTokens ? { enable_token_persistence: true } : {}),
      tokens,
    },
  }
}

/** The agent's configuration (JSON, as `-config-file` reads a `.json` file). */
function agentConfig(options: SecureConsulOptions, credentials: ConsulCredentials, tls: TlsFiles) {
  const { host, ports } = options
  return {
    node_name: nodeName,
    datacenter: 'dc1',
    server: true,
    bootstrap_expect: 1,
    data_dir: join(options.dir, 'data'),
    bind_addr: host,
    advertise_addr: host,
    client_addr: host,
    ports: {
      http: -1,
      https: ports.https,
      dns: -1,
      serf_lan: ports.serfLan,
      serf_wan: -1,
      server: ports.server,
      grpc: -1,
      grpc_tls: ports.grpc ?? -1,
    },
    // the agent token set through the API (provision) survives a restart of the agent
    ...consulHardening(credentials.gossipKey, { initial_management: credentials.managementToken }, true),
    tls: {
      // HTTPS and gRPC: a client checks the agent against the CA; the agent does not ask clients for certificates
      // (verify_incoming false): every call carries a token, which is what authenticates and authorizes a service,
      // so a client certificate per service would add files to distribute and rotate without adding a check. Server
      // RPC stays without TLS: a single server has no peer, and gossip is encrypted with the key.
      https: { ca_file: tls.caFile, cert_file: tls.certFile, key_file: tls.keyFile, verify_incoming: false },
      ...(ports.grpc
        ? {
            grpc: {
              ca_file: tls.caFile,
              cert_file: tls.certFile,
              key_file: tls.keyFile,
              verify_incoming: false,
            },
          }
        : {}),
    },
    performance: { raft_multiplier: 1 },
    disable_update_check: true,
    log_level: 'warn',
  }
}

interface TlsFiles {
  caFile: string
  certFile: string
  keyFile: string
}

/** Creates or updates a policy of this name with these rules; its id. */
async function upsertPolicy(admin: ConsulSettings, name: string, rules: string): Promise<string> {
  const existing = await consulRequest(admin, 'GET', `/v1/acl/policy/name/${encodeURIComponent(name)}`)
  const body = { Name: name, Description: `Meridian: ${name}`, Rules: rules }
  if (existing.status === 200) {
    const { ID } = JSON.parse(existing.text) as { ID: string }
    await consulCall(admin, 'PUT', `/v1/acl/policy/${ID}`, { body })
    return ID
  }
  const created = JSON.parse(await consulCall(admin, 'PUT', '/v1/acl/policy', { body })) as { ID: string }
  return created.ID
}

/** Creates the token with this accessor and secret (or updates it when there), with this one policy. */
async function upsertToken(
  admin: ConsulSettings,
  credential: TokenCredential,
  description: string,
  policyId: string,
): Promise<void> {
  const existing = await consulRequest(admin, 'GET', `/v1/acl/token/${credential.accessor}`)
  const body = {
    AccessorID: credential.accessor,
    SecretID: credential.secret,
    Description: description,
    Policies: [{ ID: policyId }],
  }
  if (existing.status === 200)
    await consulCall(admin, 'PUT', `/v1/acl/token/${credential.accessor}`, { body })
  else await consulCall(admin, 'PUT', '/v1/acl/token', { body })
}

/**
 * Makes (or brings up to date) a policy named `meridian-<name>` with these rules and the token `credential` holding
 * it, as the management token `admin` carries: what the single agent and the cluster's servers provision.
 */
export async function provisionConsulToken(
  admin: ConsulSettings,
  name: string,
  rules: string,
  credential: TokenCredential,
): Promise<void> {
  const policy = await upsertPolicy(admin, `meridian-${name}`, rules)
  await upsertToken(admin, credential, `Meridian: ${name}`, policy)
}

/** The agent's token, then a policy and a token per principal, all with the management token. */
async function provision(
  admin: ConsulSettings,
  credentials: ConsulCredentials,
  principals: readonly string[],
): Promise<void> {
  await provisionConsulToken(admin, 'agent', consulAgentRules(nodeName), credentials.agent)
  await consulCall(admin, 'PUT', '/v1/agent/token/agent', { body: { Token: credentials.agent.secret } })
  for (const principal of principals) {
    const credential = credentials.principals[principal]
    if (!credential) throw new Error(`no Consul token was made for ${principal}`)
    await provisionConsulToken(admin, `service-${principal}`, consulServiceRules(principal), credential)
  }
}

/** `https://host:port`, an IPv6 address in brackets. */
export const consulHttpsAddress = (host: string, port: number): string =>
  `https://${host.includes(':') ? `[${host}]` : host}:${port}`

/**
 * Starts the agent in `options.dir` and provisions it: resolves once it has a leader, its ACLs are bootstrapped, its
 * node is in the catalogue under its own token and every principal's token exists. The credentials are made once per
 * folder (credentials.json, 0600); a second start in the same folder (its raft data kept) finds them and updates the
 * policies to the current rules.
 */
export async function startSecureConsul(options: SecureConsulOptions): Promise<SecureConsulInstance> {
  const { dir, host, ports, principals } = options
  assertPrincipals(principals)
  mkdirSync(join(dir, 'data'), { recursive: true, mode: 0o700 })
  const pidFile = new PidFile(dir)
  const running = pidFile.live()
  if (running) throw new Error(`a secure Consul of ${dir} still runs (pid ${running}): stop it first`)
  const portList = [ports.https, ports.serfLan, ports.server, ...(ports.grpc ? [ports.grpc] : [])]
  assertPortsFree('consul', portList)

  const credentials = consulCredentials(dir, principals)
  const certificate = await options.ca.server(
    'consul',
    serverHosts({ host, serverNames: ['localhost', ...(options.serverNames ?? [])] }),
  )
  const tls: TlsFiles = { caFile: options.ca.caFile, ...certificate }
  const configFile = join(dir, 'consul.json')
  writeFileSync(configFile, `${JSON.stringify(agentConfig(options, credentials, tls), null, 2)}\n`, {
    mode: 0o600,
  })

  const logFile = join(dir, 'consul.log')
  const layout = options.layout ?? layoutFromEnv()
  const pid = startConsulAgent(layout, { args: [`-config-file=${configFile}`], logFile, cwd: dir, pidFile })
  const address = consulHttpsAddress(host, ports.https)
  const admin: ConsulSettings = { address, token: credentials.managementToken, caFile: tls.caFile }
  const stop = async () => {
    pidFile.clear()
    await stopPid(pid, consulStop.signal, consulStop.graceMs)
  }
  try {
    const startTimeoutMs = options.startTimeoutMs ?? 60_000
    const alive = () => isAlive(pid)
    // a leader, and the management token known: the ACL bootstrap is done
    await waitFor('secure consul', () => consulVersion(admin), { timeoutMs: startTimeoutMs, alive })
    await provision(admin, credentials, principals)
    // the node in the catalogue (written with the agent's token): services registered from now on are found at once
    await waitFor(
      'secure consul: its node in the catalogue',
      async () => {
        const node = await consulCall(admin, 'GET', `/v1/catalog/node/${nodeName}`)
        if (node.trim() === 'null') throw new Error('not yet')
      },
      { timeoutMs: startTimeoutMs, alive },
    )
  } catch (error) {
    await stop()
    throw error
  }

  const access = secureConsulAccess(options)
  return {
    pid,
    logFile,
    address,
    node: nodeName,
    gossipKey: () => credentials.gossipKey,
    envFor: access.envFor,
    adminEnv: access.adminEnv,
    stop,
  }
}

/** The agent's secrets, made once per folder (credentials.json, 0600); a principal added later gets its own token. */
function consulCredentials(dir: string, principals: readonly string[]): ConsulCredentials {
  return instanceSecrets<ConsulCredentials>(dir, (stored) => ({
    gossipKey: stored.gossipKey ?? randomBytes(32).toString('base64'),
    managementToken: stored.managementToken ?? randomUUID(),
    agent: stored.agent ?? consulToken(),
    principals: Object.fromEntries(
      [...new Set([...Object.keys(stored.principals ?? {}), ...principals])].map((name) => [
        name,
        stored.principals?.[name] ?? consulToken(),
      ]),
    ),
  }))
}

/**
 * The tokens (made on first use, kept in the folder's credentials.json) and the variables they give: the HTTPS
 * address, a principal's token or the management token, the CA.
 */
export function secureConsulAccess(options: SecureEngineOptions<SecureConsulPorts>): SecureEngineAccess {
  const { dir, host, ports, principals } = options
  assertPrincipals(principals)
  const credentials = consulCredentials(dir, principals)
  const address = consulHttpsAddress(host, ports.https)
  const envOf = (secret: string) => consulEnvOf({ address, token: secret, caFile: options.ca.caFile })
  return {
    envFor(principal) {
      const credential = principals.includes(principal) ? credentials.principals[principal] : undefined
      if (!credential)
        throw new Error(`'${principal}' is not a principal of this Consul (${principals.join(', ')})`)
      return envOf(credential.secret)
    },
    adminEnv: () => envOf(credentials.managementToken),
  }
}
