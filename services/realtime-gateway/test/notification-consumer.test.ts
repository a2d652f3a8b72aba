// The realtime-gateway's consumer on the real broker: notification.created, published on a topic of this file's own,
// becomes `notification:new` in its user's room of /notifications — on every instance of the channel, not only on the
// one whose consumer took the event. The first instance is built as main.ts builds it (its event backbone, with its
// consumer on this file's topic and group, registered by buildApp before it listens); the user is connected to the
// second. Tracing is registered (in memory) for the push span's test.
import { randomUUID } from 'node:crypto'
import { setTimeout as sleep } from 'node:timers/promises'
import { createDatabase } from '@meridian/db'
import { createEvent, createEventProducer, type EventProducer } from '@meridian/events'
import {
  accessToken,
  buildServiceTestApp,
  eventually,
  freshEventTopics,
  installTestTracing,
  parentIdOf,
  scaledMs,
  type TestEventTopics,
  type TestTracing,
  testKafka,
  tokenEnv,
  traceparentOf,
  uniqueName,
} from '@meridian/testkit'
import { SpanKind, trace } from '@opentelemetry/api'
import type { Socket } from 'socket.io-client'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildApp, serviceName } from '../src/app.ts'
import { loadRealtimeGatewayConfig } from '../src/config.ts'
import { migrateRealtimeGatewayDatabase } from '../src/migrations.ts'
import { allowedOrigin, connect, heard, type RealtimeInstance, startRealtime } from './support/realtime.ts'

let topics: TestEventTopics
let first: RealtimeInstance
let second: RealtimeInstance
let producer: EventProducer
let tracing: TestTracing
const sockets: Socket[] = []

/**
 * The first instance as main.ts makes it, with its consumer of notification.created on this file's topic and a group
 * of its own: the backbone is registered while the app is built, so it cannot be added to startRealtime's instance.
 */
async function startConsumingInstance(topic: string): Promise<RealtimeInstance> {
  const built = await buildServiceTestApp({
    service: serviceName,
    loadConfig: loadRealtimeGatewayConfig,
    env: {
      ...tokenEnv,
      REALTIME_ALLOWED_ORIGINS: allowedOrigin,
      REALTIME_REDIS_PREFIX: `${uniqueName('rt')}:`,
      NOTIFICATION_DISCOVERY_WAIT_MS: '500',
    },
    connect: (url) => createDatabase(url, { applicationName: `${serviceName}-test` }),
    migrate: (sql) => migrateRealtimeGatewayDatabase(sql),
    build: async (context) => {
      const service = await buildApp({
        ...context,
        events: {
          consumers: { group: uniqueName('realtime-gateway'), topics: { 'notification.created': topic } },
        },
      })
      context.onClose(async () => {
        for (const client of service.clients) if ('stop' in client) await client.stop()
      })
      return service
    },
  })
  await built.app.listen({ host: '127.0.0.1', port: 0 })
  const address = built.app.server.address()
  const port = typeof address === 'object' && address ? address.port : 0
  return Object.assign(built, { url: `http://127.0.0.1:${port}`, port })
}

beforeAll(async () => {
  tracing = installTestTracing()
  topics = await freshEventTopics('notification.created', 3, 1)
  first = await startConsumingInstance(topics.topic)
  second = await startRealtime({}, { sharing: first })
  producer = await createEventProducer(testKafka())
})

afterAll(async () => {
  for (const socket of sockets) socket.close()
  await producer?.disconnect()
  await second?.close()
  await first?.close()
  await topics?.delete()
  await tracing?.uninstall()
})

async function notificationsSocket(instance: RealtimeInstance, userId: string): Promise<Socket> {
  const socket = await connect(instance.url, '/notifications', { token: accessToken('user', userId) })
  sockets.push(socket)
  return socket
}

