// The faults of the cluster campaign (`pnpm --filter @meridian/e2e cluster`). Each strikes while orders are being
// placed through both gateways: it waits `leadMs` (the "before" phase), breaks something, repairs it, and resolves with
// the window it was broken in (the "during" phase; what follows is "after").
import { setTimeout as sleep } from 'node:timers/promises'
import type { Cluster, HostEngine } from '@meridian/infra/cluster'
import { type RedisMemberAccess, replicationOf } from '@meridian/infra/redis-sentinel'
import type { MeridianSystem } from '@meridian/infra/system'
import { eventually, scaledMs } from '@meridian/testkit'

export interface FaultContext {
  cluster: Cluster
  system: MeridianSystem
  /** the run's topics (the Kafka namespace's) */
  topics: string[]
  say(line: string): void
}

export interface FaultWindow {
  startedAt: number
  endedAt: number
}

export interface ClusterFault {
  name: string
  what: string
  /** no request may fail during it (a deployment's rolling restart) */
  failsNoRequest?: boolean
  strike(context: FaultContext, leadMs: number): Promise<FaultWindow>
}

/** The members (service instances) running on a host, by the run's names (`order`, `order#2`, …). */
const membersOn = (system: MeridianSystem, hostName: string): string[] =>
  Object.entries(system.services)
    .filter(([, info]) => info.host === hostName)
    .map(([key]) => key)

/** Starts members again, auth first (the others read its keys), gateways last (they route to the others). */
async function startMembers(system: MeridianSystem, keys: string[]): Promise<void> {
  const rank = (key: string) => {
    const name = system.services[key]?.name
    return name === 'auth' ? 0 : name === 'gateway' ? 2 : 1
  }
  for (const key of [...keys].sort((a, b) => rank(a) - rank(b))) await system.start(key)
}

/** Where each host's Redis server listens (infra/src/cluster/redis.ts). */
const redisPort = 6379

/**
 * The third host: no PostgreSQL primary (at the start) nor Redis runs there (their hosts have faults of their own),
 * only a PostgreSQL standby, one of the two a commit may wait for.
 */
const hostOfServices = (cluster: Cluster) => cluster.hosts[2] as Cluster['hosts'][number]

