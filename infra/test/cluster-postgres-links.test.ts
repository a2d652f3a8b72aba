// PostgreSQL under Patroni across three cluster hosts (a client on the multi-host URL through a failover Patroni
// makes by itself, the old primary's return, a standby's loss under quorum commit), and the links between hosts through Toxiproxy (latency and
// loss added and removed). Every connection but a host's own socket is TLS, verified against a CA made here, as the
// campaign's cluster runs it; Patroni reaches Consul over HTTPS with its own token. Needs root; hosts of the prefix mrdpg.

import { rmSync } from 'node:fs'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { join } from 'node:path'
import type postgres from 'postgres'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type ConsulCluster, startConsulCluster } from '../src/cluster/consul-cluster.ts'
import { createHosts, type Hosts } from '../src/cluster/hosts.ts'
import { destroyLinks, type Links, startLinks } from '../src/cluster/links.ts'
import {
  type PostgresCluster,
  patroniConsulRules,
  startPostgresCluster,
} from '../src/cluster/postgres-cluster.ts'
import { layoutFromEnv } from '../src/layout.ts'
import { postgresClient } from '../src/probes.ts'
import { isAlive } from '../src/processes.ts'
import { type CertificateAuthority, certificateAuthority } from '../src/secure/certificates.ts'
import { scaledMs } from '../src/test-time.ts'
import { eventually } from './eventually.ts'

const prefix = 'mrdpg'
const isRoot = process.getuid?.() === 0
let hosts: Hosts
let ca: CertificateAuthority

beforeAll(async () => {
  if (!isRoot) return
  hosts = await createHosts({ prefix, subnet: '198.18.3', count: 3 })
  const caDir = join(layoutFromEnv().componentDir('cluster'), prefix, 'secure', 'ca')
  rmSync(caDir, { recursive: true, force: true })
  ca = await certificateAuthority(caDir)
}, scaledMs(30_000))

afterAll(async () => {
  await hosts?.destroy()
}, scaledMs(30_000))

const host = (n: number) => {
  const found = hosts.hosts[n - 1]
  if (!found) throw new Error(`no host h${n}`)
  return found
}