describe('notification.created → notification:new', () => {
  it("when notification.created is published for a user connected to the other instance, then that user's socket gets notification:new once, and another user gets nothing", async () => {
    const userId = randomUUID()
    const otherUserId = randomUUID()
    const socket = await notificationsSocket(second, userId)
    const bystander = await notificationsSocket(second, otherUserId)
    const bystanderOnFirst = await notificationsSocket(first, otherUserId)
    const received = heard(socket, 'notification:new')
    const strayOnSecond = heard(bystander, 'notification:new')
    const strayOnFirst = heard(bystanderOnFirst, 'notification:new')

    const data = {
      notificationId: randomUUID(),
      userId,
      type: 'order_placed',
      title: 'Order placed',
      message: 'Your order of 59.97 was placed.',
      createdAt: new Date().toISOString(),
    }
    const event = createEvent('notification.created', data, { source: 'notification' })
    await producer.publish([
      { topic: topics.topic, key: userId, value: JSON.stringify(event), headers: { 'message-id': event.id } },
    ])

    await eventually(
      'notification:new reaches the socket on the second instance',
      async () => received.length > 0,
    )
    // a moment for a duplicate (or a stray delivery) to show up
    await sleep(scaledMs(750))
    expect(received).toEqual([
      {
        id: data.notificationId,
        type: data.type,
        title: data.title,
        message: data.message,
        createdAt: data.createdAt,
      },
    ])
    expect(strayOnSecond).toEqual([])
    expect(strayOnFirst).toEqual([])
    expect(socket.connected).toBe(true)
  })

  it('when the same user has a socket on each instance, then both get notification:new', async () => {
    const userId = randomUUID()
    const onFirst = heard(await notificationsSocket(first, userId), 'notification:new')
    const onSecond = heard(await notificationsSocket(second, userId), 'notification:new')
    const data = {
      notificationId: randomUUID(),
      userId,
      type: 'welcome',
      title: 'Welcome to Meridian',
      message: 'Hello there.',
      createdAt: new Date().toISOString(),
    }
    const event = createEvent('notification.created', data, { source: 'notification' })
    await producer.publish([
      { topic: topics.topic, key: userId, value: JSON.stringify(event), headers: { 'message-id': event.id } },
    ])
    await eventually('both sockets have it', async () => onFirst.length > 0 && onSecond.length > 0)
    // a pause (scaled) before an absence is read: nothing can be waited for that does not come
    await sleep(scaledMs(500))
    const expected = {
      id: data.notificationId,
      type: 'welcome',
      title: 'Welcome to Meridian',
      message: 'Hello there.',
      createdAt: data.createdAt,
    }
    expect(onFirst).toEqual([expected])
    expect(onSecond).toEqual([expected])
  })

  it('when notification.created arrives with a trace context, then the push is a span of that trace, the child of the consumer span, naming the room by a hash', async () => {
    const userId = randomUUID()
    const received = heard(await notificationsSocket(second, userId), 'notification:new')
    const origin = trace.getTracer('notification-test').startSpan('notification.created publish')
    origin.end()
    const event = createEvent(
      'notification.created',
      {
        notificationId: randomUUID(),
        userId,
        type: 'order_shipped',
        title: 'Order shipped',
        message: 'On its way.',
        createdAt: new Date().toISOString(),
      },
      { source: 'notification' },
    )
    await producer.publish([
      {
        topic: topics.topic,
        key: userId,
        value: JSON.stringify(event),
        headers: { 'message-id': event.id, traceparent: traceparentOf(origin.spanContext()) },
      },
    ])
    await eventually('notification:new reaches the socket', async () => received.length > 0)

    const consumerSpanOf = () =>
      tracing
        .spans()
        .find(
          (span) => span.kind === SpanKind.CONSUMER && span.attributes['messaging.message.id'] === event.id,
        )
    await eventually('the consumer span ends', async () => consumerSpanOf() !== undefined)
    const consumerSpan = consumerSpanOf()
    if (!consumerSpan) throw new Error('no consumer span')
    expect(parentIdOf(consumerSpan)).toBe(origin.spanContext().spanId)
    const push = tracing
      .spans()
      .find(
        (span) =>
          span.name === 'notification:new push' && parentIdOf(span) === consumerSpan.spanContext().spanId,
      )
    if (!push) throw new Error('no push span under the consumer span')
    expect(push.spanContext().traceId).toBe(origin.spanContext().traceId)
    expect(push.kind).toBe(SpanKind.PRODUCER)
    expect(push.attributes['meridian.realtime.room_hash']).toMatch(/^[0-9a-f]{16}$/)
    expect(push.attributes['meridian.notification.type']).toBe('order_shipped')
    // the user's id is in no attribute of the push
    expect(JSON.stringify(push.attributes)).not.toContain(userId)
  })
})
