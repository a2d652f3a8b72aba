// A mail given up, on the dead-letter topic, on real PostgreSQL, Kafka and Mailpit: with one attempt allowed and the
// SMTP server a closed port, the mail goes dead and, from the same transaction, its notification.email_requested
// reaches notification.email_requested.dlt (in this file's KAFKA_NAMESPACE) through the outbox and the relay of the
// app's own backbone, read back by a Kafka consumer with the dead-letter headers, and counted by the operators'
// listing. Then the port leads to the development Mailpit, the dead letter is replayed as the gateway's operator
// route replays it, the consumer makes the mail pending again, and it is sent once — a second replay of it sends none.
import { randomUUID } from 'node:crypto'
import { createKafka, headerText, listDeadLetterTopics, replayDeadLetters } from '@meridian/events'
import {
  captureLogs,
  eventually,
  infraEndpoints,
  type MailpitEngine,
  mailpitEngine,
  namedTopics,
  type TestTopics,
  tokenEnv,
  uniqueName,
} from '@meridian/testkit'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildApp, type NotificationService } from '../src/app.ts'
import { buildNotificationTestApp, type NotificationTestApp } from './support/app.ts'
import { closedPort, deliveriesOf, handle, relay } from './support/email.ts'
import { messagesTo } from './support/mailpit.ts'
import { orderPlaced } from './support/notifications.ts'

const namespace = `${uniqueName('maildlt')}.`
const requested = `${namespace}notification.email_requested`
const deadLetterTopic = `${requested}.dlt`

const group = uniqueName('notification')
const kafka = () => createKafka({ brokers: infraEndpoints().kafkaBrokers, clientId: uniqueName('mail-dlt') })
const quiet = { info: () => {}, warn: () => {} }

/** How many messages of notification.email_requested the backbone's consumer has committed. */
async function consumed(): Promise<number> {
  const admin = kafka().admin()
  await admin.connect()
  try {
    // the service's one Kafka group, the namespaced group itself, whatever topics it reads
    const [offsets] = await admin.fetchOffsets({ groupId: `${namespace}${group}`, topics: [requested] })
    return (offsets?.partitions ?? []).reduce((sum, { offset }) => sum + Math.max(0, Number(offset)), 0)
  } finally {
    await admin.disconnect()
  }
}

/** A message as read: its key and value as text, its headers as Kafka gives them. */
interface Read {
  key: string | undefined
  value: string
  headers: Parameters<typeof headerText>[0]
}

/** The messages of the dead-letter topic, read from its beginning by a consumer of its own until `enough` holds. */
async function readDeadLetterTopic(enough: (read: Read[]) => boolean): Promise<Read[]> {
  const read: Read[] = []
  const consumer = kafka().consumer({ groupId: uniqueName('mail-dlt-reader'), maxWaitTimeInMs: 100 })
  await consumer.connect()
  try {
    await consumer.subscribe({ topics: [deadLetterTopic], fromBeginning: true })
    await consumer.run({
      eachMessage: async ({ message }) => {
        read.push({
          key: message.key?.toString(),
          value: message.value?.toString() ?? '',
          headers: message.headers,
        })
      },
    })
    await eventually('the dead letters are read', () => enough(read))
    return read
  } finally {
    await consumer.disconnect()
  }
}