describe.runIf(isRoot)('PostgreSQL under Patroni, failing over by itself', () => {
  let consul: ConsulCluster | undefined
  let cluster: PostgresCluster | undefined
  let client: postgres.Sql | undefined
  /** the host Patroni promoted when h1 died */
  let promoted: { name: string; address: string } = { name: '', address: '' }

  beforeAll(async () => {
    if (!isRoot) return
    // Patroni's store: a Consul server on each host, secure as in the cluster (Patroni with a token of its own)
    consul = await startConsulCluster(hosts.hosts, {
      prefix,
      secure: {
        ca,
        principals: [],
        roles: { patroni: patroniConsulRules },
        dir: join(layoutFromEnv().componentDir('cluster'), prefix, 'secure', 'consul'),
      },
    })
    await consul.waitForLeader()
  }, scaledMs(60_000))

  afterAll(async () => {
    await client?.end({ timeout: 1 }).catch(() => {})
    await cluster?.close()
    await consul?.close()
  }, scaledMs(60_000))

  /** a host's engines started again after killAll: its Consul agent, then its Patroni */
  async function restart(n: number): Promise<void> {
    await consul?.agents.find((agent) => agent.host === host(n))?.start()
    await cluster?.nodes.find((node) => node.host === host(n))?.start()
  }

  it(
    'when the primary host loses power, then a write waits, Patroni promotes a standby by itself, and the write and the next land there beside every acknowledged commit',
    async () => {
      const started = consul
      if (!started) throw new Error('no Consul')
      cluster = await startPostgresCluster(hosts.hosts, {
        prefix,
        consulOf: (each) => started.settingsFor('patroni', each),
        tls: ca,
        roles: {
          principals: ['order', 'payment'],
          dir: join(layoutFromEnv().componentDir('cluster'), prefix, 'secure', 'postgres'),
        },
      })
      expect((await cluster.waitPrimary()).name).toBe('h1')
      expect(cluster.url('orders')).toBe(
        `postgres://postgres:postgres@198.18.3.11:5432,198.18.3.12:5432,198.18.3.13:5432/orders?target_session_attrs=primary&sslmode=verify-full&sslrootcert=${ca.caFile}`,
      )
      const admin = postgresClient(cluster.url('postgres'), { max: 1, onnotice: () => {} })
      await admin`create database failover`
      // this connection and both standbys' streams are TLS
      const [own] = await admin<{ ssl: boolean }[]>`select ssl from pg_stat_ssl where pid = pg_backend_pid()`
      expect(own?.ssl).toBe(true)
      await cluster.waitReplicating()
      const streams = await admin<{ ssl: boolean }[]>`
        select s.ssl from pg_stat_replication r join pg_stat_ssl s using (pid)`
      expect(streams.map((stream) => stream.ssl)).toEqual([true, true])
      // a service's role reaches the database given to it (startSystem's createRunDatabase), and another's does not
      await admin`create database order_run owner "order"`
      await admin`revoke connect, temporary on database order_run from public`
      await admin.end()
      const asOrder = postgresClient(cluster.roleUrl('order', 'order_run'), { max: 1, onnotice: () => {} })
      const [me] = await asOrder<{ user: string; ssl: boolean }[]>`
        select current_user as user, ssl from pg_stat_ssl where pid = pg_backend_pid()`
      expect(me).toEqual({ user: 'order', ssl: true })
      await asOrder.end()
      const asPayment = postgresClient(cluster.roleUrl('payment', 'order_run'), {
        max: 1,
        onnotice: () => {},
      })
      await expect(asPayment`select 1`).rejects.toThrow(/permission denied for database/)
      await asPayment.end()
      expect(() => cluster?.roleUrl('shipping', 'order_run')).toThrow(/no role for 'shipping'/)
      // a client without TLS finds no pg_hba line that lets it in; one that does not trust the CA refuses the server
      const plain = postgresClient(`postgres://postgres:postgres@${host(2).address}:5432/postgres`, {
        max: 1,
        connect_timeout: 3,
        onnotice: () => {},
      })
      await expect(plain`select 1`).rejects.toThrow(/no pg_hba\.conf entry|SSL off/)
      await plain.end()

      // the services' shape: one pool on the multi-host URL, connections closed and opened as it goes
      client = postgresClient(cluster.url('failover'), { max: 4, connect_timeout: 3, onnotice: () => {} })
      const db = client
      await db`create table acknowledged (n int primary key)`
      const heard: string[] = []
      await db.listen('failover', (payload) => heard.push(payload))
      for (let n = 1; n <= 300; n++) await db`insert into acknowledged values (${n})`
      await db`select pg_notify('failover', 'before')`
      await eventually('the notification before the failover', async () =>
        heard.includes('before') ? true : undefined,
      )

      // the failover also waits on Consul's election when its leader was on the same host
      const consulLeader = (await started.leader()).name
      const killedAt = performance.now()
      await host(1).killAll()
      // until a server is promoted none takes writes: postgres.js goes round the hosts until one is the primary, so a
      // write sent now neither fails nor lands on the standby — it waits, and is done on the new primary
      const waiting = db<{ server: string }[]>`
      insert into acknowledged values (301) returning host(inet_server_addr()) as server`.then(
        ([row]) => row?.server,
      )
      // nothing here promotes: h1's Consul session ends with its host, and the standby with the most WAL (either, in
      // a quiet moment) takes the lock
      promoted = await cluster.waitPrimary({ not: host(1), timeoutMs: scaledMs(60_000) })
      expect(['h2', 'h3']).toContain(promoted.name)
      expect(await waiting).toBe(promoted.address)
      // what docs/how-to/scaling-out.md quotes: from the kill to the waiting write done on the new primary
      process.stdout.write(
        `postgres failover: the write done on ${promoted.name} ${Math.round(performance.now() - killedAt)} ms after the kill (Consul's leader was on ${consulLeader})\n`,
      )
      // the pool's connections to h1 are dead: the next ones go to the only primary
      const [written] = await db<{ server: string }[]>`
      insert into acknowledged values (302) returning host(inet_server_addr()) as server`
      expect(written?.server).toBe(promoted.address)
      const [counted] = await db<{ count: number }[]>`select count(*)::int as count from acknowledged`
      expect(counted?.count).toBe(302)

      // the outbox relay's LISTEN: postgres.js listens again once when its connection closes, and that one attempt
      // can meet the moment no server takes writes — so a listener is made again after the failover, and it hears
      await db.listen('failover', (payload) => heard.push(`again ${payload}`))
      await eventually('a notification on the new primary reaching the listener', async () => {
        await db`select pg_notify('failover', 'after')`
        return heard.includes('again after') ? true : undefined
      })
    },
    scaledMs(180_000),
  )

  it(
    'when the old primary host comes back, then its Patroni makes it a standby of the new primary in the commit quorum with every row, and the client still writes to the primary',
    async () => {
      if (!cluster || !client) throw new Error('the failover test did not run')
      const db = client
      await restart(1)
      await cluster.waitReplicating()
      const h1 = (await cluster.members()).find((member) => member.name === 'h1')
      expect(h1).toMatchObject({ role: 'quorum_standby', state: 'streaming' })

      const onReplica = postgresClient(
        `postgres://postgres:postgres@${host(1).address}:5432/failover?sslmode=verify-full&sslrootcert=${ca.caFile}`,
        { max: 1, onnotice: () => {} },
      )
      try {
        const [recovering] = await onReplica<{ standby: boolean }[]>`select pg_is_in_recovery() as standby`
        expect(recovering?.standby).toBe(true)
        await db`insert into acknowledged values (303)`
        // the commit returned once one standby had it; h1, a hot standby, shows it once replayed
        await eventually('the rows on the rejoined replica', async () => {
          const [row] = await onReplica<{ count: number }[]>`select count(*)::int as count from acknowledged`
          return row?.count === 303 ? true : undefined
        })
        await expect(onReplica`insert into acknowledged values (0)`).rejects.toThrow(/read-only/)
      } finally {
        await onReplica.end()
      }
      const [row] = await db<{ server: string }[]>`select host(inet_server_addr()) as server`
      expect(row?.server).toBe(promoted.address)
      // a new client tries h1 first (the URL's order): a standby now, so it goes on to the primary
      const fresh = postgresClient(cluster.url('failover'), { max: 1, onnotice: () => {} })
      try {
        const [landed] = await fresh<{ server: string }[]>`
        insert into acknowledged values (304) returning host(inet_server_addr()) as server`
        expect(landed?.server).toBe(promoted.address)
      } finally {
        await fresh.end()
      }
    },
    scaledMs(180_000),
  )

  it(
    'when a standby’s host loses power, then commits go on with the other standby’s acknowledgement, nothing fails over, and it is in the quorum again once back',
    async () => {
      if (!cluster || !client) throw new Error('the rejoin test did not run')
      const db = client
      await host(1).killAll()
      // `ANY 1 (…)`: the other standby's acknowledgement is enough, so the commit is done at once, on the primary it
      // was sent to
      const [landed] = await db<{ server: string }[]>`
      insert into acknowledged values (305) returning host(inet_server_addr()) as server`
      expect(landed?.server).toBe(promoted.address)
      expect((await cluster.waitPrimary()).name).toBe(promoted.name)
      await restart(1)
      await cluster.waitReplicating()
      const [counted] = await db<{ count: number }[]>`select count(*)::int as count from acknowledged`
      expect(counted?.count).toBe(305)
    },
    scaledMs(180_000),
  )
})

