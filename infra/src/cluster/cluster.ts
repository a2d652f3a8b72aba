// A cluster on one machine (@meridian/infra/cluster): three hosts in network namespaces, each with a Consul server and
// a Kafka broker (KRaft, three controllers), PostgreSQL under Patroni on every host (a primary and two streaming
// standbys, one of which acknowledges each commit; failing over by themselves), Redis's primary on the first, its replica on the second and a
// sentinel on each, and every connection between hosts through Toxiproxy so a fault can slow it. What a run across hosts of the system (startSystem's
// `cluster`) is given, and what a fault campaign breaks.
import { rmSync } from 'node:fs'
import { join } from 'node:path'
import { layoutFromEnv } from '../layout.ts'
import { certificateAuthority } from '../secure/certificates.ts'
import { securePrincipals } from '../secure/machine.ts'
import type { SystemCluster, SystemHost } from '../system/system.ts'
import { type ConsulCluster, startConsulCluster } from './consul-cluster.ts'
import type { HostEngine } from './engine.ts'
import { type ClusterHost, createHosts, destroyHosts, type Hosts } from './hosts.ts'
import { type KafkaCluster, startKafkaCluster } from './kafka-cluster.ts'
import { destroyLinks, type Links, startLinks } from './links.ts'
import { type PostgresCluster, patroniConsulRules, startPostgresCluster } from './postgres-cluster.ts'
import { type ClusterRedis, startClusterRedis } from './redis.ts'

export interface ClusterOptions {
  /** names every namespace, the bridge and the state folder; default `mrdc` */
  prefix?: string
  /** the hosts' /24 in 198.18.0.0/15, as three octets; default 198.18.0 */
  subnet?: string
  /** the ports services listen on between hosts (Toxiproxy carries them too) */
  servicePorts?: number[]
  log?: (line: string) => void
  /**
   * Kafka over SASL_SSL with a SCRAM user per service, PostgreSQL over TLS only (verify-full) with a login role per
   * service, given its run's database, Redis over TLS only with an ACL user per service, and Consul with ACLs (a
   * token per service, one for Patroni), HTTPS, mutual TLS between servers and encrypted gossip; a CA made for the
   * cluster (its files in the state folder's `secure/`). Default false.
   */
  secure?: boolean
  /**
   * the SMTP server notification sends to, on this machine's loopback (`smtp://127.0.0.1:1025`, the machine's
   * Mailpit): the hosts reach it through a proxy on the bridge address, and Cluster.env's SMTP_URL says where
   */
  smtpUrl?: string
}

export interface Cluster {
  prefix: string
  hosts: ClusterHost[]
  /** the machine's address on the hosts' bridge */
  machineAddress: string
  consul: ConsulCluster
  kafka: KafkaCluster
  postgres: PostgresCluster
  redis: ClusterRedis
  links: Links
  /**
   * the engines' addresses for startSystem's baseEnv: DATABASE_URL (the primary, to create databases), ...; on a
   * secure cluster with the administrator's TLS and credentials (KAFKA_TLS, KAFKA_SASL_*)
   */
  env: Record<
    'DATABASE_URL' | 'KAFKA_BROKERS' | 'CONSUL_HTTP_ADDR' | 'REDIS_URL' | 'REDIS_SENTINELS' | 'REDIS_NAME',
    string
  > &
    Record<string, string>
  /** startSystem's `cluster`: the hosts with their Consul agents, the multi-host database URL */
  system: SystemCluster
  /** the engines of one host, in the order they start */
  enginesOf(host: ClusterHost): HostEngine[]
  /** starts the engines of a host again (after killAll); resolves once each answers */
  restartEngines(host: ClusterHost): Promise<void>
  /** stops everything: the hosts' processes, the namespaces, the bridge, Toxiproxy */
  destroy(): Promise<void>
}

/** Removes whatever a cluster with this prefix left (an interrupted run): Toxiproxy by its pid file, then the hosts. */
export async function destroyCluster(prefix = 'mrdc'): Promise<void> {
  await destroyLinks(prefix)
  await destroyHosts(prefix)
}

