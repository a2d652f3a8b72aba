// Three Kafka nodes in KRaft combined mode, one on each cluster host: every node a broker and a controller, topics
// with three copies of which two must hold a write, and no election of a replica that fell behind. In plaintext, or
// secure as `scripts/infra up --secure` runs its one node (secure/kafka.ts): clients on SASL_SSL (SCRAM-SHA-512, a
// user per service), the brokers to each other as the administrator, the controllers to each other over mutual TLS.
import { existsSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { type KafkaSecurity, kafkaSecurityFromEnv } from '@meridian/kafka-connection'
import { layoutFromEnv } from '../layout.ts'
import {
  kafkaBrokerPort,
  kafkaClassPath,
  kafkaControllerPort,
  kafkaFormatArgs,
  kafkaLog4jProperties,
  kafkaServerArgs,
  kafkaServerProperties,
  lightJvm,
  newKafkaClusterId,
  offsetsTopic,
} from '../native/kafka.ts'
import { kafkaClient } from '../probes.ts'
import { run, waitFor } from '../processes.ts'
import type { CertificateAuthority } from '../secure/certificates.ts'
import {
  kafkaServerCertificateName,
  type SecureKafkaPorts,
  scramAccess,
  scramFormatArgs,
  secureKafkaListeners,
} from '../secure/kafka.ts'
import { clusterStateDir, daemonEngine } from './daemon.ts'
import type { HostEngine } from './engine.ts'
import { groupsCoordinated } from './group-coordination.ts'
import type { ClusterHost } from './hosts.ts'

/** Copies of each partition, and how many of them must be in sync for an acks=all write (docs/how-to/scaling-out.md). */
export const clusterReplication = Object.freeze({ replicationFactor: 3, minInsyncReplicas: 2 })

/**
 * How soon the controllers fence a broker that stopped sending heartbeats, and so move its partitions' leaders: 9 s
 * and 2 s are Kafka's defaults, during which every partition the dead broker led takes no write (a broker-kill of the
 * short campaign held every order for 17 s with them). 3 s with a heartbeat every 500 ms fences sooner at the price of
 * fencing a broker that is paused for 3 s (a long GC, a starved host), which then registers again.
 */
const clusterFailureDetection = 'broker.session.timeout.ms=3000\nbroker.heartbeat.interval.ms=500\n'

/**
 * Three JVMs share two cores with everything else, each for a few minutes at a few orders a second: a small heap and
 * the light JVM of every node of ours (native/kafka.ts). Measured on one broker started alone (2026-11-30): CPU until
 * started 7.9 -> 4.7 s, then 2.8 -> 1.8 s a minute idle, against G1 with the default compilers.
 */
const clusterJvm = ['-Xms128m', '-Xmx512m', ...lightJvm]

/**
 * A node's logging: the engine's, and the group coordinator's lines, which say when a node took over coordinating the
 * groups of a partition of the offsets topic and how each group's rebalances went: what a stalled consumer group is
 * read against.
 */
const clusterLog4jProperties = `${kafkaLog4jProperties}log4j.logger.kafka.coordinator.group=INFO\n`

export interface KafkaClusterOptions {
  prefix: string
  /** keep the nodes' data from an earlier run with this prefix; default false (a new cluster) */
  keepData?: boolean
  /** TLS from this CA and a SCRAM user per principal (their passwords kept in `dir`); default plaintext */
  secure?: { ca: CertificateAuthority; principals: readonly string[]; dir: string }
}

/** A secure node's ports: clients (SASL_SSL) and the controller where the plaintext node has them, mutual TLS on 9094. */
const securePorts: SecureKafkaPorts = { sasl: kafkaBrokerPort, controller: kafkaControllerPort, mtls: 9094 }

export interface KafkaCluster {
  /** `<h1>:9092,<h2>:9092,<h3>:9092`: what every service gets as KAFKA_BROKERS */
  brokers: string
  /** the administrator's TLS and SASL on a secure cluster (none in plaintext): what probes and provisioning use */
  security: KafkaSecurity
  /** KAFKA_BROKERS with the administrator's TLS and SASL variables (in plaintext, KAFKA_BROKERS alone) */
  adminEnv(): Record<string, string>
  /** KAFKA_BROKERS with a principal's own TLS and SASL variables; in plaintext, KAFKA_BROKERS alone */
  envFor(principal: string): Record<string, string>
  /** node n (node.id n) on host n, in the hosts' order */
  nodes: HostEngine[]
  /**
   * every broker registered, a coordinator answering on every partition of the offsets topic (created by the first
   * call), and, for that topic and `topics`, every partition with all its replicas in sync
   */
  waitHealthy(topics?: string[], timeoutMs?: number): Promise<void>
  /** the host whose broker leads the most partitions of `topics` */
  leaderOfMostPartitions(topics: string[]): Promise<ClusterHost>
  /** stops every node by its pid */
  close(): Promise<void>
}

/** The cluster id a node's storage was formatted with, when it was. */
function formattedClusterId(dataDir: string): string | undefined {
  const file = join(dataDir, 'meta.properties')
  if (!existsSync(file)) return undefined
  return /^cluster\.id=(.+)$/m.exec(readFileSync(file, 'utf8'))?.[1]?.trim()
}

/** Whether the broker at `address` answers and counts itself among the cluster's live brokers. */
async function brokerAnswers(address: string, nodeId: number, security: KafkaSecurity): Promise<void> {
  const admin = kafkaClient(`${address}:${kafkaBrokerPort}`, 'meridian-cluster', security).admin()
  await admin.connect()
  try {
    const { brokers } = await admin.describeCluster()
    if (!brokers.some((broker) => broker.nodeId === nodeId))
      throw new Error(`broker ${nodeId} is not registered yet`)
  } finally {
    await admin.disconnect()
  }
}

/** Partition leaders and in-sync replicas of `topics`, asked of the cluster. */
async function partitionsOf(
  brokers: string,
  topics: string[],
  security: KafkaSecurity,
): Promise<{ topic: string; partition: number; leader: number; replicas: number[]; isr: number[] }[]> {
  const admin = kafkaClient(brokers, 'meridian-cluster', security).admin()
  await admin.connect()
  try {
    const metadata = await admin.fetchTopicMetadata({ topics })
    return metadata.topics.flatMap((topic) =>
      topic.partitions.map((partition) => ({
        topic: topic.name,
        partition: partition.partitionId,
        leader: partition.leader,
        replicas: partition.replicas,
        isr: partition.isr,
      })),
    )
  } finally {
    await admin.disconnect()
  }
}

/**
 * Starts a Kafka node on each host (node.id 1…n, every one a voter of the controller quorum), its storage formatted
 * with one cluster id, and resolves once every broker is registered.
 */
export async function startKafkaCluster(
  hosts: ClusterHost[],
  options: KafkaClusterOptions,
): Promise<KafkaCluster> {
  const classPath = kafkaClassPath(layoutFromEnv())
  const voters = hosts.map((host, i) => `${i + 1}@${host.address}:${kafkaControllerPort}`).join(',')
  const brokers = hosts.map((host) => `${host.address}:${kafkaBrokerPort}`).join(',')
  const dirs = hosts.map((host) => clusterStateDir(options.prefix, host, 'kafka', !options.keepData))
  const access = clusterAccess(brokers, options.secure)
  const security = kafkaSecurityFromEnv(access.adminEnv())
  // one server certificate for every node (each host's address among its names), and the SCRAM users' passwords
  const secure = options.secure && {
    passwords: access.passwords,
    certificate: await options.secure.ca.server(
      kafkaServerCertificateName,
      hosts.map((host) => host.address),
    ),
    caFile: options.secure.ca.caFile,
  }
  const clusterId =
    dirs.map((dir) => formattedClusterId(join(dir, 'data'))).find((id) => id !== undefined) ??
    newKafkaClusterId()

  const nodes = hosts.map((host, i) => {
    const nodeId = i + 1
    const dir = dirs[i] as string
    const dataDir = join(dir, 'data')
    const configFile = join(dir, 'server.properties')
    const log4jFile = join(dir, 'log4j.properties')
    return daemonEngine({
      name: 'kafka',
      host,
      dir,
      logFile: join(dir, 'kafka.log'),
      async daemon() {
        const keyStoreFile = join(dir, 'keystore.pem')
        if (secure)
          writeFileSync(
            keyStoreFile,
            `${readFileSync(secure.certificate.keyFile, 'utf8').trimEnd()}\n${readFileSync(secure.certificate.certFile, 'utf8')}`,
            { mode: 0o600 },
          )
        writeFileSync(
          configFile,
          kafkaServerProperties({
            nodeId,
            address: host.address,
            voters,
            dataDir,
            ...clusterReplication,
            extra: clusterFailureDetection,
            ...(secure
              ? {
                  listeners: secureKafkaListeners({
                    host: host.address,
                    ports: securePorts,
                    keyStoreFile,
                    caFile: secure.caFile,
                    passwords: secure.passwords,
                  }),
                }
              : {}),
          }),
          { mode: 0o600 },
        )
        writeFileSync(log4jFile, clusterLog4jProperties)
        // formatting touches only files: it runs outside the host; a secure cluster's SCRAM users are added then
        if (formattedClusterId(dataDir) === undefined)
          await run(
            'java',
            kafkaFormatArgs(
              classPath,
              configFile,
              clusterId,
              secure ? scramFormatArgs(secure.passwords) : undefined,
            ),
            { timeoutMs: 60_000 },
          ).catch((error: unknown) => {
            // the command line holds the SCRAM users' passwords
            let message = error instanceof Error ? error.message : String(error)
            for (const password of Object.values(secure?.passwords ?? {}))
              message = message.replaceAll(password, '[redacted]')
            throw new Error(message)
          })
        return {
          command: 'java',
          args: kafkaServerArgs({ classPath, configFile, log4jFile, logsDir: dir, jvm: clusterJvm }),
          cwd: dir,
        }
      },
      ready: () => brokerAnswers(host.address, nodeId, security),
      readyTimeoutMs: 120_000,
      // SIGTERM: a controlled shutdown, which hands the node's partition leaderships over first
      stopSignal: 'SIGTERM',
      stopGraceMs: 30_000,
    })
  })

  const cluster: KafkaCluster = {
    brokers,
    security,
    adminEnv: access.adminEnv,
    envFor: access.envFor,
    nodes,
    async waitHealthy(topics = [], timeoutMs = 90_000) {
      await waitFor(
        `kafka cluster ${options.prefix}`,
        async () => {
          const admin = kafkaClient(brokers, 'meridian-cluster', security).admin()
          await admin.connect()
          try {
            const { brokers: registered } = await admin.describeCluster()
            if (registered.length !== hosts.length)
              throw new Error(`${registered.length} of ${hosts.length} brokers registered`)
          } finally {
            await admin.disconnect()
          }
          // a group can be coordinated on every partition before anything counts on a consumer group
          await groupsCoordinated(brokers, security)
          const short = (await partitionsOf(brokers, [offsetsTopic, ...topics], security)).filter(
            (partition) => partition.isr.length < hosts.length || partition.leader < 0,
          )
          if (short.length > 0)
            throw new Error(
              `${short.length} partitions short of ${hosts.length} in-sync replicas, e.g. ` +
                `${short[0]?.topic}/${short[0]?.partition} isr [${short[0]?.isr.join(',')}]`,
            )
        },
        { timeoutMs, intervalMs: 500 },
      )
    },
    async leaderOfMostPartitions(topics) {
      const led = new Map<number, number>()
      for (const { leader } of await partitionsOf(brokers, topics, security))
        led.set(leader, (led.get(leader) ?? 0) + 1)
      const [nodeId] = [...led].sort((a, b) => b[1] - a[1])[0] ?? []
      const host = nodeId === undefined ? undefined : hosts[nodeId - 1]
      if (!host) throw new Error(`no broker of ${options.prefix} leads a partition of ${topics.join(', ')}`)
      return host
    },
    async close() {
      await Promise.all(nodes.map((node) => node.stop()))
    },
  }
  try {
    await Promise.all(nodes.map((node) => node.start()))
  } catch (error) {
    await cluster.close()
    throw error
  }
  return cluster
}

/**
 * What a client of the cluster is given: KAFKA_BROKERS, and on a secure cluster the SASL_SSL variables of the
 * administrator or of a principal (scramAccess: SCRAM-SHA-512, TLS against the CA, passwords kept in `secure.dir`).
 */
function clusterAccess(
  brokers: string,
  secure: KafkaClusterOptions['secure'],
): {
  passwords: Readonly<Record<string, string>>
  adminEnv(): Record<string, string>
  envFor(principal: string): Record<string, string>
} {
  if (!secure)
    return {
      passwords: {},
      adminEnv: () => ({ KAFKA_BROKERS: brokers }),
      envFor: () => ({ KAFKA_BROKERS: brokers }),
    }
  return scramAccess(secure, brokers)
}