/** A line echo server (any port the links proxy), run inside a host. */
const echoServer = `
const net = require('node:net')
const [address, port] = process.argv.slice(1)
net.createServer((socket) => { socket.setNoDelay(true); socket.pipe(socket) }).listen(Number(port), address)
`

/**
 * Sends `total` numbered lines, at most `window` unanswered at once, and prints what came back: how many, in order,
 * and the fastest and middle round trips (ms); or the error, also when nothing answers within timeoutMs.
 */
const echoClient = `
const net = require('node:net')
const [address, port, total, window, timeoutMs] = process.argv.slice(1).map((v, i) => (i === 0 ? v : Number(v)))
const done = (result) => { console.log(JSON.stringify(result)); process.exit(0) }
setTimeout(() => done({ error: 'timeout' }), timeoutMs)
const socket = net.connect(port, address)
socket.setNoDelay(true)
let sent = 0, received = 0, buffer = ''
const sentAt = [], times = []
const send = () => { while (sent < total && sent - received < window) { sentAt[sent] = performance.now(); socket.write(sent + '\\n'); sent++ } }
socket.on('connect', send)
socket.on('error', (error) => done({ error: error.code ?? error.message }))
socket.on('data', (chunk) => {
  buffer += chunk
  for (let end = buffer.indexOf('\\n'); end >= 0; end = buffer.indexOf('\\n')) {
    const n = Number(buffer.slice(0, end))
    buffer = buffer.slice(end + 1)
    if (n !== received) done({ error: 'out of order', n, received })
    times.push(performance.now() - sentAt[n])
    received++
  }
  if (received === total) {
    times.sort((a, b) => a - b)
    done({ received, min: times[0], median: times[times.length >> 1] })
  }
  send()
})
`

interface EchoResult {
  received?: number
  min?: number
  median?: number
  error?: string
}

