// Creating a user publishes user.registered through the outbox: atomically with the user, never with the password.
import { randomUUID } from 'node:crypto'
import {
  createEventMetrics,
  createEventProducer,
  createKafka,
  createOutboxRelay,
  type EventProducer,
} from '@meridian/events'
import { infraEndpoints, uniqueName } from '@meridian/testkit'
import type { Consumer } from 'kafkajs'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type AuthTestApp, buildAuthTestApp } from './auth-app.ts'

const json = { 'content-type': 'application/json' }

describe('auth: user.registered', () => {
  let auth: AuthTestApp
  let producer: EventProducer
  let consumer: Consumer
  const received: { key: string; value: Record<string, unknown>; messageId: string }[] = []

  beforeAll(async () => {
    auth = await buildAuthTestApp()
    const kafka = createKafka({ brokers: infraEndpoints().kafkaBrokers, clientId: uniqueName('auth-test') })
    producer = await createEventProducer(kafka)
    consumer = kafka.consumer({ groupId: uniqueName('auth-registered') })
    const joined = new Promise((resolve) => consumer.on(consumer.events.GROUP_JOIN, resolve))
    await consumer.connect()
    // the shared catalogue topic: only this file's users are looked at
    await consumer.subscribe({ topic: 'user.registered', fromBeginning: false })
    await consumer.run({
      eachMessage: async ({ message }) => {
        received.push({
          key: message.key?.toString() ?? '',
          value: JSON.parse(message.value?.toString() ?? '{}'),
          messageId: message.headers?.['message-id']?.toString() ?? '',
        })
      },
    })
    await joined // the group holds its partitions before anything is published
  })
  afterAll(async () => {
    await consumer?.disconnect()
    await producer?.disconnect()
    await auth.close()
  })

  it('when a user is created, then one user.registered row is written with it, and the relay publishes it keyed by the user id without the password', async () => {
    const password = `pw-${randomUUID()}`
    const response = await auth.app.inject({
      method: 'POST',
      url: '/api/v1/users',
      headers: json,
      payload: {
        name: 'Evented',
        email: `evented.${randomUUID().slice(0, 8)}@example.com`,
        password,
        age: 30,
      },
    })
    expect(response.statusCode).toBe(201)
    const user = response.json()
    const rows = await auth.sql<
      { eventType: string; aggregateId: string; payload: Record<string, unknown> }[]
    >`
      select event_type, aggregate_id, payload from outbox`
    expect(rows).toHaveLength(1)
    expect(rows[0]).toMatchObject({ eventType: 'user.registered', aggregateId: user.id })
    expect(JSON.stringify(rows[0]?.payload)).not.toContain(password)

    const relay = createOutboxRelay({
      sql: auth.sql,
      producer,
      logger: auth.app.log,
      metrics: createEventMetrics(auth.app.metrics.registry),
    })
    await relay.start()
    try {
      await expect.poll(() => received.filter((r) => r.key === user.id).length).toBe(1)
      const [message] = received.filter((r) => r.key === user.id)
      expect(message?.value).toMatchObject({
        type: 'user.registered',
        source: 'auth',
        schemaVersion: '1.1.0',
        data: { userId: user.id, email: user.email, name: 'Evented', role: 'user', status: 'active' },
      })
      expect(message?.messageId).toMatch(/^outbox-\d+$/)
      expect(JSON.stringify(message?.value)).not.toContain(password)
      await expect.poll(async () => (await auth.sql`select count(*)::int as n from outbox`)[0]?.n).toBe(0)

      // the chassis /metrics shows the event metrics
      const metrics = await auth.app.inject({ method: 'GET', url: '/metrics?format=prometheus' })
      expect(metrics.body).toMatch(/events_published_total\{topic="user.registered",service="auth"\} [1-9]/)
      expect(metrics.body).toContain('outbox_pending_rows')
      expect(metrics.body).toContain('outbox_lag_seconds')
    } finally {
      await relay.stop()
    }
  })

  it('when creating a user fails (a taken email), then no event is written', async () => {
    const email = `taken.${randomUUID().slice(0, 8)}@example.com`
    const body = { name: 'First', email, password: 'long enough pw', age: 30 }
    expect(
      (await auth.app.inject({ method: 'POST', url: '/api/v1/users', headers: json, payload: body }))
        .statusCode,
    ).toBe(201)
    const before = (await auth.sql`select count(*)::int as n from outbox`)[0]?.n
    const again = await auth.app.inject({
      method: 'POST',
      url: '/api/v1/users',
      headers: json,
      payload: { ...body, name: 'Second' },
    })
    expect(again.statusCode).toBe(409)
    expect((await auth.sql`select count(*)::int as n from outbox`)[0]?.n).toBe(before)
  })
})
