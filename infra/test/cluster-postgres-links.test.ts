// PostgreSQL primary and replica across cluster hosts (a client on the multi-host URL through a failover), and the links
// between hosts through Toxiproxy (latency and loss added and removed). Needs root; hosts of the prefix mrdpg.
import postgres from 'postgres'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createHosts, type Hosts } from '../src/cluster/hosts.ts'
import { type PostgresCluster, startPostgresCluster } from '../src/cluster/postgres-cluster.ts'
import { eventually } from './eventually.ts'

const prefix = 'mrdpg'
const isRoot = process.getuid?.() === 0
let hosts: Hosts

beforeAll(async () => {
  if (isRoot) hosts = await createHosts({ prefix, subnet: '198.18.3', count: 3 })
}, 30_000)

afterAll(async () => {
  await hosts?.destroy()
}, 30_000)

const host = (n: number) => {
  const found = hosts.hosts[n - 1]
  if (!found) throw new Error(`no host h${n}`)
  return found
}

describe.runIf(isRoot)('PostgreSQL primary and streaming replica', () => {
  let cluster: PostgresCluster | undefined
  let client: postgres.Sql | undefined

  afterAll(async () => {
    await client?.end({ timeout: 1 }).catch(() => {})
    await cluster?.close()
  }, 60_000)

  it('when the primary host loses power and the replica is promoted, then the same client writes to it and every acknowledged commit is there', async () => {
    cluster = await startPostgresCluster({ primary: host(1), replica: host(2) }, { prefix })
    expect(cluster.primary().name).toBe('h1')
    expect(cluster.replica()?.name).toBe('h2')
    expect(cluster.url('orders')).toBe(
      'postgres://postgres:postgres@198.18.3.11:5432,198.18.3.12:5432/orders?target_session_attrs=primary',
    )
    const admin = postgres(cluster.primaryUrl('postgres'), { max: 1, onnotice: () => {} })
    await admin`create database failover`
    await admin.end()

    // the services' shape: one pool on the multi-host URL, connections closed and opened as it goes
    client = postgres(cluster.url('failover'), { max: 4, connect_timeout: 3, onnotice: () => {} })
    const db = client
    await db`create table acknowledged (n int primary key)`
    const heard: string[] = []
    await db.listen('failover', (payload) => heard.push(payload))
    for (let n = 1; n <= 300; n++) await db`insert into acknowledged values (${n})`
    await db`select pg_notify('failover', 'before')`
    await eventually('the notification before the failover', async () =>
      heard.includes('before') ? true : undefined,
    )

    await host(1).killAll()
    await cluster.promote()
    expect(cluster.primary().name).toBe('h2')
    expect(cluster.replica()).toBeUndefined()

    // the pool's connections to h1 are dead: the next ones go to the only server that takes writes
    const written = await eventually(
      'a write through the multi-host URL after the promotion',
      async () => {
        try {
          const [row] = await db<{ server: string }[]>`
            insert into acknowledged values (301) returning host(inet_server_addr()) as server`
          return row?.server
        } catch {
          return undefined
        }
      },
      15_000,
    )
    expect(written).toBe('198.18.3.12')
    const [counted] = await db<{ count: number }[]>`select count(*)::int as count from acknowledged`
    expect(counted?.count).toBe(301)

    // the outbox relay's LISTEN: postgres.js listens again once when its connection closes, and that one attempt
    // can meet the moment no server takes writes — so a listener is made again after the failover, and it hears
    await db.listen('failover', (payload) => heard.push(`again ${payload}`))
    await eventually(
      'a notification on the new primary reaching the listener',
      async () => {
        await db`select pg_notify('failover', 'after')`
        return heard.includes('again after') ? true : undefined
      },
      15_000,
    )
  }, 90_000)

  it('when the old primary rejoins, then it streams from the new primary, has every row, and the client still writes to the primary', async () => {
    if (!cluster || !client) throw new Error('the failover test did not run')
    const db = client
    // the host comes back (its engines started again): a fenced old primary starts as a replica, never as a primary
    await cluster.nodes.find((node) => node.host.name === 'h1')?.start()
    expect(cluster.replica()?.name).toBe('h1')
    await cluster.waitReplicating()

    const onReplica = postgres(`postgres://postgres:postgres@${host(1).address}:5432/failover`, {
      max: 1,
      onnotice: () => {},
    })
    try {
      const [recovering] = await onReplica<{ standby: boolean }[]>`select pg_is_in_recovery() as standby`
      expect(recovering?.standby).toBe(true)
      await db`insert into acknowledged values (302)`
      // synchronous: the commit returned once h1 had it; a hot standby shows it once replayed
      await eventually('the rows on the rejoined replica', async () => {
        const [row] = await onReplica<{ count: number }[]>`select count(*)::int as count from acknowledged`
        return row?.count === 302 ? true : undefined
      })
      await expect(onReplica`insert into acknowledged values (0)`).rejects.toThrow(/read-only/)
    } finally {
      await onReplica.end()
    }
    const [row] = await db<{ server: string }[]>`select host(inet_server_addr()) as server`
    expect(row?.server).toBe('198.18.3.12')
    // a new client tries h1 first (the URL's order): a standby now, so it goes on to h2
    const fresh = postgres(cluster.url('failover'), { max: 1, onnotice: () => {} })
    try {
      const [landed] = await fresh<{ server: string }[]>`
        insert into acknowledged values (303) returning host(inet_server_addr()) as server`
      expect(landed?.server).toBe('198.18.3.12')
    } finally {
      await fresh.end()
    }
  }, 90_000)
})