describe('a dead mail on the dead-letter topic, and its replay', () => {
  let mailpit: MailpitEngine
  let port: number
  let notification: NotificationTestApp
  let backbone: NotificationService
  let topics: TestTopics
  let stopRelay: (() => Promise<void>) | undefined
  const address = `dead.${randomUUID().slice(0, 12)}@example.com`
  const placed = orderPlaced({ customerEmail: address })

  beforeAll(async () => {
    mailpit = await mailpitEngine()
    port = await closedPort()
    topics = await namedTopics([
      `${namespace}notification.created`,
      requested,
      ...[1, 2, 3].map((retry) => `${requested}.retry.${retry}`),
      deadLetterTopic,
    ])
    notification = await buildNotificationTestApp({
      ...tokenEnv,
      SMTP_URL: `smtp://127.0.0.1:${port}`,
      MAIL_FROM: 'Meridian Test <no-reply@meridian.test>',
      EMAIL_SEND_INTERVAL_MS: '600000',
      EMAIL_MAX_ATTEMPTS: '1',
      MAIL_SEND_TIMEOUT_MS: '5000',
      KAFKA_NAMESPACE: namespace,
    })
    // the app's backbone on the same database: the relay publishes the outbox under the namespace, and the consumer
    // of notification.email_requested runs (the other consumers are not this file's)
    backbone = await buildApp({
      config: notification.config,
      sql: notification.sql,
      redis: notification.redis,
      logStream: captureLogs().stream,
      events: {
        consumers: {
          group,
          types: ['notification.email_requested'],
          retryDelaysMs: [200, 200, 200],
        },
      },
    })
    await backbone.app.ready()
  })

  afterAll(async () => {
    await stopRelay?.()
    await backbone?.app.close()
    await notification?.close()
    await topics?.delete()
  })

  it('when the only send fails, then the mail is dead and its notification.email_requested is on the .dlt with the dead-letter headers', async () => {
    await handle(notification, placed)
    expect(await notification.emailSender.round()).toEqual({ sent: 0, retried: 0, dead: 1, removed: 0 })
    const [row] = await deliveriesOf(notification, placed.data.customerId)
    expect(row).toMatchObject({ status: 'dead', attempts: 1 })

    const [message, ...more] = await readDeadLetterTopic((read) => read.length >= 1)
    expect(more).toEqual([])
    expect(JSON.parse(message?.value ?? '')).toMatchObject({
      type: 'notification.email_requested',
      source: 'notification',
      data: {
        notificationId: row?.notificationId,
        userId: placed.data.customerId,
        type: 'order_placed',
        attempts: 1,
      },
    })
    expect(message?.key).toBe(placed.data.customerId)
    const header = (name: string) => headerText(message?.headers, name)
    expect(header('original-topic')).toBe(requested)
    expect(header('consumer-group')).toBe(`${namespace}notification`)
    expect(header('retry-count')).toBe('1')
    expect(header('error-message')).toBe(row?.lastError)
    expect(Date.parse(header('dead-lettered-at') ?? '')).not.toBeNaN()
    expect(header('message-id')).toMatch(/^outbox-\d+$/)
    // the operators' listing (the gateway's GET /api/v1/admin/dead-letters) counts it as not replayed
    const listed = await listDeadLetterTopics({
      kafka: kafka(),
      namespace,
      of: ['notification.email_requested'],
    })
    expect(listed).toEqual([{ topic: deadLetterTopic, originalTopic: requested, total: 1, pending: 1 }])
  })

  it('when its dead letter is replayed with the SMTP server back, then the mail is pending again and sent once; replayed again, none more', async () => {
    const target = new URL(mailpit.smtpUrl)
    stopRelay = await relay(port, { host: target.hostname, port: Number(target.port || 25) })
    expect(await replayDeadLetters({ kafka: kafka(), topic: deadLetterTopic, logger: quiet })).toMatchObject({
      replayed: 1,
      to: { [requested]: 1 },
    })
    await eventually('the mail is sent', async () => {
      await notification.emailSender.round()
      return (await deliveriesOf(notification, placed.data.customerId))[0]?.status === 'sent'
    })
    expect(await messagesTo(mailpit.mailbox, address)).toHaveLength(1)

    // every event it holds, again: the consumer's inbox knows the event, and a sent mail stays sent
    await replayDeadLetters({ kafka: kafka(), topic: deadLetterTopic, logger: quiet, from: 'beginning' })
    await eventually('the second replay is consumed', async () => (await consumed()) === 2)
    await notification.emailSender.round()
    const arrived = await messagesTo(mailpit.mailbox, address)
    expect(arrived).toHaveLength(1)
    expect((await deliveriesOf(notification, placed.data.customerId))[0]).toMatchObject({ status: 'sent' })
    await mailpit.mailbox.remove(arrived.map((each) => each.id))
  })
})
