// One secure Kafka for the file (secure/kafka.ts): provisioning as the administrator, a service's SCRAM-SHA-512 client,
// PLAIN, mutual TLS on the SSL listener; and what it refuses: a wrong password, a client that does not trust its CA, a
// plaintext client, a client without a certificate on the mutual-TLS listener. Clients are infra's own (probes.ts),
// made from the variables a service is given (envFor, adminEnv) as every client is: kafkaSecurityFromEnv.
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { type KafkaSecurityVariables, kafkaSecurityFromEnv } from '@meridian/kafka-connection'
import type { Kafka } from 'kafkajs'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { freePort } from '../src/free-port.ts'
import { kafkaSecurityOf, provisionTopics } from '../src/index.ts'
import { createTopics, kafkaClient, kafkaCluster } from '../src/probes.ts'
import { type CertificateAuthority, certificateAuthority } from '../src/secure/certificates.ts'
import { type SecureKafkaInstance, startSecureKafka } from '../src/secure/kafka.ts'
import { scaledMs } from '../src/test-time.ts'
import { expandTopics, loadTopicDeclaration } from '../src/topics.ts'
import { eventually } from './eventually.ts'

const root = mkdtempSync(join(tmpdir(), 'meridian-secure-kafka-'))
let ca: CertificateAuthority
let kafka: SecureKafkaInstance
const topic = 'secure.order.placed'

/** Three distinct free ports. */
async function threePorts(): Promise<[number, number, number]> {
  const ports = new Set<number>()
  while (ports.size < 3) ports.add(await freePort())
  return [...ports] as [number, number, number]
}

beforeAll(async () => {
  ca = await certificateAuthority(join(root, 'ca'))
  const [sasl, mtls, controller] = await threePorts()
  kafka = await startSecureKafka({
    dir: join(root, 'kafka'),
    ca,
    host: '127.0.0.1',
    ports: { sasl, mtls, controller },
    principals: ['auth', 'order', 'realtime-gateway'],
  })
}, scaledMs(240_000))

afterAll(async () => {
  await kafka?.stop()
  rmSync(root, { recursive: true, force: true })
}, scaledMs(60_000))

/** An infra client made from these variables, as every client is. */
const clientOf = (brokers: string, env: KafkaSecurityVariables, name = 'secure-kafka-test'): Kafka =>
  kafkaClient(brokers, name, kafkaSecurityFromEnv(env))

/** Every message along an error's causes (kafkajs wraps the socket's and the broker's errors). */
function messagesOf(error: unknown): string {
  const messages: string[] = []
  for (let current: unknown = error, depth = 0; current && depth < 8; depth++) {
    const { message, cause, originalError } = current as {
      message?: string
      cause?: unknown
      originalError?: unknown
    }
    if (message) messages.push(message)
    current = originalError ?? cause
  }
  return messages.join(' | ')
}

/** What listing the topics with this client ends in: the topics, or the error's messages. */
async function listTopics(client: Kafka): Promise<{ topics?: string[]; error?: string }> {
  const admin = client.admin()
  try {
    await admin.connect()
    return { topics: await admin.listTopics() }
  } catch (error) {
    return { error: messagesOf(error) }
  } finally {
    await admin.disconnect()
  }
}

