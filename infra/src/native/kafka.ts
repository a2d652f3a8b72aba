// Apache Kafka in KRaft mode (one node, broker and controller), its jars resolved by Maven, run with the machine's Java.
import { createHash, randomBytes } from 'node:crypto'
import { chmodSync, existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { infraDir, type Layout } from '../layout.ts'
import { MissingPrerequisite } from '../missing-prerequisite.ts'
import { kafkaCluster } from '../probes.ts'
import { run, runLogged, startDaemon } from '../processes.ts'
import { type NativeEngine, PidFile, type Progress, which } from './engine.ts'

/** the standard ports, on 127.0.0.1 natively and on each host's address in a cluster */
export const kafkaBrokerPort = 9092
export const kafkaControllerPort = 9093
const BROKER_PORT = kafkaBrokerPort
const CONTROLLER_PORT = kafkaControllerPort
export const nativeKafkaBrokers = `127.0.0.1:${BROKER_PORT}`

/** Kafka's consumer offsets topic, whose partition leaders coordinate the consumer groups, and its partitions. */
export const offsetsTopic = '__consumer_offsets'
export const offsetsTopicPartitions = 10

const pomFile = join(infraDir, 'kafka', 'pom.xml')

/** What differs between one node of a KRaft cluster and another, and between the native node and a cluster's. */
export interface KafkaNodeSettings {
  nodeId: number
  /** the address the broker and the controller listen on and advertise */
  address: string
  /** `controller.quorum.voters`: `<id>@<address>:9093`, comma-separated */
  voters: string
  dataDir: string
  /** the default for new topics and for the offsets and transaction-state topics */
  replicationFactor: number
  /** the default min.insync.replicas, and the transaction-state log's */
  minInsyncReplicas: number
  /** the listeners and their security; default plaintextKafkaListeners(address) (the development node's, a cluster's) */
  listeners?: KafkaListeners
  /** further lines of server.properties (a cluster's failure detection) */
  extra?: string
}

/** A node's listeners: where clients, other brokers and the controller reach it, and what secures each. */
export interface KafkaListeners {
  /** `listeners`: NAME://address:port, comma-separated, the controller's among them */
  listeners: string
  /** `advertised.listeners`: the client listeners as clients are told to reach them */
  advertised: string
  /** `listener.security.protocol.map`: each listener's protocol (PLAINTEXT, SSL, SASL_PLAINTEXT, SASL_SSL) */
  protocolMap: string
  /** `inter.broker.listener.name` */
  interBroker: string
  /** further lines of server.properties: the listeners' TLS, SASL and the authorizer (secure/kafka.ts) */
  security?: string
}

/** Clients on 9092 and the controller on 9093, both in plaintext: the development node's and a cluster's. */
export function plaintextKafkaListeners(address: string): KafkaListeners {
  return {
    listeners: `PLAINTEXT://${address}:${BROKER_PORT},CONTROLLER://${address}:${CONTROLLER_PORT}`,
    advertised: `PLAINTEXT://${address}:${BROKER_PORT}`,
    protocolMap: 'CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT',
    interBroker: 'PLAINTEXT',
  }
}

/** A node's server.properties: broker and controller in one process (KRaft combined mode). */
export function kafkaServerProperties(node: KafkaNodeSettings): string {
  const listeners = node.listeners ?? plaintextKafkaListeners(node.address)
  return `# written on every start by infra/src/native/kafka.ts (kafkaServerProperties); edit it there
process.roles=broker,controller
node.id=${node.nodeId}
controller.quorum.voters=${node.voters}
listeners=${listeners.listeners}
advertised.listeners=${listeners.advertised}
controller.listener.names=CONTROLLER
inter.broker.listener.name=${listeners.interBroker}
listener.security.protocol.map=${listeners.protocolMap}
${listeners.security ? `${listeners.security.trimEnd()}\n` : ''}log.dirs=${node.dataDir}
# topics come only from infra/topics.json
auto.create.topics.enable=false
num.partitions=3
default.replication.factor=${node.replicationFactor}
offsets.topic.replication.factor=${node.replicationFactor}
offsets.topic.num.partitions=${offsetsTopicPartitions}
transaction.state.log.replication.factor=${node.replicationFactor}
transaction.state.log.min.isr=${node.minInsyncReplicas}
min.insync.replicas=${node.minInsyncReplicas}
# a replica that fell out of sync never becomes leader: acknowledged messages are never lost to an election
unclean.leader.election.enable=false
group.initial.rebalance.delay.ms=0
log.retention.hours=168
${node.extra ? `${node.extra.trimEnd()}\n` : ''}`
}

/** Kafka's logging: warnings, plus the lines that say which version started (the engine image logs the same way). */
export const kafkaLog4jProperties = `log4j.rootLogger=WARN, stdout
log4j.appender.stdout=org.apache.log4j.ConsoleAppender
log4j.appender.stdout.layout=org.apache.log4j.PatternLayout
log4j.appender.stdout.layout.ConversionPattern=[%d] %p %m (%c)%n
# the version line and the started line are what scripts/infra reads back
log4j.logger.org.apache.kafka.common.utils.AppInfoParser=INFO
log4j.logger.kafka.server.KafkaRaftServer=INFO
log4j.logger.kafka.server.BrokerServer=INFO
`

/**
 * Kafka's cluster ids are 16 random bytes in unpadded base64url, never starting with '-' (as Kafka's own
 * Uuid.randomUuid): the storage tool's argument parser reads `-t -GB55…` as an option, not as the id, and refuses
 * to format, one fresh cluster in 64.
 */
export function newKafkaClusterId(): string {
  for (;;) {
    const id = randomBytes(16).toString('base64url')
    if (!id.startsWith('-')) return id
  }
}

/** The version the broker itself logged when it started. */
export function loggedKafkaVersion(logFile: string): string | undefined {
  if (!existsSync(logFile)) return undefined
  const matches = [...readFileSync(logFile, 'utf8').matchAll(/Kafka version: (\S+)/g)]
  return matches.at(-1)?.[1]
}

/** The file keeping the broker's class path as Maven resolved infra/kafka/pom.xml (one per pom's contents). */
export function kafkaClassPathFile(layout: Layout): string {
  const pomHash = createHash('sha256').update(readFileSync(pomFile)).digest('hex').slice(0, 12)
  return join(layout.componentDir('kafka'), `classpath-${pomHash}.txt`)
}

/** The class path of the broker the preparation resolved (the engine image copies the same jars). */
export function kafkaClassPath(layout: Layout): string {
  const file = kafkaClassPathFile(layout)
  if (!existsSync(file))
    throw new MissingPrerequisite('the Kafka 3.9.2 jars', 'resolves them once from Maven Central with Maven')
  return readFileSync(file, 'utf8').trim()
}

/** Resolves the broker's jars from Maven Central with Maven (its output into `logFile`), unless done already. */
export async function resolveKafkaJars(layout: Layout, logFile: string): Promise<string> {
  const file = kafkaClassPathFile(layout)
  if (existsSync(file)) return file
  for (const tool of ['java', 'mvn']) {
    if (!which(tool))
      throw new Error(
        `kafka: '${tool}' is not on PATH; install a JDK 17+ and Maven (apt-get install openjdk-17-jdk-headless maven)`,
      )
  }
  await runLogged(
    'mvn',
    ['-B', '-ntp', '-f', pomFile, 'dependency:build-classpath', `-Dmdep.outputFile=${file}.partial`],
    { logFile },
  )
  renameSync(`${file}.partial`, file)
  return file
}

/**
 * The java arguments that format a node's KRaft storage; every node of one cluster is formatted with its id. `extra`:
 * the storage tool's further options (a secure node's `--add-scram` users).
 */
export const kafkaFormatArgs = (
  classPath: string,
  configFile: string,
  clusterId: string,
  extra: readonly string[] = [],
): string[] => [
  ...lightJvm,
  '-cp',
  classPath,
  'kafka.tools.StorageTool',
  'format',
  '-t',
  clusterId,
  '-c',
  configFile,
  ...extra,
]

/** The java arguments of a node: `jvm` (heap, collector) first, its log4j configuration, the class path, its config. */
export function kafkaServerArgs(options: {
  classPath: string
  configFile: string
  log4jFile: string
  logsDir: string
  jvm: string[]
}): string[] {
  return [
    ...options.jvm,
    '-Djava.awt.headless=true',
    `-Dlog4j.configuration=file:${options.log4jFile}`,
    `-Dkafka.logs.dir=${options.logsDir}`,
    '-cp',
    options.classPath,
    'kafka.Kafka',
    options.configFile,
  ]
}

/** The files of one node run as a process of ours: its config, logging, log and data, in its own folder. */
export interface KafkaNodeFiles {
  home: string
  dataDir: string
  configFile: string
  log4jFile: string
  logFile: string
}

export function kafkaNodeFiles(home: string): KafkaNodeFiles {
  return {
    home,
    dataDir: join(home, 'data'),
    configFile: join(home, 'server.properties'),
    log4jFile: join(home, 'log4j.properties'),
    logFile: join(home, 'kafka.log'),
  }
}

/**
 * Every JVM of ours runs a lightly loaded broker (or a one-shot tool) on two cores shared with everything else: the
 * serial collector (one thread, nothing concurrent) and the client compiler only (C2's compiles cost more than they
 * return at a few requests a second). Measured on a single node started alone (2026-12-01): CPU until it listens
 * 6.0 -> 4.0 s, 7.5 -> 5.2 s after a further 30 s idle; the storage tool's format 1.9 -> 1.3 s.
 */
export const lightJvm = ['-XX:+UseSerialGC', '-XX:TieredStopAtLevel=1']

/** The single node's JVM: the development node's and a secure instance's. */
const singleNodeJvm = ['-Xms256m', '-Xmx768m', ...lightJvm]

/**
 * Starts a single node (broker and controller) of ours: writes its config (mode 0600: a secure node's holds passwords)
 * and logging, formats its storage when it has none (`formatExtra`: the storage tool's further options; `secrets`:
 * words of them that a failure's message must not show), starts the JVM. Returns its pid.
 */
export async function startKafkaNode(
  layout: Layout,
  files: KafkaNodeFiles,
  properties: string,
  options: { progress?: Progress; formatExtra?: readonly string[]; secrets?: readonly string[] } = {},
): Promise<number> {
  const cp = kafkaClassPath(layout)
  writeFileSync(files.configFile, properties, { mode: 0o600 })
  chmodSync(files.configFile, 0o600)
  writeFileSync(files.log4jFile, kafkaLog4jProperties)
  if (!existsSync(join(files.dataDir, 'meta.properties'))) {
    options.progress?.(`formatting KRaft storage in ${files.dataDir}`)
    try {
      await run('java', kafkaFormatArgs(cp, files.configFile, newKafkaClusterId(), options.formatExtra))
    } catch (error) {
      // run()'s message repeats the command line, which holds the SCRAM users' passwords
      let message = error instanceof Error ? error.message : String(error)
      for (const secret of options.secrets ?? []) message = message.replaceAll(secret, '[redacted]')
      throw new Error(message)
    }
  }
  return startDaemon({
    command: 'java',
    args: kafkaServerArgs({
      classPath: cp,
      configFile: files.configFile,
      log4jFile: files.log4jFile,
      logsDir: files.home,
      jvm: singleNodeJvm,
    }),
    logFile: files.logFile,
    cwd: files.home,
  })
}

export function nativeKafka(layout: Layout): NativeEngine {
  const files = kafkaNodeFiles(layout.componentDir('kafka'))
  const { logFile } = files
  const pidFile = new PidFile(files.home)

  return {
    name: 'kafka',
    ports: [BROKER_PORT, CONTROLLER_PORT],
    endpoint: nativeKafkaBrokers,
    logFile,
    startTimeoutMs: 120_000,
    runningPid: () => pidFile.live(),

    async probe() {
      await kafkaCluster(nativeKafkaBrokers)
      return `Kafka ${loggedKafkaVersion(logFile) ?? 'unknown'}`
    },

    async start(progress) {
      const properties = kafkaServerProperties({
        nodeId: 1,
        address: '127.0.0.1',
        voters: `1@127.0.0.1:${CONTROLLER_PORT}`,
        dataDir: files.dataDir,
        replicationFactor: 1,
        minInsyncReplicas: 1,
      })
      const pid = await startKafkaNode(layout, files, properties, { progress })
      pidFile.write(pid)
      return pid
    },

    // SIGTERM: a controlled shutdown
    stop: () => pidFile.stop('SIGTERM', 30_000),
  }
}
