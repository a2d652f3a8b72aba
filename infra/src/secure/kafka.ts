// One secure Kafka (issue 45): a KRaft node (broker and controller, as native/kafka.ts runs the development one) with no
// plaintext client listener. Clients authenticate on SASL_SSL with SCRAM-SHA-512 (or PLAIN) over TLS, or on SSL with a
// client certificate of the run's CA (mutual TLS: the principal is the certificate's common name). The broker speaks
// SASL_SSL to itself as 'admin', and reaches its controller over mutual TLS with its own certificate. The SCRAM users
// (one per principal, and 'admin') are written into the metadata when the storage is formatted; the PLAIN users are the
// same names and passwords, in the listener's JAAS configuration.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { kafkaSecurityFromEnv } from '@meridian/kafka-connection'
import { type Layout, layoutFromEnv } from '../layout.ts'
import { PidFile, type Progress } from '../native/engine.ts'
import {
  type KafkaListeners,
  kafkaNodeFiles,
  kafkaServerProperties,
  startKafkaNode,
} from '../native/kafka.ts'
import { kafkaCluster } from '../probes.ts'
import { errorText, isAlive, logTail, stopPid, waitFor } from '../processes.ts'
import {
  instanceCredentials,
  type SecureEngineAccess,
  type SecureEngineInstance,
  type SecureEngineOptions,
  serverHosts,
} from './engine.ts'

export interface SecureKafkaPorts {
  /** SASL_SSL: SCRAM-SHA-512 or PLAIN over TLS, what envFor() points a service at */
  sasl: number
  /** SSL with a client certificate required (mutual TLS) */
  mtls: number
  /** the controller's listener, mutual TLS with the broker's own certificate */
  controller: number
}

export interface SecureKafkaOptions extends SecureEngineOptions<SecureKafkaPorts> {
  /** where the preparation keeps the broker's jars (kafkaClassPath); default the environment's */
  layout?: Layout
  progress?: Progress
  /** how long the broker may take to answer an administrator; default 120 s */
  startTimeoutMs?: number
}

export interface SecureKafkaInstance extends SecureEngineInstance {
  /** `host:port` of each client listener: KAFKA_BROKERS for SASL clients, and for mutual-TLS clients */
  readonly brokers: { sasl: string; mtls: string }
}

/** The administrator: the broker's own inter-broker user, a super user, and what provisioning connects as. */
export const kafkaAdminUser = 'admin'
/** The name of the broker's certificate, and so its principal on the controller listener (a super user too). */
export const kafkaServerCertificateName = 'kafka'

/** An address in `host:port` and in a listener: IPv6 in brackets. */
const hostPort = (host: string, port: number): string => `${host.includes(':') ? `[${host}]` : host}:${port}`

/**
 * The SASL_SSL, SSL and CONTROLLER listeners and their security. TLS from PEM files: the key store holds the broker's
 * key and certificate, the trust store the CA. Client certificates are asked for on the SSL and controller listeners
 * only. A certificate's principal is its CN (`CN=order,O=Meridian` is `order`). The authorizer knows no ACL yet, so it
 * lets every authenticated principal do anything (allow.everyone.if.no.acl.found): per-service ACLs are to come, and
 * then only the super users (the administrator, the broker itself) will be let through where no ACL says so.
 */
