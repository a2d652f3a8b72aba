// This package's clients on a secure Kafka of their own (infra's startSecureKafka: SASL_SSL with SCRAM-SHA-512, TLS from
// a CA made for the file): createKafka and createEventProducer made from the variables a service is given, the backbone
// registerServiceEvents opens from a service's configuration, and `scripts/events replay`, which reads them too.
import { execFile } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { freePort, scaledMs } from '@meridian/infra'
import { certificateAuthority, type SecureKafkaInstance, startSecureKafka } from '@meridian/infra/secure'
import { kafkaSecurityFromEnv } from '@meridian/kafka-connection'
import Fastify from 'fastify'
import type { Kafka } from 'kafkajs'
import { Registry } from 'prom-client'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createEventProducer, createKafka } from '../src/kafka.ts'
import { deadLetterTopicOf, retryTopicOf } from '../src/retry.ts'
import { consumersOf, registerServiceEvents } from '../src/service-events.ts'
import {
  applyEffect,
  type EffectsDatabase,
  effectsDatabase,
  keyOf,
  orderCompleted,
  publishEvents,
  waitFor,
} from './consumer-fixtures.ts'

const root = mkdtempSync(join(tmpdir(), 'meridian-events-secure-kafka-'))
let kafka: SecureKafkaInstance
let database: EffectsDatabase
const topic = 'secure.order.completed'
const eventsScript = fileURLToPath(new URL('../../../scripts/events', import.meta.url))

/** A client as a service makes one from its variables. */
const clientFor = (env: Record<string, string>, clientId: string): Kafka =>
  createKafka({ brokers: env.KAFKA_BROKERS ?? '', clientId, ...kafkaSecurityFromEnv(env) })

beforeAll(async () => {
  const ports = new Set<number>()
  while (ports.size < 3) ports.add(await freePort())
  const [sasl = 0, mtls = 0, controller = 0] = ports
  kafka = await startSecureKafka({
    dir: join(root, 'kafka'),
    ca: await certificateAuthority(join(root, 'ca')),
    host: '127.0.0.1',
    ports: { sasl, mtls, controller },
    principals: ['order', 'widgets'],
  })
  database = await effectsDatabase()
  // the administrator creates the topics, as provisioning does
  const admin = clientFor(kafka.adminEnv(), 'events-secure-admin').admin()
  await admin.connect()
  try {
    // the event topic with its retry and dead-letter topics, as infra/topics.json declares each
    const names = [
      topic,
      ...[1, 2, 3].map((attempt) => retryTopicOf(topic, attempt)),
      deadLetterTopicOf(topic),
    ]
    await admin.createTopics({ topics: names.map((name) => ({ topic: name, numPartitions: 1 })) })
    await waitFor('the topics to have leaders', async () => {
      const { topics } = await admin.fetchTopicMetadata({ topics: names })
      return topics.every((each) => each.partitions.every((partition) => partition.leader >= 0))
    })
  } finally {
    await admin.disconnect()
  }
}, scaledMs(240_000))

afterAll(async () => {
  await database?.drop()
  await kafka?.stop()
  rmSync(root, { recursive: true, force: true })
}, scaledMs(60_000))

describe('events on a secure Kafka (SASL_SSL, SCRAM-SHA-512)', () => {
  it('when a service’s client is made from its variables, then its event producer publishes and a consumer reads it back', async () => {
    const client = clientFor(kafka.envFor('order'), 'events-secure-order')
    const producer = await createEventProducer(client)
    const event = orderCompleted()
    try {
      await publishEvents(producer, topic, [event])
    } finally {
      await producer.disconnect()
    }
    const consumer = client.consumer({ groupId: 'events-secure-read' })
    const keys: string[] = []
    await consumer.connect()
    try {
      await consumer.subscribe({ topic, fromBeginning: true })
      await consumer.run({
        eachMessage: async ({ message }) => {
          keys.push(message.key?.toString() ?? '')
        },
      })
      await waitFor('the event read back', () => keys.includes(keyOf(event)))
    } finally {
      await consumer.disconnect()
    }
  })

  it('when a service registers its backbone with its configuration, then its consumer applies an event from the secure broker', async () => {
    const app = Object.assign(Fastify(), { metrics: { registry: new Registry() } })
    // a service's configuration holds the variables, KAFKA_TLS loaded as a boolean
    const config = { ...kafka.envFor('widgets'), KAFKA_TLS: true, KAFKA_NAMESPACE: '' }
    const group = 'widgets-secure'
    await registerServiceEvents(app, {
      service: 'widgets',
      config: { ...config, KAFKA_BROKERS: kafka.brokers.sasl },
      sql: database.sql,
      events: { consumers: { group, topics: { 'order.completed': topic } }, relay: false },
      consumers: (options) =>
        consumersOf('widgets', { 'order.completed': (event, tx) => applyEffect(tx, event) }, options),
    })
    await app.ready()
    try {
      const producer = await createEventProducer(clientFor(kafka.envFor('order'), 'events-secure-publisher'))
      const event = orderCompleted()
      try {
        await publishEvents(producer, topic, [event])
      } finally {
        await producer.disconnect()
      }
      await waitFor('the effect applied', async () => (await database.effectCounts()).get(event.id) === 1)
    } finally {
      await app.close()
    }
  })

  it('when a service’s password is wrong, then its producer does not connect: authentication failed', async () => {
    const env = { ...kafka.envFor('order'), KAFKA_SASL_PASSWORD: 'not-the-password' }
    await expect(createEventProducer(clientFor(env, 'events-secure-wrong'))).rejects.toThrow(
      /authentication failed/i,
    )
  })

  it('when a service’s variables describe no client that could connect, then registering its backbone fails naming them', async () => {
    const app = Object.assign(Fastify(), { metrics: { registry: new Registry() } })
    const config = {
      KAFKA_BROKERS: kafka.brokers.sasl,
      KAFKA_NAMESPACE: '',
      KAFKA_TLS_CA: join(root, 'no-such-ca.pem'),
      KAFKA_SASL_MECHANISM: 'scram-sha-512',
    }
    await expect(
      registerServiceEvents(app, { service: 'widgets', config, sql: database.sql, events: true }),
    ).rejects.toThrow(
      /KAFKA_TLS_CA: cannot read ".*no-such-ca\.pem" \(ENOENT\)[\s\S]*KAFKA_SASL_USERNAME is not set/,
    )
    await app.close()
  })

  it('when `scripts/events replay` is given a service’s variables, then it reads the dead-letter topic over SASL_SSL; given a bad mechanism, it stops naming it', async () => {
    const run = (env: Record<string, string>) =>
      promisify(execFile)(eventsScript, ['replay', deadLetterTopicOf(topic)], {
        env: { ...process.env, ...env },
      })
    expect((await run(kafka.envFor('order'))).stdout).toBe(
      `${deadLetterTopicOf(topic)}: nothing to replay (it holds no events: none was dead-lettered)\n`,
    )
    const failed = await run({ ...kafka.envFor('order'), KAFKA_SASL_MECHANISM: 'gssapi' }).then(
      () => undefined,
      (error: { code?: number; stderr?: string }) => error,
    )
    expect(failed?.code).toBe(1)
    expect(failed?.stderr).toContain(
      'KAFKA_SASL_MECHANISM: must be one of scram-sha-512, scram-sha-256, plain',
    )
    expect(failed?.stderr).not.toContain(kafka.envFor('order').KAFKA_SASL_PASSWORD)
  })
})
