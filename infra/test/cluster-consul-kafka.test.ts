// Consul servers, Kafka nodes and Redis across three hosts (network namespaces on this machine): one catalog seen from
// every agent, a leader kept when a host loses power, acks=all writes and a consumer group that outlive the broker
// leading most partitions, Redis' primary replaced by its replica when it dies, and the lost members rejoining. Every
// engine runs secure, as the cluster campaign's do: Consul with ACLs (a token per service), HTTPS and mutual TLS
// between servers, Kafka SASL_SSL with a SCRAM user per service, Redis TLS only with an ACL user per service, from a
// CA made here. Needs root; brings everything up on prefix mrdck.
import { randomUUID } from 'node:crypto'
import { existsSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { kafkajsSecurity, kafkaSecurityFromEnv } from '@meridian/kafka-connection'
import { Redis } from 'ioredis'
import { type Consumer, Kafka, logLevel, type Producer } from 'kafkajs'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type ConsulCluster, startConsulCluster } from '../src/cluster/consul-cluster.ts'
import type { HostEngine } from '../src/cluster/engine.ts'
import { createHosts, existingNamespaces, type Hosts } from '../src/cluster/hosts.ts'
import { clusterReplication, type KafkaCluster, startKafkaCluster } from '../src/cluster/kafka-cluster.ts'
import { patroniConsulRules } from '../src/cluster/postgres-cluster.ts'
import { type ClusterRedis, startClusterRedis } from '../src/cluster/redis.ts'
import { consulCall, consulRequest } from '../src/consul-http.ts'
import { provisionTopics } from '../src/index.ts'
import { layoutFromEnv } from '../src/layout.ts'
import { replicationOf } from '../src/native/redis-sentinel.ts'
import { kafkaCluster, redisVersion, replicationForBrokers } from '../src/probes.ts'
import { isAlive } from '../src/processes.ts'
import { certificateAuthority } from '../src/secure/certificates.ts'
import { createNamespaceTopics } from '../src/system/kafka-namespace.ts'
import { scaledMs } from '../src/test-time.ts'
import { eventually } from './eventually.ts'

const prefix = 'mrdck'
const subnet = '198.18.2'