describe('a secure Kafka: SASL_SSL with SCRAM-SHA-512 and PLAIN, mutual TLS, no plaintext listener', () => {
  it('when provisioning connects with the administrator’s variables, then it sees the broker and creates topics', async () => {
    const admin = kafkaSecurityFromEnv(kafka.adminEnv())
    const brokers = kafka.adminEnv().KAFKA_BROKERS ?? ''
    expect(await kafkaCluster(brokers, admin)).toEqual({ brokers: 1, controller: 1 })
    expect(await createTopics(brokers, [{ name: topic, partitions: 2 }], {}, admin)).toEqual([topic])
    // again: nothing missing
    expect(await createTopics(brokers, [{ name: topic, partitions: 2 }], {}, admin)).toEqual([])
    // its partitions answer (a leader in the metadata may not have taken its partition over yet)
    const client = clientOf(brokers, kafka.adminEnv(), 'secure-kafka-offsets').admin()
    await client.connect()
    try {
      await eventually('the topic to answer for its offsets', () =>
        client.fetchTopicOffsets(topic).then(
          (offsets) => offsets,
          () => undefined,
        ),
      )
    } finally {
      await client.disconnect()
    }
  })

  it('when a service connects with its own variables (SCRAM-SHA-512 over TLS), then it produces and consumes', async () => {
    const env = kafka.envFor('order')
    expect(env).toMatchObject({
      KAFKA_BROKERS: kafka.brokers.sasl,
      KAFKA_TLS: 'true',
      KAFKA_TLS_CA: ca.caFile,
      KAFKA_SASL_MECHANISM: 'scram-sha-512',
      KAFKA_SASL_USERNAME: 'order',
    })
    expect(env.KAFKA_SASL_PASSWORD).toMatch(/^[A-Za-z0-9_-]{43}$/)
    const client = clientOf(env.KAFKA_BROKERS ?? '', env)
    const producer = client.producer()
    await producer.connect()
    await producer.send({ topic, messages: [{ key: 'o-1', value: 'placed by order' }] })
    await producer.disconnect()

    const consumer = client.consumer({ groupId: 'secure-kafka-test' })
    const seen: string[] = []
    await consumer.connect()
    try {
      await consumer.subscribe({ topic, fromBeginning: true })
      await consumer.run({
        eachMessage: async ({ message }) => {
          seen.push(message.value?.toString() ?? '')
        },
      })
      await eventually('the message consumed', async () => (seen.length > 0 ? seen : undefined))
      expect(seen).toEqual(['placed by order'])
    } finally {
      await consumer.disconnect()
    }
  })

  it('when a service authenticates with PLAIN instead, with the same password, then it is let in', async () => {
    const env = { ...kafka.envFor('realtime-gateway'), KAFKA_SASL_MECHANISM: 'plain' }
    expect((await listTopics(clientOf(kafka.brokers.sasl, env))).topics).toContain(topic)
  })

  it('when a client presents a certificate of the CA on the SSL listener, then it is let in (mutual TLS)', async () => {
    const certificate = await ca.client('auth')
    const env = {
      KAFKA_TLS_CA: ca.caFile,
      KAFKA_TLS_CERT: certificate.certFile,
      KAFKA_TLS_KEY: certificate.keyFile,
    }
    expect((await listTopics(clientOf(kafka.brokers.mtls, env))).topics).toContain(topic)
  })

  it('when a client comes to the SSL listener without a certificate, or with a stranger CA’s, then it is refused', async () => {
    expect((await listTopics(clientOf(kafka.brokers.mtls, { KAFKA_TLS_CA: ca.caFile }))).error).toBeDefined()
    const stranger = await (await certificateAuthority(join(root, 'stranger-ca'))).client('auth')
    const env = {
      KAFKA_TLS_CA: ca.caFile,
      KAFKA_TLS_CERT: stranger.certFile,
      KAFKA_TLS_KEY: stranger.keyFile,
    }
    expect((await listTopics(clientOf(kafka.brokers.mtls, env))).error).toBeDefined()
  })

  it('when a service gives a wrong password, then authentication fails', async () => {
    const env = { ...kafka.envFor('order'), KAFKA_SASL_PASSWORD: 'not-the-password' }
    const { error } = await listTopics(clientOf(kafka.brokers.sasl, env))
    expect(error).toMatch(/authentication failed/i)
    // a user that does not exist fails the same way, PLAIN too
    const plain = { ...kafka.envFor('order'), KAFKA_SASL_MECHANISM: 'plain', KAFKA_SASL_USERNAME: 'nobody' }
    expect((await listTopics(clientOf(kafka.brokers.sasl, plain))).error).toMatch(/authentication failed/i)
  })

  it('when a client does not trust the CA, then TLS refuses the broker', async () => {
    const { KAFKA_TLS_CA: _ca, ...withoutCa } = kafka.envFor('order')
    // the system's CAs only
    const { error } = await listTopics(clientOf(kafka.brokers.sasl, withoutCa))
    expect(error).toMatch(/certificate/i)
    const other = await certificateAuthority(join(root, 'other-ca'))
    const trustingAnother = { ...kafka.envFor('order'), KAFKA_TLS_CA: other.caFile }
    expect((await listTopics(clientOf(kafka.brokers.sasl, trustingAnother))).error).toMatch(/certificate/i)
  })

  it('when a plaintext client comes to the SASL_SSL listener, then it gets no metadata', async () => {
    const { topics, error } = await listTopics(kafkaClient(kafka.brokers.sasl, 'plaintext'))
    expect(topics).toBeUndefined()
    expect(error).toBeDefined()
  })

  it('listens on no plaintext listener, and its log shows no password', () => {
    const properties = readFileSync(join(root, 'kafka', 'server.properties'), 'utf8')
    expect(properties).toMatch(
      /^listeners=SASL_SSL:\/\/127\.0\.0\.1:\d+,SSL:\/\/127\.0\.0\.1:\d+,CONTROLLER:\/\/127\.0\.0\.1:\d+$/m,
    )
    expect(properties).toMatch(
      /^listener\.security\.protocol\.map=CONTROLLER:SSL,SASL_SSL:SASL_SSL,SSL:SSL$/m,
    )
    expect(properties).not.toContain('PLAINTEXT')
    const log = readFileSync(kafka.logFile, 'utf8')
    expect(log).toMatch(/Kafka version: 3\.9\.2/)
    for (const env of [kafka.adminEnv(), kafka.envFor('auth'), kafka.envFor('order')])
      expect(log).not.toContain(env.KAFKA_SASL_PASSWORD)
  })

  it('keeps the credentials in the instance’s folder, readable by its owner only, and names no stranger', () => {
    expect(statSync(join(root, 'kafka', 'credentials.json')).mode & 0o077).toBe(0)
    expect(statSync(join(root, 'kafka', 'server.properties')).mode & 0o077).toBe(0)
    expect(statSync(join(root, 'kafka', 'keystore.pem')).mode & 0o077).toBe(0)
    expect(() => kafka.envFor('payment')).toThrow(/'payment' is not one of its principals/)
    expect(() => kafka.envFor('admin')).toThrow(/'admin' is not one of its principals/)
  })

  it('when started again on a running instance’s folder, or asked for the broker’s own names, then it refuses', async () => {
    const options = {
      dir: join(root, 'kafka'),
      ca,
      host: '127.0.0.1',
      ports: { sasl: 1, mtls: 2, controller: 3 },
      principals: ['order'],
    }
    await expect(startSecureKafka(options)).rejects.toThrow(/already runs/)
    await expect(
      startSecureKafka({ ...options, dir: join(root, 'x'), principals: ['admin'] }),
    ).rejects.toThrow(/the broker's own names/)
    await expect(
      startSecureKafka({ ...options, dir: join(root, 'x'), principals: ['Order;'] }),
    ).rejects.toThrow(/must match/)
  })

  it('when a folder formatted before is given a principal it was not formatted with, then it refuses to start', async () => {
    const dir = join(root, 'formatted')
    mkdirSync(join(dir, 'data'), { recursive: true })
    writeFileSync(join(dir, 'data', 'meta.properties'), 'version=1\n')
    writeFileSync(join(dir, 'scram-users.json'), '["admin","order"]\n')
    const options = { dir, ca, host: '127.0.0.1', ports: { sasl: 1, mtls: 2, controller: 3 } }
    await expect(startSecureKafka({ ...options, principals: ['order', 'payment'] })).rejects.toThrow(
      /payment is not among the SCRAM users .* was formatted with; remove that folder/,
    )
  })

  it('when scripts/infra provisions this broker with the administrator’s variables, then every declared topic is created', async () => {
    const lines: string[] = []
    const created = await provisionTopics(
      kafka.brokers.sasl,
      (line) => lines.push(line),
      kafkaSecurityOf('external', kafka.adminEnv()),
    )
    expect(created).toEqual(expandTopics(loadTopicDeclaration()).map((each) => each.name))
    expect(lines).toEqual([`kafka: created ${created.length} of ${created.length} topics (1 copy)`])
  })
})