export const clusterFaults: ClusterFault[] = [
  {
    name: 'rolling-restart',
    what: 'every service instance stopped (SIGTERM: drained) and started again, one at a time, gateways included',
    failsNoRequest: true,
    async strike({ system, say }, leadMs) {
      await sleep(leadMs)
      const startedAt = Date.now()
      const keys = Object.keys(system.services)
      const rank = (key: string) => (system.services[key]?.name === 'gateway' ? 1 : 0)
      for (const key of [...keys].sort((a, b) => rank(a) - rank(b))) {
        await system.stop(key, 'SIGTERM')
        await system.start(key)
        say(`rolling restart: ${key} back`)
      }
      return { startedAt, endedAt: Date.now() }
    },
  },
  {
    name: 'broker-kill',
    what: 'the Kafka broker leading most of the run’s partitions SIGKILLed, started again 15 s later',
    async strike({ cluster, topics, say }, leadMs) {
      await sleep(leadMs)
      const leader = await cluster.kafka.leaderOfMostPartitions(topics)
      const node = cluster.kafka.nodes.find((each) => each.host === leader)
      const pid = node?.pid()
      if (!node || pid === undefined) throw new Error(`no running broker on ${leader.name}`)
      const startedAt = Date.now()
      process.kill(pid, 'SIGKILL')
      say(`broker on ${leader.name} (pid ${pid}) killed`)
      await sleep(15_000)
      await node.start()
      await cluster.kafka.waitHealthy(topics)
      say(`broker on ${leader.name} back, every partition with 3 in sync`)
      return { startedAt, endedAt: Date.now() }
    },
  },
  {
    name: 'partition',
    what: 'the third host cut off from the other two for 20 s by a packet filter in its namespace, then healed',
    async strike({ cluster, say }, leadMs) {
      await sleep(leadMs)
      const host = hostOfServices(cluster)
      const startedAt = Date.now()
      await cluster.links.partition(host)
      say(`${host.name} partitioned`)
      await sleep(20_000)
      await cluster.links.heal(host)
      say(`${host.name} healed`)
      await cluster.consul.waitForLeader()
      // its PostgreSQL standby streams again before the next fault
      await cluster.postgres.waitReplicating()
      return { startedAt, endedAt: Date.now() }
    },
  },
  {
    name: 'slow-links',
    what: '100 ms latency each way and 1% packet loss between every pair of hosts for 60 s (Toxiproxy and iptables)',
    async strike({ cluster, say }, leadMs) {
      await sleep(leadMs)
      const startedAt = Date.now()
      await cluster.links.degradeLinks({ latencyMs: 100, lossPercent: 1 })
      say('links degraded')
      await sleep(60_000)
      await cluster.links.restoreLinks()
      say('links restored')
      return { startedAt, endedAt: Date.now() }
    },
  },
  {
    name: 'host-kill',
    what: 'the third host killed (every process in it: Consul server, Kafka broker, a PostgreSQL standby, service instances, a gateway), restarted 15 s later',
    async strike(context, leadMs) {
      await sleep(leadMs)
      return killHost(context, hostOfServices(context.cluster), { label: '' })
    },
  },
  {
    name: 'postgres-host-kill',
    what: "the PostgreSQL primary's host killed (every process in it: Patroni and its server, a Consul server, a Kafka broker, Redis, service instances); Patroni promotes a standby by itself; the host restarted 15 s later, its server a standby again",
    async strike(context, leadMs) {
      await sleep(leadMs)
      const { cluster, say } = context
      const host = await cluster.postgres.waitPrimary()
      return killHost(context, host, {
        label: ", the PostgreSQL primary's host,",
        // nothing here promotes: Patroni on the other host takes the lock once the dead host's session ends
        async whileDown(startedAt) {
          const promoted = await cluster.postgres.waitPrimary({ not: host, timeoutMs: scaledMs(60_000) })
          say(`Patroni promoted ${promoted.name} after ${((Date.now() - startedAt) / 1000).toFixed(1)} s`)
          return `its PostgreSQL streaming from ${promoted.name}`
        },
      })
    },
  },
  {
    name: 'consul-leader-kill',
    what: 'the Consul server leading the others SIGKILLed (the services on its host lose their agent), started again 15 s later',
    async strike({ cluster, say }, leadMs) {
      await sleep(leadMs)
      await cluster.consul.waitForLeader()
      const leader = await cluster.consul.leader()
      const agent = cluster.consul.agents.find((each) => each.host === leader)
      const pid = agent?.pid()
      if (!agent || pid === undefined) throw new Error(`no running Consul server on ${leader.name}`)
      const startedAt = Date.now()
      process.kill(pid, 'SIGKILL')
      say(`consul leader on ${leader.name} (pid ${pid}) killed`)
      await eventually(
        'the other two Consul servers elect a leader',
        async () => {
          const other = cluster.consul.agents.find((each) => each !== agent)
          if (other === undefined) return false
          const seen = await cluster.consul.leaderSeenBy(other.host)
          return seen !== undefined && seen !== leader
        },
        scaledMs(60_000),
        250,
      )
      say(`a new consul leader after ${((Date.now() - startedAt) / 1000).toFixed(1)} s`)
      await sleep(Math.max(0, startedAt + 15_000 - Date.now()))
      await agent.start()
      await cluster.consul.waitForLeader()
      say(`consul server on ${leader.name} back, three servers and a leader`)
      return { startedAt, endedAt: Date.now() }
    },
  },
  {
    name: 'redis-failover',
    what: "Redis's primary SIGKILLed, the sentinels promote the replica; the old primary restarted empty 15 s later, a replica of the new one",
    async strike({ cluster, say }, leadMs) {
      await sleep(leadMs)
      // after an earlier failover the servers have swapped roles: the sentinels' primary is the one that says so
      const access = cluster.redis.serverAccess
      const { primary, replica } = await redisRoles(cluster)
      const pid = primary.pid()
      if (pid === undefined) throw new Error(`no running Redis primary on ${primary.host.name}`)
      const startedAt = Date.now()
      process.kill(pid, 'SIGKILL')
      say(`redis primary on ${primary.host.name} (pid ${pid}) killed`)
      await eventually(
        `the sentinels promote ${replica.host.name}'s replica`,
        async () => (await roleOf(replica, access)) === 'master',
        scaledMs(60_000),
        250,
      )
      say(`redis on ${replica.host.name} promoted after ${((Date.now() - startedAt) / 1000).toFixed(1)} s`)
      const endedAt = Date.now()
      await sleep(Math.max(0, startedAt + 15_000 - Date.now()))
      await primary.start()
      await eventually(
        `${primary.host.name}'s server copies the new primary`,
        async () => isCopying(primary, access),
        scaledMs(60_000),
        500,
      )
      say(`redis on ${primary.host.name} back, a replica of ${replica.host.name}'s`)
      return { startedAt, endedAt }
    },
  },
  {
    name: 'redis-host-kill',
    what: "the host of Redis's primary killed (every process in it: the primary and its sentinel, a Consul server, a Kafka broker, a PostgreSQL member, service instances); the other two sentinels promote the replica; the host restarted 15 s later, its Redis a replica of the new primary",
    async strike(context, leadMs) {
      await sleep(leadMs)
      const { cluster, say } = context
      const access = cluster.redis.serverAccess
      const { primary, replica } = await redisRoles(cluster)
      return killHost(context, primary.host, {
        label: ", the Redis primary's host,",
        async whileDown(startedAt) {
          await eventually(
            `the sentinels promote ${replica.host.name}'s replica`,
            async () => (await roleOf(replica, access)) === 'master',
            scaledMs(60_000),
            250,
          )
          say(
            `redis on ${replica.host.name} promoted after ${((Date.now() - startedAt) / 1000).toFixed(1)} s`,
          )
          return `its Redis a replica of ${replica.host.name}'s`
        },
        async back() {
          await eventually(
            `${primary.host.name}'s server copies the new primary`,
            async () => isCopying(primary, access),
            scaledMs(60_000),
            500,
          )
        },
      })
    },
  },
]