export function secureKafkaListeners(options: {
  host: string
  ports: SecureKafkaPorts
  keyStoreFile: string
  caFile: string
  /** every SASL user's password: the PLAIN users', the administrator's among them */
  passwords: Readonly<Record<string, string>>
}): KafkaListeners {
  const { host, ports, passwords } = options
  const adminPassword = passwords[kafkaAdminUser]
  if (adminPassword === undefined) throw new Error(`secure Kafka: no password for '${kafkaAdminUser}'`)
  const plainUsers = Object.entries(passwords)
    .map(([user, password]) => `user_${user}="${password}"`)
    .join(' ')
  return {
    listeners: [
      `SASL_SSL://${hostPort(host, ports.sasl)}`,
      `SSL://${hostPort(host, ports.mtls)}`,
      `CONTROLLER://${hostPort(host, ports.controller)}`,
    ].join(','),
    advertised: `SASL_SSL://${hostPort(host, ports.sasl)},SSL://${hostPort(host, ports.mtls)}`,
    protocolMap: 'CONTROLLER:SSL,SASL_SSL:SASL_SSL,SSL:SSL',
    interBroker: 'SASL_SSL',
    security: `# TLS: the broker's key and certificate, and the CA, as PEM files
ssl.keystore.type=PEM
ssl.keystore.location=${options.keyStoreFile}
ssl.truststore.type=PEM
ssl.truststore.location=${options.caFile}
ssl.client.auth=none
listener.name.ssl.ssl.client.auth=required
listener.name.controller.ssl.client.auth=required
ssl.principal.mapping.rules=RULE:^CN=([^,]+),.*$/$1/,DEFAULT
# SASL on SASL_SSL: SCRAM-SHA-512 (users in the metadata, added when the storage was formatted) and PLAIN (users here)
sasl.enabled.mechanisms=SCRAM-SHA-512,PLAIN
sasl.mechanism.inter.broker.protocol=SCRAM-SHA-512
listener.name.sasl_ssl.scram-sha-512.sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required username="${kafkaAdminUser}" password="${adminPassword}";
listener.name.sasl_ssl.plain.sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required ${plainUsers};
# no ACL yet: every authenticated principal may do anything; the super users whatever ACLs come
authorizer.class.name=org.apache.kafka.metadata.authorizer.StandardAuthorizer
super.users=User:${kafkaAdminUser};User:${kafkaServerCertificateName}
allow.everyone.if.no.acl.found=true
`,
  }
}

/** The storage tool's options that add each user to the metadata with SCRAM-SHA-512. */
export const scramFormatArgs = (passwords: Readonly<Record<string, string>>): string[] =>
  Object.entries(passwords).flatMap(([name, password]) => [
    '--add-scram',
    `SCRAM-SHA-512=[name=${name},password=${password}]`,
  ])

/** The file naming the SCRAM users the storage was formatted with (names only): those the metadata knows. */
const scramUsersFile = (dir: string): string => join(dir, 'scram-users.json')

const tail = (file: string): string => logTail(file, 25) || '(no log)'

/**
 * Starts the instance in `options.dir` and resolves once the administrator, over SASL_SSL with SCRAM-SHA-512, sees the
 * cluster. On a folder formatted before, the principals must be among those it was formatted with: SCRAM users are
 * only added when the storage is formatted (a new folder, or the old one's `data` removed, formats it anew).
 */