describe.runIf(isRoot)('links between hosts through Toxiproxy', () => {
  const echoPort = 6379
  let links: Links | undefined
  // a server on this machine's loopback only, as the machine's Mailpit is: the hosts reach it through a proxy
  const machineServer = createServer((_request, response) => response.end('the machine answers'))
  let machinePort = 0

  beforeAll(async () => {
    host(2).startDaemon({
      command: process.execPath,
      args: ['-e', echoServer, host(2).address, String(echoPort)],
      logFile: '/dev/null',
    })
    await new Promise<void>((resolve) => machineServer.listen(0, '127.0.0.1', resolve))
    machinePort = (machineServer.address() as AddressInfo).port
    links = await startLinks(hosts, { servicePorts: [3000], machinePorts: [machinePort] })
  }, scaledMs(60_000))

  afterAll(async () => {
    await links?.close()
    machineServer.close()
  }, scaledMs(30_000))

  it("when a host connects to the machine's port given to the links, then the machine's loopback server answers it; the machine's loopback itself it cannot reach", async () => {
    if (!links) throw new Error('no links')
    const through = `http://${hosts.bridgeAddress}:${links.machinePort(machinePort)}/`
    expect(await host(3).run('curl', ['-sS', '--max-time', '5', through])).toBe('the machine answers')
    // the host's own loopback is its own: nothing listens there
    await expect(
      host(3).run('curl', ['-sS', '--max-time', '5', `http://127.0.0.1:${machinePort}/`]),
    ).rejects.toThrow()
    expect(() => links?.machinePort(machinePort + 1)).toThrow(/not one of the machine's ports/)
  })

  const echo = async (from: number, to: number, total: number, window: number, timeoutMs = 60_000) =>
    JSON.parse(
      await host(from).run(
        process.execPath,
        [
          '-e',
          echoClient,
          host(to).address,
          String(echoPort),
          String(total),
          String(window),
          String(timeoutMs),
        ],
        { timeoutMs: timeoutMs + 10_000 },
      ),
    ) as EchoResult

  it(
    'when the links are degraded by 100 ms, then a round trip between two hosts takes at least 100 ms, and once restored no latency is left on any link',
    async () => {
      if (!links) throw new Error('no links')
      // the server may still be starting
      await eventually('the echo server on h2', async () =>
        (await echo(1, 2, 1, 1, 2_000)).received ? true : undefined,
      )
      const before = await echo(1, 2, 20, 1)
      expect(before.received).toBe(20)

      await links.degradeLinks({ latencyMs: 100 })
      const degraded = await echo(1, 2, 10, 1)
      expect(degraded.received).toBe(10)
      expect(degraded.min).toBeGreaterThanOrEqual(100)

      await links.restoreLinks()
      // no toxic left on any proxy, and round trips shorter than the shortest degraded one (no stopwatch bound: a loaded
      // machine's round trips are slow, but not by the 100 ms each way that was added)
      const proxies = (await (await fetch(`${links.apiUrl}/proxies`)).json()) as Record<
        string,
        { toxics: unknown[] }
      >
      expect(Object.values(proxies).flatMap((proxy) => proxy.toxics)).toEqual([])
      const restored = await echo(1, 2, 20, 1)
      expect(restored.received).toBe(20)
      expect(restored.median).toBeLessThan(Number(degraded.min))
    },
    scaledMs(60_000),
  )

  it(
    'when the links lose 1% of packets with 100 ms latency, then a stream of 2000 request/responses all complete, in order',
    async () => {
      if (!links) throw new Error('no links')
      await links.degradeLinks({ latencyMs: 100, lossPercent: 1 })
      try {
        const result = await echo(1, 2, 2000, 100)
        expect(result).toMatchObject({ received: 2000 })
        // the filter did drop packets: TCP got every one through anyway
        const counters = await host(1).run('iptables', ['-w', '-L', 'MERIDIAN-LINK-FAULTS', '-v', '-n', '-x'])
        const dropped = counters
          .split('\n')
          .filter((line) => line.includes('DROP') && line.includes('statistic'))
          .reduce((sum, line) => sum + Number(line.trim().split(/\s+/)[0]), 0)
        expect(dropped).toBeGreaterThan(0)
      } finally {
        await links.restoreLinks()
      }
    },
    scaledMs(60_000),
  )

  it(
    'when a host is partitioned through the links, then no connection to or from it gets through, and they do once healed',
    async () => {
      if (!links) throw new Error('no links')
      await links.partition(host(2))
      try {
        expect((await echo(1, 2, 1, 1, 1_500)).error).toBeDefined()
        expect((await echo(3, 2, 1, 1, 1_500)).error).toBeDefined()
      } finally {
        await links.heal(host(2))
      }
      expect((await echo(1, 2, 1, 1)).received).toBe(1)
      expect((await echo(3, 2, 1, 1)).received).toBe(1)
    },
    scaledMs(30_000),
  )

  it(
    'when a run leaves Toxiproxy behind, then destroyLinks stops it by the pid in its pid file',
    async () => {
      if (!links) throw new Error('no links')
      const pid = links.pid()
      expect(pid).toBeDefined()
      await destroyLinks(hosts.prefix)
      expect(isAlive(pid)).toBe(false)
      expect(links.pid()).toBeUndefined()
      links = undefined
    },
    scaledMs(30_000),
  )
})