type ClusterHost = Cluster['hosts'][number]

/**
 * Kills every process of `host` (its engines and the run's members on it), waits for what `whileDown` waits for (a
 * promotion), restarts its engines 15 s after the kill, waits for Consul's leader, Kafka's replicas and the run's
 * members, PostgreSQL's streaming and what `back` waits for; the window from the kill until all that.
 */
async function killHost(
  { cluster, system, topics, say }: FaultContext,
  host: ClusterHost,
  steps: { label: string; whileDown?(startedAt: number): Promise<string>; back?(): Promise<void> },
): Promise<FaultWindow> {
  const members = membersOn(system, host.name)
  const startedAt = Date.now()
  await host.killAll()
  // the run's own record of its members: each is gone (kill resolves at once for a process already dead)
  await Promise.all(members.map((key) => system.kill(key)))
  say(`${host.name}${steps.label} killed (${members.join(', ')})`)
  const state = steps.whileDown ? await steps.whileDown(startedAt) : undefined
  await sleep(Math.max(0, startedAt + 15_000 - Date.now()))
  await cluster.restartEngines(host)
  await cluster.consul.waitForLeader()
  await cluster.kafka.waitHealthy(topics)
  await startMembers(system, members)
  await cluster.postgres.waitReplicating()
  await steps.back?.()
  say(`${host.name} back${state ? `, ${state}` : ''}`)
  return { startedAt, endedAt: Date.now() }
}

/** Which Redis server is the primary now (after an earlier failover the two have swapped roles). */
async function redisRoles(cluster: Cluster): Promise<{ primary: HostEngine; replica: HostEngine }> {
  const { primary: first, replica: second } = cluster.redis.servers
  const primary = (await roleOf(first, cluster.redis.serverAccess)) === 'master' ? first : second
  return { primary, replica: primary === first ? second : first }
}

/** Whether a Redis server is a replica with its link to the primary up. */
async function isCopying(server: HostEngine, access: RedisMemberAccess): Promise<boolean> {
  const info = await replicationOf({ host: server.host.address, port: redisPort }, access).catch(() => '')
  return info.includes('role:slave') && info.includes('master_link_status:up')
}

/** A Redis server's role as it answers (INFO replication): 'master', 'slave', or undefined when it does not answer. */
async function roleOf(server: HostEngine, access: RedisMemberAccess): Promise<string | undefined> {
  const info = await replicationOf({ host: server.host.address, port: redisPort }, access).catch(() => '')
  return /^role:(\w+)/m.exec(info)?.[1]
}