export async function startSecureKafka(options: SecureKafkaOptions): Promise<SecureKafkaInstance> {
  const { dir, ca, host, ports, principals } = options
  if (principals.includes(kafkaAdminUser) || principals.includes(kafkaServerCertificateName))
    throw new Error(
      `secure Kafka: '${kafkaAdminUser}' and '${kafkaServerCertificateName}' are the broker's own names`,
    )
  mkdirSync(dir, { recursive: true, mode: 0o700 })
  const pidFile = new PidFile(dir)
  const running = pidFile.live()
  if (running !== undefined) throw new Error(`a secure Kafka already runs on ${dir} (pid ${running})`)

  const passwords = instanceCredentials(dir, [kafkaAdminUser, ...principals])
  const files = kafkaNodeFiles(dir)
  const formatted = existsSync(join(files.dataDir, 'meta.properties'))
  if (formatted) {
    const known = existsSync(scramUsersFile(dir))
      ? (JSON.parse(readFileSync(scramUsersFile(dir), 'utf8')) as string[])
      : []
    const unknown = Object.keys(passwords).filter((name) => !known.includes(name))
    if (unknown.length > 0) {
      throw new Error(
        `secure Kafka: ${unknown.join(', ')} ${unknown.length === 1 ? 'is' : 'are'} not among the SCRAM users ${files.dataDir} was formatted with; remove that folder to format it with every principal`,
      )
    }
  }

  // the broker's key and certificate in one PEM file, readable by its owner only
  const serverCertificate = await ca.server(kafkaServerCertificateName, serverHosts(options))
  const keyStoreFile = join(dir, 'keystore.pem')
  writeFileSync(
    keyStoreFile,
    `${readFileSync(serverCertificate.keyFile, 'utf8').trimEnd()}\n${readFileSync(serverCertificate.certFile, 'utf8')}`,
    { mode: 0o600 },
  )
  const properties = kafkaServerProperties({
    nodeId: 1,
    address: host,
    voters: `1@${hostPort(host, ports.controller)}`,
    dataDir: files.dataDir,
    replicationFactor: 1,
    minInsyncReplicas: 1,
    listeners: secureKafkaListeners({ host, ports, keyStoreFile, caFile: ca.caFile, passwords }),
  })
  const pid = await startKafkaNode(options.layout ?? layoutFromEnv(), files, properties, {
    ...(options.progress ? { progress: options.progress } : {}),
    formatExtra: scramFormatArgs(passwords),
    secrets: Object.values(passwords),
  })
  pidFile.write(pid)
  if (!formatted) writeFileSync(scramUsersFile(dir), `${JSON.stringify(Object.keys(passwords))}\n`)

  const access = secureKafkaAccess(options)
  const { brokers } = access
  try {
    await waitFor(
      'the secure Kafka broker',
      () => kafkaCluster(brokers.sasl, kafkaSecurityFromEnv(access.adminEnv())),
      { timeoutMs: options.startTimeoutMs ?? 120_000, intervalMs: 500, alive: () => isAlive(pid) },
    )
  } catch (error) {
    await stopPid(pid, 'SIGTERM', 10_000)
    pidFile.clear()
    throw new Error(`${errorText(error)}\nlast lines of ${files.logFile}:\n${tail(files.logFile)}`)
  }
  return {
    pid,
    logFile: files.logFile,
    brokers,
    envFor: access.envFor,
    adminEnv: access.adminEnv,
    // SIGTERM: a controlled shutdown
    stop: async () => {
      await pidFile.stop('SIGTERM', 30_000)
    },
  }
}

/**
 * The SCRAM users' passwords (made on first use, kept in the folder's credentials.json) and the variables they give:
 * the SASL_SSL listener, SCRAM-SHA-512 as the principal or as the administrator, TLS against the CA.
 */
export function secureKafkaAccess(
  options: SecureEngineOptions<SecureKafkaPorts>,
): SecureEngineAccess & Pick<SecureKafkaInstance, 'brokers'> {
  const { dir, ca, host, ports, principals } = options
  const brokers = { sasl: hostPort(host, ports.sasl), mtls: hostPort(host, ports.mtls) }
  const { envFor, adminEnv } = scramAccess({ dir, ca, principals }, brokers.sasl)
  return { brokers, envFor, adminEnv }
}

/**
 * The variables a SCRAM user of `brokers` (a SASL_SSL listener list) is given: TLS against the CA, SCRAM-SHA-512 as
 * a principal or as the administrator, with the passwords made on first use and kept in `dir`'s credentials.json.
 * One machine's secure Kafka (secureKafkaAccess) and the cluster's brokers (startKafkaCluster) both.
 */
export function scramAccess(
  options: Pick<SecureEngineOptions<SecureKafkaPorts>, 'dir' | 'ca' | 'principals'>,
  brokers: string,
): SecureEngineAccess & { passwords: Readonly<Record<string, string>> } {
  const passwords = instanceCredentials(options.dir, [kafkaAdminUser, ...options.principals])
  const envOf = (user: string): Record<string, string> => {
    const password = passwords[user]
    if (password === undefined) throw new Error(`secure Kafka: '${user}' is not one of its principals`)
    return {
      KAFKA_BROKERS: brokers,
      KAFKA_TLS: 'true',
      KAFKA_TLS_CA: options.ca.caFile,
      KAFKA_SASL_MECHANISM: 'scram-sha-512',
      KAFKA_SASL_USERNAME: user,
      KAFKA_SASL_PASSWORD: password,
    }
  }
  return {
    passwords,
    envFor: (principal) => {
      if (principal === kafkaAdminUser)
        throw new Error(`secure Kafka: '${principal}' is not one of its principals (it is the administrator)`)
      return envOf(principal)
    },
    adminEnv: () => envOf(kafkaAdminUser),
  }
}