export async function startCluster(options: ClusterOptions = {}): Promise<Cluster> {
  const prefix = options.prefix ?? 'mrdc'
  const log = options.log ?? ((line: string) => process.stderr.write(`[cluster] ${line}\n`))
  const started = Date.now()
  await destroyCluster(prefix)
  const made: Hosts = await createHosts({ prefix, ...(options.subnet ? { subnet: options.subnet } : {}) })
  const { hosts } = made
  const [h1, h2] = hosts as [ClusterHost, ClusterHost, ClusterHost]
  let links: Links | undefined
  try {
    log(`hosts ${hosts.map((host) => `${host.name} ${host.address}`).join(', ')} on ${made.bridgeAddress}`)
    const smtp = options.smtpUrl ? machineSmtp(options.smtpUrl) : undefined
    links = await startLinks(made, {
      servicePorts: options.servicePorts ?? [],
      machinePorts: smtp ? [smtp.port] : [],
    })
    const smtpUrl = smtp ? smtp.through(made.bridgeAddress, links.machinePort(smtp.port)) : undefined
    const secureDir = join(layoutFromEnv().componentDir('cluster'), prefix, 'secure')
    rmSync(secureDir, { recursive: true, force: true })
    const ca = options.secure ? await certificateAuthority(join(secureDir, 'ca')) : undefined
    // each engine's principals: the services (read from services/ once)
    const principals = securePrincipals()
    const consul = await startConsulCluster(hosts, {
      prefix,
      ...(ca
        ? {
            secure: {
              ca,
              principals: principals.consul,
              roles: { patroni: patroniConsulRules },
              dir: join(secureDir, 'consul'),
            },
          }
        : {}),
    })
    await consul.waitForLeader()
    log(
      `consul: three servers, a leader${options.secure ? ' (ACLs with a token per service, HTTPS, RPC over mutual TLS, gossip encrypted)' : ''}`,
    )
    const kafka = await startKafkaCluster(hosts, {
      prefix,
      ...(ca
        ? {
            secure: {
              ca,
              principals: principals.kafka,
              dir: join(secureDir, 'kafka'),
            },
          }
        : {}),
    })
    await kafka.waitHealthy()
    log(
      `kafka: three brokers (${kafka.brokers}${options.secure ? ', SASL_SSL with a SCRAM user per service' : ''})`,
    )
    const postgres = await startPostgresCluster(hosts, {
      prefix,
      progress: log,
      ...(ca
        ? { tls: ca, roles: { principals: principals.postgres, dir: join(secureDir, 'postgres') } }
        : {}),
      consulOf: (host) => consul.settingsFor('patroni', host),
    })
    log(`postgres: Patroni on every host, primary on ${(await postgres.waitPrimary()).name}`)
    const redis = await startClusterRedis(
      { primary: h1, replica: h2, sentinels: hosts },
      {
        prefix,
        ...(ca ? { secure: { ca, principals: principals.redis, dir: join(secureDir, 'redis') } } : {}),
      },
    )
    log(
      `redis: primary on ${h1.name}, replica on ${h2.name}, a sentinel on each host${options.secure ? ' (TLS only, an ACL user per service)' : ''}`,
    )
    log(
      `cluster up in ${((Date.now() - started) / 1000).toFixed(0)} s (state in ${join(layoutFromEnv().componentDir('cluster'), prefix)})`,
    )

    const enginesOf = (host: ClusterHost): HostEngine[] =>
      [...consul.agents, ...kafka.nodes, ...postgres.nodes, ...redis.engines].filter(
        (engine) => engine.host === host,
      )
    const systemHosts: SystemHost[] = hosts.map((host) => ({
      name: host.name,
      address: host.address,
      consulAddr: consul.httpAddrOf(host),
      startDaemon: (daemon) => host.startDaemon(daemon),
    }))
    const runningLinks = links
    return {
      prefix,
      hosts,
      machineAddress: made.bridgeAddress,
      consul,
      kafka,
      postgres,
      redis,
      links: runningLinks,
      env: {
        // the multi-host URL: whichever server is the primary (the run's databases are dropped after a failover too)
        DATABASE_URL: postgres.url('postgres'),
        KAFKA_BROKERS: kafka.brokers,
        // on a secure cluster the administrator's TLS and SCRAM user (KAFKA_TLS, KAFKA_TLS_CA, KAFKA_SASL_*)
        ...kafka.adminEnv(),
        // on a secure cluster the management token and the CA (CONSUL_HTTP_TOKEN, CONSUL_CACERT)
        ...consul.adminEnv(h1),
        // the services find the primary through the sentinels (REDIS_URL: the primary at the start, for scripts; on
        // a secure cluster rediss:// as the administrator, and REDIS_TLS_CA)
        REDIS_URL: redis.url,
        ...redis.adminEnv(),
        REDIS_SENTINELS: redis.sentinels,
        REDIS_NAME: redis.name,
        ...(smtpUrl ? { SMTP_URL: smtpUrl } : {}),
      },
      system: {
        hosts: systemHosts,
        machineAddress: made.bridgeAddress,
        databaseUrl: (name) => postgres.url(name),
        // on a secure cluster each service's own SCRAM user, and its role (its database is given to it)
        ...(options.secure
          ? {
              serviceEnv: (service: string) => ({
                ...kafka.envFor(service),
                // its token and the CA; the address is its own host's agent's (SystemHost.consulAddr)
                ...consul.envFor(service),
                ...(principals.redis.includes(service) ? redis.envFor(service) : {}),
                ...(principals.postgres.includes(service)
                  ? { DATABASE_URL: postgres.roleUrl(service, 'postgres') }
                  : {}),
              }),
            }
          : {}),
      },
      enginesOf,
      async restartEngines(host) {
        for (const engine of enginesOf(host)) if (engine.pid() === undefined) await engine.start()
      },
      async destroy() {
        await runningLinks.close().catch(() => {})
        await postgres.close().catch(() => {})
        await made.destroy()
      },
    }
  } catch (error) {
    await links?.close().catch(() => {})
    await made.destroy()
    throw error
  }
}

/**
 * An SMTP URL of this machine's loopback, and the same URL with the host and port where the cluster's hosts reach it
 * (a proxy on the bridge address). Anything but a loopback address is refused: a host reaches no other of the
 * machine's addresses.
 */
function machineSmtp(url: string): { port: number; through(address: string, port: number): string } {
  const parsed = new URL(url)
  if (!/^smtps?:$/.test(parsed.protocol) || !['127.0.0.1', 'localhost'].includes(parsed.hostname))
    throw new Error(
      `cluster: smtpUrl must be smtp:// on this machine's loopback (got ${parsed.protocol}//${parsed.host})`,
    )
  const port = Number(parsed.port || (parsed.protocol === 'smtps:' ? 465 : 25))
  return {
    port,
    through(address, proxyPort) {
      const reached = new URL(url)
      reached.hostname = address
      reached.port = String(proxyPort)
      return reached.toString()
    },
  }
}