describe('Consul, Kafka and Redis clustered on three hosts', () => {
  let hosts: Hosts
  let consul: ConsulCluster
  let kafka: KafkaCluster
  let redis: ClusterRedis
  let caFile: string
  const namespace = `ck-${randomUUID().slice(0, 8)}.`
  let topics: string[] = []

  beforeAll(async () => {
    hosts = await createHosts({ prefix, subnet })
    const [h1, h2] = hosts.hosts as [(typeof hosts.hosts)[0], (typeof hosts.hosts)[0]]
    const secureDir = join(layoutFromEnv().componentDir('cluster'), prefix, 'secure')
    rmSync(secureDir, { recursive: true, force: true })
    const ca = await certificateAuthority(join(secureDir, 'ca'))
    ;[consul, kafka, redis] = await Promise.all([
      startConsulCluster(hosts.hosts, {
        prefix,
        secure: {
          ca,
          principals: ['order', 'payment'],
          roles: { patroni: patroniConsulRules },
          dir: join(secureDir, 'consul'),
        },
      }),
      startKafkaCluster(hosts.hosts, {
        prefix,
        secure: { ca, principals: ['order', 'payment'], dir: join(secureDir, 'kafka') },
      }),
      startClusterRedis(
        { primary: h1, replica: h2, sentinels: hosts.hosts },
        { prefix, secure: { ca, principals: ['order', 'payment'], dir: join(secureDir, 'redis') } },
      ),
    ])
    caFile = ca.caFile
    await Promise.all([consul.waitForLeader(), kafka.waitHealthy()])
  }, scaledMs(150_000))

  afterAll(async () => {
    await Promise.allSettled([consul?.close(), kafka?.close(), redis?.stop()])
    await hosts?.destroy()
    expect(await existingNamespaces(prefix)).toEqual([])
    expect(existsSync(`/etc/netns/${prefix}-h1`)).toBe(false)
  }, scaledMs(60_000))

  const host = (n: number) => hosts.hosts[n - 1] as (typeof hosts.hosts)[0]

  it("when a host looks up a cluster's address or host name, then its own files answer: no DNS server beyond the host is asked", async () => {
    expect((await host(1).run('getent', ['hosts', host(2).address])).trim().split(/\s+/)).toEqual([
      host(2).address,
      'h2',
    ])
    expect((await host(3).run('getent', ['hosts', 'h1'])).trim().split(/\s+/)).toEqual([
      host(1).address,
      'h1',
    ])
    expect((await host(2).run('getent', ['hosts', hosts.bridgeAddress])).trim()).toMatch(/ mrdck-machine$/)
    expect(await host(1).run('cat', ['/etc/resolv.conf'])).toMatch(/^nameserver 127\.0\.0\.1$/m)
    expect(await host(1).run('cat', ['/etc/resolv.conf'])).not.toMatch(/^nameserver (?!127\.0\.0\.1$)/m)
  })

  describe('Consul', () => {
    /** a service's settings for a host's agent: the agent's HTTPS address, the service's own token, the CA */
    const as = (service: string, n: number) => consul.settingsFor(service, host(n))

    it("when order registers through h1's agent with its own token, then h3's agent's catalog lists it at h1's address", async () => {
      const name = `order-ck-${randomUUID().slice(0, 8)}`
      const registered = await consulRequest(as('order', 1), 'PUT', '/v1/agent/service/register', {
        body: { ID: `${name}-1`, Name: name, Address: host(1).address, Port: 3002 },
      })
      expect(registered.status).toBe(200)
      const seen = await eventually(`${name} in h3's catalog`, async () => {
        const answer = await consulCall(as('payment', 3), 'GET', `/v1/catalog/service/${name}`)
        const entries = JSON.parse(answer) as { Node: string; ServiceAddress: string; ServicePort: number }[]
        return entries.length > 0 ? entries : undefined
      })
      expect(seen).toEqual([
        expect.objectContaining({ Node: 'h1', ServiceAddress: host(1).address, ServicePort: 3002 }),
      ])
      // a service on a host may also use the host's own loopback (the certificate names 127.0.0.1)
      const leader = await host(2).run('curl', [
        '-sf',
        '--cacert',
        caFile,
        'https://127.0.0.1:8501/v1/status/leader',
      ])
      expect(leader).toMatch(/^"198\.18\.2\.1[1-3]:8300"$/)
    })

    it("when a token registers another service, writes another's settings, or a call comes without a token or over plain HTTP, then each is refused and the catalog is unchanged", async () => {
      const register = (name: string) => ({
        body: { ID: `${name}-1`, Name: name, Address: host(1).address, Port: 3003 },
      })
      // order's token for payment's name, and for a name that only starts like its own
      for (const name of ['payment', 'orderly'])
        expect(
          (await consulRequest(as('order', 1), 'PUT', '/v1/agent/service/register', register(name))).status,
        ).toBe(403)
      // no token at all
      const anonymous = { address: consul.httpAddrOf(host(1)), caFile }
      expect(
        (await consulRequest(anonymous, 'PUT', '/v1/agent/service/register', register('order'))).status,
      ).toBe(403)
      // and sees no service at all: the catalog answers only what a token may read
      expect((await consulRequest(anonymous, 'GET', '/v1/catalog/services')).text.trim()).toBe('{}')
      // order reads its own runtime settings but writes nobody's; payment's settings are not its to read
      expect(
        (await consulRequest(as('order', 1), 'PUT', '/v1/kv/meridian/payment/maintenance', { body: 'on' }))
          .status,
      ).toBe(403)
      expect((await consulRequest(as('order', 1), 'GET', '/v1/kv/meridian/payment/maintenance')).status).toBe(
        403,
      )
      // Patroni's token holds its keys only
      expect(
        (await consulRequest(as('patroni', 1), 'PUT', '/v1/agent/service/register', register('order')))
          .status,
      ).toBe(403)
      // the plain HTTP port is closed: the API is HTTPS only
      await expect(
        consulRequest({ address: `http://${host(1).address}:8500` }, 'GET', '/v1/status/leader'),
      ).rejects.toThrow(/ECONNREFUSED/)
      const services = JSON.parse(
        await consulCall(consul.adminOf(host(2)), 'GET', '/v1/catalog/services'),
      ) as Record<string, unknown>
      expect(Object.keys(services).filter((name) => ['payment', 'orderly'].includes(name))).toEqual([])
    })

    it(
      'when h2 loses power, then h1 and h3 keep a leader, and once its engines restart it is the third alive server again',
      async () => {
        await host(2).killAll()
        expect(await host(2).pids()).toEqual([])
        for (const n of [1, 3]) {
          const view = await eventually(`h${n} sees h2 gone and a leader`, async () => {
            const seen = await consul.view(host(n)).catch(() => undefined)
            const elected = seen && seen.leader !== '' && seen.leader !== `${host(2).address}:8300`
            return elected && !seen.alive.includes('h2') ? seen : undefined
          })
          expect(view.alive.sort()).toEqual(['h1', 'h3'])
        }
        // a write still lands through a surviving agent: the catalog takes writes with 2 of 3 servers
        const written = await consulCall(consul.adminOf(host(3)), 'PUT', '/v1/kv/ck-probe', { body: 'kept' })
        expect(JSON.parse(written)).toBe(true)

        await Promise.all([
          consul.agents[1]?.start(),
          kafka.nodes[1]?.start(),
          ...redis.engines.filter((engine) => engine.host === host(2)).map((engine) => engine.start()),
        ])
        await consul.waitForLeader()
        for (const n of [1, 2, 3])
          expect((await consul.view(host(n))).alive.sort()).toEqual(['h1', 'h2', 'h3'])
        const read = await consulCall(consul.adminOf(host(2)), 'GET', '/v1/kv/ck-probe?raw')
        expect(JSON.parse(read)).toBe('kept')
      },
      scaledMs(120_000),
    )
  })

  describe('Kafka', () => {
    // whatever an earlier test left stopped runs again: each test here starts from three nodes
    beforeAll(async () => {
      await Promise.all(kafka.nodes.map((node) => node.start()))
      await kafka.waitHealthy()
    }, scaledMs(120_000))

    it("when a run's namespace is created with the cluster's replication, then every topic has 3 replicas and min.insync.replicas 2", async () => {
      topics = await createNamespaceTopics(kafka.brokers, namespace, clusterReplication, kafka.security)
      expect(topics).toContain(`${namespace}order.placed`)
      await kafka.waitHealthy(topics)
      await expectReplication(topics)
    })

    it(
      'when scripts/infra provisions the declared topics on the three brokers, then they get 3 copies and min.insync.replicas 2',
      async () => {
        const lines: string[] = []
        const created = await provisionTopics(kafka.brokers, (line) => lines.push(line), kafka.security)
        expect(created).toContain('order.placed')
        expect(lines).toEqual([`kafka: created ${created.length} of ${created.length} topics (3 copies)`])
        await expectReplication(created)
        // on a single broker, as in development, one copy (a replication the one broker could hold)
        expect(replicationForBrokers(1)).toEqual({ replicationFactor: 1, minInsyncReplicas: 1 })
      },
      // provisionTopics waits up to 120 s for the brokers to know every new partition (see createTopics)
      scaledMs(180_000),
    )

    it("when a client comes with a service's wrong password, or in plaintext, then no broker lets it in; with its own, it is", async () => {
      const order = kafka.envFor('order')
      expect(order).toMatchObject({ KAFKA_SASL_USERNAME: 'order', KAFKA_SASL_MECHANISM: 'scram-sha-512' })
      await expect(kafkaCluster(kafka.brokers, kafkaSecurityFromEnv(order))).resolves.toMatchObject({
        brokers: 3,
      })
      const wrong = kafkaSecurityFromEnv({ ...order, KAFKA_SASL_PASSWORD: `${order.KAFKA_SASL_PASSWORD}x` })
      await expect(kafkaCluster(kafka.brokers, wrong)).rejects.toThrow(/SASL|authenticat/i)
      // payment's password is not order's: a user is its own name and password
      const swapped = kafkaSecurityFromEnv({ ...order, KAFKA_SASL_USERNAME: 'payment' })
      await expect(kafkaCluster(kafka.brokers, swapped)).rejects.toThrow(/SASL|authenticat/i)
      await expect(kafkaCluster(kafka.brokers)).rejects.toThrow()
      expect(() => kafka.envFor('admin')).toThrow(/administrator/)
    })

    it(
      'when the node leading most partitions is killed, then acks=all writes still succeed, the group keeps reading, and the restarted node brings every ISR back to 3',
      async () => {
        const topic = `${namespace}order.placed`
        const client = clusterClient()
        const producer = client.producer({
          idempotent: true,
          maxInFlightRequests: 5,
          allowAutoTopicCreation: false,
        })
        const consumer = client.consumer({ groupId: `${namespace}ck-readers` })
        const watch = watchConsumer(consumer)
        const received = new Set<string>()
        await producer.connect()
        try {
          await consumer.connect()
          await consumer.subscribe({ topic, fromBeginning: true })
          await consumer.run({
            eachMessage: async ({ message }) => {
              received.add(message.value?.toString() ?? '')
            },
          })
          // run() resolves once the first attempt to join is over, also when it crashed: the writes wait for the group
          await eventually('the group joined', async () => {
            assertConsuming(watch)
            return watch.joined || undefined
          })
          const before = await produceUntilAcknowledged(
            producer,
            topic,
            Array.from({ length: 30 }, (_, i) => `before-${i}`),
          )
          await eventually('the group reads what was written before', async () => {
            assertConsuming(watch)
            return before.every((value) => received.has(value)) ? true : undefined
          })

          const leaderHost = await kafka.leaderOfMostPartitions(topics)
          const node = kafka.nodes.find((each) => each.host === leaderHost) as HostEngine
          const pid = node.pid() as number
          process.kill(pid, 'SIGKILL')
          await eventually(`${leaderHost.name}'s node gone`, async () => (isAlive(pid) ? undefined : true))

          // Writes go on as a relay's do: one send after the other for 15 s, across the fencing of the dead broker and
          // the move of its leaderships (a send straddling that moment lost messages before the kafkajs patch). A send
          // waits the move out (seconds, not a failure); what was acknowledged must all be read.
          const after = await produceFor(producer, topic, 'after', 15_000)
          expect(after.length).toBeGreaterThan(0)
          const unread = () => after.filter((value) => !received.has(value))
          await eventually(
            'the group reads everything acknowledged after the kill',
            async () => {
              assertConsuming(watch)
              return unread().length === 0 ? true : undefined
            },
            scaledMs(60_000),
          ).catch((error: Error) => {
            throw new Error(`${error.message}; unread: ${unread().slice(0, 10).join(' ')}`)
          })
          await eventually('every partition led by a live node', () =>
            leadersOnlyOn(
              topics,
              kafka.nodes.filter((each) => each !== node).map((each) => each.host),
            ),
          )

          await node.start()
          await kafka.waitHealthy(topics)
        } finally {
          await consumer.disconnect()
          await producer.disconnect()
        }
      },
      scaledMs(150_000),
    )
  })

  describe('Redis', () => {
    /** redis-cli on host n over TLS against the cluster's CA (a user and password when given), its answer trimmed. */
    const cliOn = async (n: number, args: string[], user?: { name: string; password: string }) =>
      (
        await host(n).run('redis-cli', [
          '--tls',
          '--cacert',
          caFile,
          ...(user ? ['--user', user.name, '--pass', user.password, '--no-auth-warning'] : []),
          ...args,
        ])
      ).trim()
    /** What h3's sentinel answers, from h3, for the primary's address: its host and port, a line each. */
    const primaryNamedOnH3 = () =>
      cliOn(3, ['-h', host(3).address, '-p', '26379', 'sentinel', 'get-master-addr-by-name', redis.name])
    /** A service's user (from its REDIS_URL) as redis-cli takes it. */
    const userOf = (service: string) => {
      const url = new URL(redis.envFor(service).REDIS_URL ?? '')
      return { name: decodeURIComponent(url.username), password: decodeURIComponent(url.password) }
    }
    const admin = () => ({
      name: redis.serverAccess.username ?? '',
      password: redis.serverAccess.password ?? '',
    })

    it("when the set runs, then the primary answers on h1's address over TLS as a user, from the machine and from another host, and the sentinels name it", async () => {
      expect(redis.url).toMatch(
        new RegExp(`^rediss://admin:[^@]+@${host(1).address.replaceAll('.', '\\.')}:6379$`),
      )
      expect(await redisVersion(redis.url, redis.serverAccess.tls)).toMatch(/^Redis \d/)
      expect(await cliOn(3, ['-h', host(1).address, 'ping'], userOf('order'))).toBe('PONG')
      const named = await primaryNamedOnH3()
      expect(named.split('\n')).toEqual([host(1).address, '6379'])
    })

    it('when a client comes in plaintext, without a user, or as a service outside its keys, then the server refuses it', async () => {
      /** redis-cli's answer, or its error (it exits non-zero on a refusal) */
      const answerOn = (n: number, args: string[], user?: { name: string; password: string }) =>
        cliOn(n, args, user).catch((error: unknown) => (error as Error).message)
      // no plaintext port: redis-cli without --tls gets no answer
      const plaintext = await host(3)
        .run('redis-cli', ['-h', host(1).address, '-p', '6379', 'ping'])
        .catch((error: unknown) => (error as Error).message)
      expect(plaintext).not.toMatch(/^PONG$/)
      expect(plaintext).toMatch(/error|closed|reset/i)
      // the default user is off; a wrong password
      expect(await answerOn(3, ['-h', host(1).address, 'ping'])).toMatch(/NOAUTH/)
      expect(
        await answerOn(3, ['-h', host(1).address, 'ping'], {
          name: 'order',
          password: 'not-its-password-1234',
        }),
      ).toMatch(/WRONGPASS/)
      // order's user on its own keys, and refused payment's
      expect(await answerOn(3, ['-h', host(1).address, 'set', 'order:ck', 'mine'], userOf('order'))).toBe(
        'OK',
      )
      expect(
        await answerOn(3, ['-h', host(1).address, 'set', 'payment:ck', 'not mine'], userOf('order')),
      ).toMatch(/NOPERM/)
      expect(await cliOn(3, ['-h', host(1).address, 'exists', 'payment:ck'], admin())).toBe('0')
    })

    it(
      "when the primary's process on h1 dies, then the sentinels promote h2's replica, a service's client through them goes on with what was acknowledged, and h1's comes back as a replica",
      async () => {
        // as a service's client is made (service-kit's createRedis): its user, TLS to the sentinels and the servers
        const { name: username, password } = userOf('order')
        const tls = redis.serverAccess.tls ?? {}
        const client = new Redis({
          sentinels: redis.sentinelAddresses,
          name: redis.name,
          username,
          password,
          enableTLSForSentinelMode: true,
          sentinelTLS: tls,
          tls,
          maxRetriesPerRequest: 2,
          connectTimeout: 2000,
        })
        // the lost primary is expected below; the errors are shown if a wait fails
        const errors: string[] = []
        client.on('error', (error: Error) => errors.push(error.message))
        try {
          // whatever an earlier test left stopped (h2's power cut) runs again, its replica linked
          for (const engine of redis.engines) if (engine.pid() === undefined) await engine.start()
          await eventually(
            "h2's replica linked to h1's primary",
            async () =>
              (await replicationOf({ host: host(2).address, port: 6379 }, redis.serverAccess)).includes(
                'master_link_status:up',
              ) || undefined,
          )
          await eventually('a write the replica acknowledges', async () => {
            try {
              await client.set('order:ck-before', 'acknowledged')
              return (await client.call('WAIT', '1', '2000')) === 1 || undefined
            } catch (error) {
              errors.push(`(${(error as Error).message})`)
              return undefined
            }
          }).catch((error: unknown) => {
            throw new Error(
              `${(error as Error).message}; the client's errors: ${errors.slice(-6).join('; ')}`,
            )
          })
          const primary = redis.servers.primary
          process.kill(primary.pid() as number, 'SIGKILL')
          await eventually('the sentinels to name h2', async () => {
            const named = await primaryNamedOnH3()
            return named.includes(host(2).address) || undefined
          })
          await eventually('a write through the same client', async () => {
            try {
              return (await client.set('order:ck-after', 'written')) === 'OK' || undefined
            } catch {
              return undefined
            }
          })
          expect(await client.get('order:ck-before')).toBe('acknowledged')

          // restarted empty (nothing kept on disk), the old primary is made a replica of the new one, and copies it
          await primary.start()
          await eventually("h1's server a replica of h2's, its link up", async () => {
            const info = await replicationOf({ host: host(1).address, port: 6379 }, redis.serverAccess).catch(
              () => '',
            )
            const linked =
              info.includes('role:slave') &&
              info.includes(`master_host:${host(2).address}`) &&
              info.includes('master_link_status:up')
            return linked || undefined
          })
          expect(await cliOn(1, ['-h', host(1).address, 'get', 'order:ck-after'], admin())).toBe('written')
        } finally {
          client.disconnect()
        }
      },
      scaledMs(120_000),
    )
  })

  describe('closing', () => {
    it(
      'when the cluster closes, then every engine has stopped by its pid and the hosts run nothing',
      async () => {
        await Promise.all([consul.close(), kafka.close(), redis.stop()])
        const engines = [...consul.agents, ...kafka.nodes, ...redis.engines]
        expect(
          engines.filter((engine) => engine.pid() !== undefined).map((e) => `${e.host.name} ${e.name}`),
        ).toEqual([])
        for (const each of hosts.hosts) expect(await each.pids()).toEqual([])
      },
      scaledMs(60_000),
    )
  })

  function clusterClient(): Kafka {
    // the retry settings of Meridian's own client (packages/events createKafka), as order with its SCRAM user
    return new Kafka({
      clientId: 'ck-test',
      brokers: kafka.brokers.split(','),
      logLevel: logLevel.NOTHING,
      connectionTimeout: 3000,
      retry: { initialRetryTime: 100, retries: 5 },
      ...kafkajsSecurity(kafkaSecurityFromEnv(kafka.envFor('order'))),
    })
  }

  /** Whether a consumer has joined its group (GROUP_JOIN), and the error it stopped on for good (CRASH, no restart). */
  interface ConsumerWatch {
    joined: boolean
    stopped?: Error
  }

  function watchConsumer(consumer: Consumer): ConsumerWatch {
    const watch: ConsumerWatch = { joined: false }
    consumer.on(consumer.events.GROUP_JOIN, () => {
      watch.joined = true
    })
    consumer.on(consumer.events.CRASH, ({ payload }) => {
      if (!payload.restart) watch.stopped = payload.error
    })
    return watch
  }

  /** Fails at once with the consumer's own error when it has stopped for good: nothing it was to read can come. */
  function assertConsuming(watch: ConsumerWatch): void {
    if (watch.stopped)
      throw new Error(`the consumer stopped for good: ${watch.stopped.name}: ${watch.stopped.message}`)
  }

  /** every partition of `names` with 3 replicas, every topic with min.insync.replicas 2 */
  async function expectReplication(names: string[]): Promise<void> {
    const admin = clusterClient().admin()
    await admin.connect()
    try {
      // a new topic reaches each broker's metadata in its own moment: a broker that has not got it yet answers
      // UNKNOWN_TOPIC_OR_PARTITION, so each question is asked again until one answers
      const { topics: described } = await eventually('the topics in the metadata', () =>
        admin.fetchTopicMetadata({ topics: names }).catch(() => undefined),
      )
      const replicaCounts = new Set(described.flatMap((t) => t.partitions.map((p) => p.replicas.length)))
      expect(replicaCounts).toEqual(new Set([3]))
      const configs = await eventually("the topics' configuration", () =>
        admin
          .describeConfigs({
            includeSynonyms: false,
            resources: names.map((name) => ({ type: 2, name, configNames: ['min.insync.replicas'] })),
          })
          .catch(() => undefined),
      )
      const minIsr = new Set(configs.resources.map((r) => r.configEntries[0]?.configValue))
      expect(minIsr).toEqual(new Set(['2']))
    } finally {
      await admin.disconnect()
    }
  }

  /**
   * Sends batches of 6 keyed messages (every partition) one after the other for `forMs`, each batch again and again
   * until it is acknowledged, as the outbox relay does: the idempotent producer numbers each partition's messages, and
   * only the very same batch is recognised as a duplicate of a failed request the broker had written after all.
   * Returns what was acknowledged.
   */
  async function produceFor(
    producer: Producer,
    topic: string,
    tag: string,
    forMs: number,
  ): Promise<string[]> {
    const acknowledged: string[] = []
    const until = Date.now() + forMs
    for (let batch = 0; Date.now() < until; batch++) {
      const values = Array.from({ length: 6 }, (_, i) => `${tag}-${batch}-${i}`)
      acknowledged.push(...(await produceUntilAcknowledged(producer, topic, values)))
    }
    return acknowledged
  }

  async function produceUntilAcknowledged(
    producer: Producer,
    topic: string,
    values: string[],
  ): Promise<string[]> {
    const deadline = Date.now() + scaledMs(30_000)
    for (;;) {
      try {
        await producer.send({
          topic,
          acks: -1,
          messages: values.map((value, i) => ({ key: `key-${i}`, value })),
        })
        return values
      } catch (error) {
        if (Date.now() > deadline) throw error
        await sleep(250)
      }
    }
  }

  /** true once every partition of `names` is led by a node on one of `on` */
  async function leadersOnlyOn(names: string[], on: (typeof hosts.hosts)[0][]): Promise<true | undefined> {
    const admin = clusterClient().admin()
    await admin.connect()
    try {
      const { topics: described } = await admin.fetchTopicMetadata({ topics: names })
      const leaders = new Set(described.flatMap((t) => t.partitions.map((p) => p.leader)))
      const allowed = on.map((each) => hosts.hosts.indexOf(each) + 1)
      return [...leaders].every((leader) => allowed.includes(leader)) ? true : undefined
    } finally {
      await admin.disconnect()
    }
  }
})
