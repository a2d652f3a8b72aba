// Apache Kafka in KRaft mode (one node, broker and controller), its jars resolved by Maven, run with the machine's Java.
import { createHash, randomBytes } from 'node:crypto'
import { existsSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { infraDir, type Layout } from '../layout.ts'
import { kafkaCluster } from '../probes.ts'
import { run, startDaemon } from '../processes.ts'
import { type NativeEngine, PidFile, which } from './engine.ts'

const BROKER_PORT = 9092
const CONTROLLER_PORT = 9093
export const nativeKafkaBrokers = `127.0.0.1:${BROKER_PORT}`

const pomFile = join(infraDir, 'kafka', 'pom.xml')

function serverProperties(dataDir: string): string {
  return `# written by scripts/infra on every start; edit infra/src/native/kafka.ts instead
process.roles=broker,controller
node.id=1
controller.quorum.voters=1@127.0.0.1:${CONTROLLER_PORT}
listeners=PLAINTEXT://127.0.0.1:${BROKER_PORT},CONTROLLER://127.0.0.1:${CONTROLLER_PORT}
advertised.listeners=PLAINTEXT://127.0.0.1:${BROKER_PORT}
controller.listener.names=CONTROLLER
inter.broker.listener.name=PLAINTEXT
listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT
log.dirs=${dataDir}
# topics come only from infra/topics.json
auto.create.topics.enable=false
num.partitions=3
default.replication.factor=1
offsets.topic.replication.factor=1
offsets.topic.num.partitions=10
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
min.insync.replicas=1
group.initial.rebalance.delay.ms=0
log.retention.hours=168
`
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

/** Kafka's cluster ids are 16 random bytes in unpadded base64url. */
const newClusterId = (): string => randomBytes(16).toString('base64url')

/** The version the broker itself logged when it started. */
export function loggedKafkaVersion(logFile: string): string | undefined {
  if (!existsSync(logFile)) return undefined
  const matches = [...readFileSync(logFile, 'utf8').matchAll(/Kafka version: (\S+)/g)]
  return matches.at(-1)?.[1]
}

/**
 * The class path of the broker, resolved by Maven from infra/kafka/pom.xml once per pom (the engine image copies the
 * same jars); `home` keeps the resolved list.
 */
export async function kafkaClassPath(home: string, progress: (m: string) => void): Promise<string> {
  const pomHash = createHash('sha256').update(readFileSync(pomFile)).digest('hex').slice(0, 12)
  const classPathFile = join(home, `classpath-${pomHash}.txt`)
  if (!existsSync(classPathFile)) {
    for (const tool of ['java', 'mvn']) {
      if (!which(tool))
        throw new Error(
          `kafka: '${tool}' is not on PATH; install a JDK 17+ and Maven (apt-get install openjdk-17-jdk-headless maven)`,
        )
    }
    progress(`resolving Kafka jars from Maven Central with Maven (${pomFile}); first run only`)
    await run(
      'mvn',
      ['-B', '-f', pomFile, 'dependency:build-classpath', `-Dmdep.outputFile=${classPathFile}.partial`],
      {
        showOutput: true,
      },
    )
    writeFileSync(classPathFile, readFileSync(`${classPathFile}.partial`))
  }
  return readFileSync(classPathFile, 'utf8').trim()
}

export function nativeKafka(layout: Layout): NativeEngine {
  const home = layout.componentDir('kafka')
  const dataDir = join(home, 'data')
  const configFile = join(home, 'server.properties')
  const log4jFile = join(home, 'log4j.properties')
  const logFile = join(home, 'kafka.log')
  const pidFile = new PidFile(home)

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
      const cp = await kafkaClassPath(home, progress)
      writeFileSync(configFile, serverProperties(dataDir))
      writeFileSync(log4jFile, kafkaLog4jProperties)
      if (!existsSync(join(dataDir, 'meta.properties'))) {
        progress(`formatting KRaft storage in ${dataDir}`)
        await run('java', [
          '-cp',
          cp,
          'kafka.tools.StorageTool',
          'format',
          '-t',
          newClusterId(),
          '-c',
          configFile,
        ])
      }
      const pid = startDaemon({
        command: 'java',
        args: [
          '-Xms256m',
          '-Xmx768m',
          '-XX:+UseG1GC',
          '-Djava.awt.headless=true',
          `-Dlog4j.configuration=file:${log4jFile}`,
          `-Dkafka.logs.dir=${home}`,
          '-cp',
          cp,
          'kafka.Kafka',
          configFile,
        ],
        logFile,
        cwd: home,
      })
      pidFile.write(pid)
      return pid
    },

    // SIGTERM: a controlled shutdown
    stop: () => pidFile.stop('SIGTERM', 30_000),
  }
}
