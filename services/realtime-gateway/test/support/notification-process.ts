// The notification service as the realtime channel meets it in production: a process of its own (its main.ts under
// tsx), on a fresh database, registered in Consul under a name of this test's own, consuming from a Kafka namespace of
// its own (KAFKA_NAMESPACE) and verifying the same HS256 test tokens. A service never imports another one (tests
// included): this only starts it and talks to it over HTTP and Kafka, as the gateway does.
//
// @meridian/infra/system's spawnService does the same, but @meridian/infra is not a dependency of
// realtime-gateway; until it is, the process is spawned here, and stopped by the pid recorded at its start.
import { type ChildProcess, spawn } from 'node:child_process'
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { EventType } from '@meridian/contracts'
import { type CatalogueEvent, createEventProducer } from '@meridian/events'
import {
  freshDatabase,
  passingInConsul,
  scaledMs,
  serviceProcessEnv,
  testKafka,
  uniqueName,
} from '@meridian/testkit'

/** The event types notification consumes (each with .retry.1..3 and .dlt) and the one it publishes. */
const consumedTypes = [
  'order.placed',
  'payment.failed',
  'shipment.created',
  'shipment.delivered',
  'user.registered',
  'user.profile_changed',
  'user.removed',
  'return.requested',
  'return.received',
  'return.completed',
  'return.rejected',
  'exchange.requested',
  'exchange.awaiting_goods',
  'exchange.completed',
  'exchange.failed',
  // an operator's replay of a dead mail (notification's own dead letters)
  'notification.email_requested',
] as const
const publishedTypes = ['notification.created'] as const
const retries = 3

const notificationDir = fileURLToPath(new URL('../../../notification', import.meta.url))

export interface NotificationProcess {
  pid: number
  baseUrl: string
  /** its name in Consul: NOTIFICATION_SERVICE_NAME of the realtime instances that call it */
  consulName: string
  /** its KAFKA_NAMESPACE: its topics are `${namespace}${eventType}` */
  namespace: string
  /** publishes a catalogue event on the namespace's topic of its type, keyed by `key` */
  publish(event: CatalogueEvent<EventType>, key: string): Promise<void>
  /** the last lines it logged */
  logTail(lines?: number): string
  /** SIGTERM (it drains and leaves Consul), SIGKILL after 15 s; then its database, topics and groups go */
  stop(): Promise<void>
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer()
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const address = server.address()
      const port = typeof address === 'object' && address ? address.port : 0
      server.close(() => resolve(port))
    })
  })
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

async function until(what: string, check: () => Promise<boolean>, timeoutMs: number, alive: () => boolean) {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    if (!alive()) throw new Error(`${what}: the notification process exited`)
    if (await check().catch(() => false)) return
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`)
    await sleep(200)
  }
}

async function createNamespaceTopics(namespace: string): Promise<string[]> {
  const names = [
    ...consumedTypes.flatMap((type) => [
      `${namespace}${type}`,
      ...Array.from({ length: retries }, (_, i) => `${namespace}${type}.retry.${i + 1}`),
      `${namespace}${type}.dlt`,
    ]),
    ...publishedTypes.map((type) => `${namespace}${type}`),
  ]
  const admin = testKafka().admin()
  await admin.connect()
  try {
    await admin.createTopics({
      waitForLeaders: false,
      topics: names.map((topic) => ({ topic, numPartitions: 1, replicationFactor: 1 })),
    })
    await until(
      'the namespace topics have leaders',
      async () => {
        const { topics } = await admin.fetchTopicMetadata({ topics: names })
        return topics.every((topic) => topic.partitions.length === 1 && topic.partitions[0]!.leader >= 0)
      },
      scaledMs(30_000),
      () => true,
    )
  } finally {
    await admin.disconnect()
  }
  return names
}

async function deleteNamespace(namespace: string, topics: string[]): Promise<void> {
  const admin = testKafka().admin()
  await admin.connect()
  try {
    const { groups } = await admin.listGroups()
    const own = groups.map((group) => group.groupId).filter((groupId) => groupId.startsWith(namespace))
    // a group whose member the coordinator has not seen leave yet is left for Kafka to expire
    if (own.length > 0) await admin.deleteGroups(own).catch(() => {})
    await admin.deleteTopics({ topics, timeout: 30_000 })
  } finally {
    await admin.disconnect()
  }
}

function exitOf(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve()
    else child.once('exit', () => resolve())
  })
}

/** Starts the notification process and resolves once it is ready and passing in Consul. */
export async function startNotificationProcess(): Promise<NotificationProcess> {
  const namespace = `${uniqueName('rtn')}.`
  const consulName = uniqueName('notification')
  const logDir = mkdtempSync(join(tmpdir(), 'realtime-notification-'))
  const logFile = join(logDir, 'notification.log')
  const logTail = (lines = 40) => {
    try {
      return readFileSync(logFile, 'utf8').trimEnd().split('\n').slice(-lines).join('\n')
    } catch {
      return ''
    }
  }

  const done: (() => Promise<unknown>)[] = []
  const undo = async () => {
    for (const step of done.reverse()) await step().catch(() => {})
  }
  try {
    const topics = await createNamespaceTopics(namespace)
    done.push(() => deleteNamespace(namespace, topics))
    const database = await freshDatabase('notification')
    done.push(() => database.drop())
    const port = await freePort()
    const log = openSync(logFile, 'a')
    // node --import tsx: one process, whose pid is the service's own
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
      cwd: notificationDir,
      env: {
        ...serviceProcessEnv({ databaseUrl: database.url, consulName }),
        HOST: '127.0.0.1',
        PORT: String(port),
        SERVICE_HOST: '127.0.0.1',
        KAFKA_NAMESPACE: namespace,
      },
      stdio: ['ignore', log, log],
    })
    closeSync(log)
    const pid = child.pid
    if (pid === undefined) throw new Error('the notification process did not start')
    const exited = exitOf(child)
    const alive = () => child.exitCode === null && child.signalCode === null
    done.push(async () => {
      if (!alive()) return
      process.kill(pid, 'SIGTERM')
      const killer = setTimeout(() => alive() && process.kill(pid, 'SIGKILL'), 15_000)
      await exited
      clearTimeout(killer)
    })
    const baseUrl = `http://127.0.0.1:${port}`
    await until(
      `notification is ready (${baseUrl}/health/ready)`,
      async () =>
        (await fetch(`${baseUrl}/health/ready`, { signal: AbortSignal.timeout(2000) })).status === 200,
      scaledMs(90_000),
      alive,
    )
    await until(`${consulName} passes in Consul`, () => passingInConsul(consulName), scaledMs(30_000), alive)
    const started = await createEventProducer(testKafka())
    done.push(() => started.disconnect())

    let stopping: Promise<void> | undefined
    return {
      pid,
      baseUrl,
      consulName,
      namespace,
      publish: (event, key) =>
        started.publish([
          {
            topic: `${namespace}${event.type}`,
            key,
            value: JSON.stringify(event),
            headers: { 'message-id': event.id },
          },
        ]),
      logTail,
      stop() {
        stopping ??= (async () => {
          await undo()
          rmSync(logDir, { recursive: true, force: true })
        })()
        return stopping
      },
    }
  } catch (error) {
    const tail = logTail()
    await undo()
    rmSync(logDir, { recursive: true, force: true })
    throw new Error(
      `${error instanceof Error ? error.message : String(error)}\n--- notification's log ---\n${tail}`,
    )
  }
}
