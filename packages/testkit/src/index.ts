// What tests need: the real infrastructure's endpoints and per-file isolation on it, so that test files can run in
// parallel without seeing each other's rows, messages, keys or services.
import { randomBytes } from 'node:crypto'
import { Writable } from 'node:stream'
import { consulBaseUrl, databaseUrl, type Endpoints, kafkaClient } from '@meridian/infra'
import { Redis } from 'ioredis'
import type { Kafka } from 'kafkajs'
import postgres from 'postgres'
import { inject } from 'vitest'
import './provided-context.ts'

export type { Endpoints } from '@meridian/infra'

/** Endpoints provided by the global setup (`@meridian/testkit/global-setup`). */
export function infraEndpoints(): Endpoints {
  const provided = inject('infra')
  if (!provided) {
    throw new Error(
      "no infrastructure endpoints: add globalSetup: ['@meridian/testkit/global-setup'] to this workspace's vitest config",
    )
  }
  return provided
}

/**
 * A name no other test file or run will choose: `<prefix>-<time>-<random>`, lower case.
 * Use it for topics, consumer groups, Consul services, Redis channels.
 */
export function uniqueName(prefix: string): string {
  return `${prefix}-${Date.now().toString(36)}-${randomBytes(4).toString('hex')}`.toLowerCase()
}

export interface TestDatabase {
  name: string
  url: string
  /** a postgres.js client on this database (closed by drop) */
  sql: postgres.Sql
  drop(): Promise<void>
}

/** A new, empty database of its own on the real server; drop() removes it. */
export async function freshDatabase(label = 'test'): Promise<TestDatabase> {
  const serverUrl = infraEndpoints().databaseUrl
  const name = uniqueName(`t_${label}`)
    .replace(/[^a-z0-9_]/g, '_')
    .slice(0, 63)
  const admin = postgres(serverUrl, { max: 1, onnotice: () => {} })
  try {
    await admin`create database ${admin(name)}`
  } finally {
    await admin.end({ timeout: 5 })
  }
  const url = databaseUrl(serverUrl, name)
  const sql = postgres(url, { max: 4, onnotice: () => {} })
  return {
    name,
    url,
    sql,
    async drop() {
      await sql.end({ timeout: 5 })
      const dropper = postgres(serverUrl, { max: 1, onnotice: () => {} })
      try {
        await dropper`drop database if exists ${dropper(name)} with (force)`
      } finally {
        await dropper.end({ timeout: 5 })
      }
    },
  }
}

export function testKafka(clientId = uniqueName('test-client')): Kafka {
  return kafkaClient(infraEndpoints().kafkaBrokers, clientId)
}

export interface TestTopics {
  /** the unique name created for each requested base name */
  names: Record<string, string>
  delete(): Promise<void>
}

/** Creates topics and waits until every partition has a leader (retrying metadata while the broker catches up). */
async function createTopicsAndWait(names: string[], partitions: number): Promise<void> {
  const admin = testKafka().admin()
  await admin.connect()
  try {
    await admin.createTopics({
      waitForLeaders: false,
      topics: names.map((topic) => ({ topic, numPartitions: partitions, replicationFactor: 1 })),
    })
    const deadline = Date.now() + 30_000
    for (;;) {
      try {
        const { topics } = await admin.fetchTopicMetadata({ topics: names })
        const ready = topics.every(
          (topic) => topic.partitions.length === partitions && topic.partitions.every((p) => p.leader >= 0),
        )
        if (ready) return
      } catch (error) {
        // "does not host this topic-partition" / unknown topic: metadata not propagated yet
        if (Date.now() > deadline) throw error
      }
      if (Date.now() > deadline) throw new Error(`topics ${names.join(', ')} have no leaders after 30 s`)
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
  } finally {
    await admin.disconnect()
  }
}

async function deleteTopics(names: string[]): Promise<void> {
  const cleaner = testKafka().admin()
  await cleaner.connect()
  try {
    await cleaner.deleteTopics({ topics: names })
  } finally {
    await cleaner.disconnect()
  }
}

/** Topics of this test file only (automatic creation is off on the broker, so they are created here). */
export async function freshTopics(baseNames: string[], partitions = 3): Promise<TestTopics> {
  const names = Object.fromEntries(baseNames.map((base) => [base, uniqueName(base)]))
  await createTopicsAndWait(Object.values(names), partitions)
  return { names, delete: () => deleteTopics(Object.values(names)) }
}

export interface TestEventTopics {
  /** the main topic; the others are `${topic}.retry.1..n` and `${topic}.dlt`, as the consumer runner expects */
  topic: string
  retryTopics: string[]
  deadLetterTopic: string
  delete(): Promise<void>
}

/** A unique event topic with its retry and dead-letter topics, like infra/topics.json declares for real ones. */
export async function freshEventTopics(base: string, retries = 3, partitions = 3): Promise<TestEventTopics> {
  const topic = uniqueName(base)
  const retryTopics = Array.from({ length: retries }, (_, i) => `${topic}.retry.${i + 1}`)
  const deadLetterTopic = `${topic}.dlt`
  const all = [topic, ...retryTopics, deadLetterTopic]
  await createTopicsAndWait(all, partitions)
  return { topic, retryTopics, deadLetterTopic, delete: () => deleteTopics(all) }
}

export interface TestRedis {
  /** a client whose keys all carry this file's prefix */
  redis: Redis
  prefix: string
  /** deletes this file's keys and closes the client */
  cleanup(): Promise<void>
}

export function freshRedis(label = 'test'): TestRedis {
  const prefix = `${uniqueName(label)}:`
  const redis = new Redis(infraEndpoints().redisUrl, { keyPrefix: prefix, lazyConnect: false })
  return {
    redis,
    prefix,
    async cleanup() {
      const raw = new Redis(infraEndpoints().redisUrl)
      try {
        let cursor = '0'
        do {
          const [next, keys] = await raw.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 500)
          if (keys.length > 0) await raw.del(...keys)
          cursor = next
        } while (cursor !== '0')
      } finally {
        raw.disconnect()
        redis.disconnect()
      }
    },
  }
}

/** Consul's HTTP API base URL, with the ACL token header when one is configured. */
export function consulApi(): { baseUrl: string; headers: Record<string, string> } {
  const { consulHttpAddr, consulToken } = infraEndpoints()
  return {
    baseUrl: consulBaseUrl(consulHttpAddr),
    headers: consulToken ? { 'X-Consul-Token': consulToken } : {},
  }
}

export interface LogCapture {
  /** a pino destination: pass it as the app's log stream */
  stream: Writable
  /** every line logged so far, parsed */
  lines: Record<string, unknown>[]
}

/** Collects what an app logs, so a test can assert on it (what was logged, and what never was). */
export function captureLogs(): LogCapture {
  const lines: Record<string, unknown>[] = []
  const stream = new Writable({
    write(chunk, _encoding, done) {
      for (const line of chunk.toString().split('\n').filter(Boolean)) lines.push(JSON.parse(line))
      done()
    },
  })
  return { stream, lines }
}
