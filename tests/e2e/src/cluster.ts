// `pnpm --filter @meridian/e2e cluster`: the cluster campaign. Three hosts on this machine (network namespaces), each
// with a Consul server and a Kafka broker; PostgreSQL's primary and its synchronous streaming replica; Redis; two
// instances of every service spread over the hosts, gateways on two of them. For each fault (cluster-faults.ts),
// orders at a steady pace through both gateways while realtime clients stay connected; then, once every order has
// settled, the reconciliation of the commerce campaign (reconcile.ts) from every service's database and the provider,
// placed → shipped before, during and after the fault, whether the realtime clients came back and caught up, and
// whether a token revoked before the fault is still refused after it.
// Prints the table and writes it to tests/e2e/results/. Every namespace and process it made is gone when it ends, also
// when it is interrupted (SIGINT, SIGTERM).
//
// `cluster down` removes what a run that was SIGKILLed left (a new run does that first too).
//
// Knobs: CLUSTER_RATE (orders/s, 8), CLUSTER_ONLY (comma-separated fault names), CLUSTER_LEAD_S (before, 10),
// CLUSTER_AFTER_S (after, 15), CLUSTER_REPLICAS (instances of every service, the gateway's too: 2), CLUSTER_PREFIX
// (mrdc), CLUSTER_SUBNET (198.18.0), CLUSTER_RESULTS (a file to write the results' JSON to as well), CLUSTER_SECURE
// (Kafka over SASL_SSL with a SCRAM user per service, PostgreSQL and Redis over TLS only with a role or ACL user per
// service, Consul with ACLs and a token per service over HTTPS: true; `false` for plaintext), CLUSTER_LOG_LEVEL (the
// services' LOG_LEVEL: warn).
import { randomUUID } from 'node:crypto'
import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { fileURLToPath } from 'node:url'
import type { Product } from '@meridian/contracts'
import { createDatabase, type Sql } from '@meridian/db'
import { expandTopics, kafkaClient, loadTopicDeclaration, repoRoot } from '@meridian/infra'
import { type Cluster, clusterReplication, destroyCluster, startCluster } from '@meridian/infra/cluster'
import { discoverServices, type MeridianSystem, startSystem } from '@meridian/infra/system'
import { exitWith } from './campaign.ts'
import { type Caller, type Customer, cards, e2eClient } from './client.ts'
import { type ClusterFault, clusterFaults, type FaultWindow } from './cluster-faults.ts'
import { createGatewayBalancer } from './gateway-balancer.ts'
import { realtimeSettings } from './global-setup.ts'
import { eventuallyMissed, type RealtimeWatch, watchRealtime } from './realtime-watch.ts'
import { pairs, type Reconciliation, reconcile, report, settle, stockAccounted } from './reconcile.ts'
import { isUnanswered, type Retries, withRetries } from './retrying-client.ts'
import { placeSteadily } from './steady-orders.ts'

const say = (line: string) => process.stderr.write(`[cluster] ${line}\n`)
const ratePerSecond = Number(process.env.CLUSTER_RATE ?? 8)
const leadMs = Number(process.env.CLUSTER_LEAD_S ?? 10) * 1000
const afterMs = Number(process.env.CLUSTER_AFTER_S ?? 15) * 1000
const replicas = Number(process.env.CLUSTER_REPLICAS ?? 2)
const secure = process.env.CLUSTER_SECURE !== 'false'
const prefix = process.env.CLUSTER_PREFIX ?? 'mrdc'
const subnet = process.env.CLUSTER_SUBNET ?? '198.18.0'
const resultsDir = fileURLToPath(new URL('../results/', import.meta.url))

/** The saga's timings for the campaign: long enough not to give up on a host that is down for 15 s. */
const env = {
  order: {
    SAGA_STEP_TIMEOUT_MS: '20000',
    SAGA_STEP_ATTEMPTS: '4',
    SAGA_COMPENSATION_BACKOFF_MS: '2000',
    SAGA_COMPENSATION_ATTEMPTS: '8',
    SAGA_SWEEP_INTERVAL_MS: '500',
  },
  payment: { PAYMENT_RECONCILE_INTERVAL_MS: '2000', PAYMENT_RECONCILE_AFTER_MS: '10000' },
  // every realtime client of the campaign comes from this machine's one address
  'realtime-gateway': realtimeSettings,
}

interface Latency {
  n: number
  p50: number | undefined
  p99: number | undefined
}

interface FaultResult {
  reconciliation: Reconciliation
  /** requests a client sent again under the same Idempotency-Key (502, 503, 504, or no answer) */
  retries: number
  /** orders placed only when sent again after the fault was over */
  placedLate: number
  window: FaultWindow
  latency: {
    before: Latency
    during: Latency
    after: Latency
    /** from the fault's start until the first order sent after it was shipped (ms); undefined if none was */
    firstShippedAfterStartMs: number | undefined
  }
  realtime: {
    clients: number
    connected: number
    reconnects: number
    resyncs: number
    missed: number
    backWithinS: number
  }
  /**
   * events some consumer gave up on (its dead-letter topics') from the fault's start until the reconciliation: each
   * an effect that is not coming without an operator's replay; must be 0
   */
  deadLetters: number
  /** what a token revoked before the fault met after it, through each gateway: each must be refused (401) */
  revoked: { refused: boolean; answers: number[] }
}

type E2eClient = ReturnType<typeof e2eClient>

/**
 * A customer whose credentials an administrator revoked before the fault (suspended, then made active again: the
 * token from before stays revoked, the account is fine): every service must go on refusing that token after it —
 * after a Redis failover too, where the revocations the services follow are stored.
 */
async function revokedCustomer(client: E2eClient, admin: Caller): Promise<Customer> {
  const customer = await client.registerCustomer()
  for (const status of ['suspended', 'active']) {
    const changed = await client.request('PATCH', `/api/v1/users/${customer.id}`, {
      token: admin.token,
      body: { status },
    })
    if (changed.status !== 200) throw new Error(`making ${customer.email} ${status}: ${changed.status}`)
  }
  return customer
}

/** The revoked token against an order of no one, through each gateway: 401 is refused; 404 would be let through. */
async function revocationAfter(gateways: E2eClient[], revoked: Customer): Promise<FaultResult['revoked']> {
  const answers: number[] = []
  for (const gateway of gateways) {
    const asked = await gateway.request('GET', `/api/v1/orders/${randomUUID()}`, { token: revoked.token })
    answers.push(asked.status)
  }
  return { refused: answers.every((status) => status === 401), answers }
}

function percentiles(values: number[]): Latency {
  const sorted = [...values].sort((a, b) => a - b)
  const at = (q: number) =>
    sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] : undefined
  return { n: sorted.length, p50: at(0.5), p99: at(0.99) }
}

/**
 * placed → shipped (ms) of each accepted order, by when it was sent: before, during or after the fault's window; and
 * how long after the fault struck the first order sent since was shipped (an order sent before it and shipped during it
 * says nothing of whether the system works again).
 */
async function latencies(
  order: Sql,
  accepted: Map<string, number>,
  window: FaultWindow,
): Promise<FaultResult['latency']> {
  const ids = [...accepted.keys()]
  const rows = await order<{ orderId: string; at: number }[]>`
    select order_id::text as "order_id", (extract(epoch from min(at)) * 1000)::float8 as at from saga_steps
    where order_id = any(${ids}::uuid[]) and step = 'shipment' and outcome = 'succeeded' group by order_id`
  const phases = { before: [] as number[], during: [] as number[], after: [] as number[] }
  let firstShippedAt: number | undefined
  for (const row of rows) {
    const sentAt = accepted.get(row.orderId)
    if (sentAt === undefined) continue
    const phase = sentAt < window.startedAt ? 'before' : sentAt <= window.endedAt ? 'during' : 'after'
    phases[phase].push(row.at - sentAt)
    if (sentAt >= window.startedAt && (firstShippedAt === undefined || row.at < firstShippedAt))
      firstShippedAt = row.at
  }
  return {
    before: percentiles(phases.before),
    during: percentiles(phases.during),
    after: percentiles(phases.after),
    firstShippedAfterStartMs: firstShippedAt === undefined ? undefined : firstShippedAt - window.startedAt,
  }
}

/**
 * One order placed and shipped through every service before the first fault: the "before" figures are then a settled
 * system's (every consumer group has joined and read, the cluster's group coordinators have loaded), not the end of
 * its start (its services started eight at a time, the first measured orders met groups still joining: before p99
 * 15.6 s, p50 1.17 s).
 */
async function warmUp(client: ReturnType<typeof e2eClient>, customer: Customer): Promise<void> {
  const startedAt = Date.now()
  const admin = await client.loginAdmin()
  const product = await client.createProduct(admin, { stock: 1 })
  const orderId = await client.placeOrderOk(customer, { product, card: cards.good })
  await client.orderReaches(customer, orderId, 'shipped', 120_000)
  say(`warm-up: an order placed and shipped in ${((Date.now() - startedAt) / 1000).toFixed(1)} s`)
}

async function runFault(
  cluster: Cluster,
  system: MeridianSystem,
  fault: ClusterFault,
  shared: { customers: Customer[]; watches: RealtimeWatch[]; topics: string[] },
): Promise<FaultResult> {
  const balancer = createGatewayBalancer(system.gatewayUrls)
  const signIn = system.admin ?? { email: '', password: '' }
  const client = e2eClient({ ...system, admin: signIn })
  const gateways = system.gatewayUrls.map((gatewayUrl) => e2eClient({ ...system, gatewayUrl, admin: signIn }))
  const admin = await client.loginAdmin()
  const deadLettersBefore = await deadLetterCount(cluster, shared.topics)
  // stock for about 90 s of orders: a longer fault also sells out, and its later orders fail and are refused stock
  // (compensated: refunded), as in the commerce campaign
  const stock = Math.round(ratePerSecond * 90)
  const product: Product = await client.createProduct(admin, { stock })
  const revoked = await revokedCustomer(client, admin)
  const goodToken = await client.tokenizeCard(cards.good)
  const declinedToken = await client.tokenizeCard(cards.declined)
  const since = new Date()
  say(`${fault.name}: ${fault.what}; ${ratePerSecond} orders/s through ${system.gatewayUrls.length} gateways`)

  const retries: Retries = { count: 0, placedLate: 0 }
  // the realtime clients live through every fault: this fault's reconnections are the ones after this point
  const reconnectsBefore = shared.watches.reduce((sum, watch) => sum + watch.reconnects, 0)
  const resyncsBefore = shared.watches.reduce((sum, watch) => sum + watch.resyncs, 0)
  let struck: FaultWindow | undefined
  let failure: unknown
  const striking = fault
    .strike({ cluster, system, topics: shared.topics, say }, leadMs)
    .then((window) => {
      struck = window
    })
    .catch((error: unknown) => {
      failure = error
    })
  try {
    const placed = await placeSteadily({
      ratePerSecond,
      more: () => failure === undefined && (struck === undefined || Date.now() < struck.endedAt + afterMs),
      place: async (i) => {
        const send = (idempotencyKey: string) =>
          balancer.call((gateway) =>
            (gateways[gateway] as ReturnType<typeof e2eClient>).placeOrder(
              shared.customers[i % shared.customers.length] as Customer,
              { product, paymentToken: i % 20 === 19 ? declinedToken : goodToken, idempotencyKey },
            ),
          )
        const idempotencyKey = randomUUID()
        const answered = await withRetries(send, retries, { idempotencyKey }).catch(() => undefined)
        if (answered && !isUnanswered(answered.status)) return answered
        // still unanswered: the client keeps it and sends it again under its key once the fault is over
        await striking
        const late = await withRetries(send, retries, { idempotencyKey })
        if (late.status === 201) retries.placedLate += 1
        return late
      },
    })
    await striking
    if (failure !== undefined) throw failure
    const window = struck as FaultWindow

    const databases = {
      order: database(system, 'order'),
      inventory: database(system, 'inventory'),
      shipping: database(system, 'shipping'),
      notification: database(system, 'notification'),
    }
    try {
      const settleSeconds = await settle(databases.order)
      const reconciliation = await reconcile(
        databases,
        (orderId) => client.providerSummary(orderId),
        {
          fault: fault.name,
          sent: placed.sent,
          accepted: new Set(placed.accepted.keys()),
          refused: placed.refused,
          productId: product.id,
          initialStock: stock,
          since,
        },
        settleSeconds,
      )
      // effects missing: were their events still unread by a group (a stalled consumer), or read and lost?
      if (reconciliation.lost.length > 0 || reconciliation.duplicated.length > 0) {
        const unread = await unreadByGroup(cluster, shared.topics).catch((error: unknown) => [
          `the groups' offsets could not be read: ${error instanceof Error ? error.message : String(error)}`,
        ])
        say(
          `dead letters and consumer groups behind the end of the run's topics: ${unread.length > 0 ? unread.join('; ') : 'none'}`,
        )
      }
      const backStarted = Date.now()
      while (shared.watches.some((watch) => !watch.connected) && Date.now() - backStarted < 60_000)
        await sleep(250)
      for (const watch of shared.watches.filter((each) => !each.connected))
        say(
          `a realtime client on ${watch.gatewayUrl} is not connected: ${watch.lastError ?? 'no error heard'}`,
        )
      return {
        reconciliation,
        revoked: await revocationAfter(gateways, revoked),
        deadLetters: (await deadLetterCount(cluster, shared.topics)) - deadLettersBefore,
        retries: retries.count,
        placedLate: retries.placedLate,
        window,
        latency: await latencies(databases.order, placed.accepted, window),
        realtime: {
          clients: shared.watches.length,
          connected: shared.watches.filter((watch) => watch.connected).length,
          reconnects: shared.watches.reduce((sum, watch) => sum + watch.reconnects, 0) - reconnectsBefore,
          resyncs: shared.watches.reduce((sum, watch) => sum + watch.resyncs, 0) - resyncsBefore,
          missed: await eventuallyMissed(databases.notification, shared.watches, since, say),
          backWithinS: (Date.now() - backStarted) / 1000,
        },
      }
    } finally {
      await Promise.all(Object.values(databases).map((sql) => sql.end()))
    }
  } finally {
    balancer.close()
  }
}

/**
 * The run's dead letters (`<topic>.dlt: N dead letter(s)`) and every consumer group's unread events on the run's
 * topics (the end of each partition minus the group's committed offset: `<group> <topic>: N unread`): what a
 * reconciliation that finds effects missing looks at first.
 */
async function unreadByGroup(cluster: Cluster, topics: string[]): Promise<string[]> {
  return withKafkaAdmin(cluster, async (admin) => {
    const ends = new Map<string, number>()
    const lines: string[] = []
    for (const topic of topics) {
      let held = 0
      for (const { partition, high, low } of await admin.fetchTopicOffsets(topic)) {
        ends.set(`${topic}:${partition}`, Number(high))
        held += Number(high) - Number(low)
      }
      // an event some group gave up on after its retries (or could never handle): its effect is not coming
      if (topic.endsWith('.dlt') && held > 0) lines.push(`${topic}: ${held} dead letter(s)`)
    }
    for (const { groupId } of (await admin.listGroups()).groups) {
      for (const { topic, partitions } of await admin.fetchOffsets({ groupId, topics })) {
        // -1: the group has committed nothing there (not a topic it reads)
        const unread = partitions
          .filter(({ offset }) => Number(offset) >= 0)
          .reduce(
            (sum, { partition, offset }) =>
              sum + Math.max(0, (ends.get(`${topic}:${partition}`) ?? 0) - Number(offset)),
            0,
          )
        if (unread > 0) lines.push(`${groupId} ${topic}: ${unread} unread`)
      }
    }
    return lines
  })
}

type KafkaAdmin = ReturnType<ReturnType<typeof kafkaClient>['admin']>

/** `work` with an administrator's client of the cluster's brokers, disconnected after. */
async function withKafkaAdmin<T>(cluster: Cluster, work: (admin: KafkaAdmin) => Promise<T>): Promise<T> {
  const admin = kafkaClient(cluster.kafka.brokers, 'cluster-campaign', cluster.kafka.security).admin()
  await admin.connect()
  try {
    return await work(admin)
  } finally {
    await admin.disconnect()
  }
}

function database(system: MeridianSystem, service: string): Sql {
  const url = system.services[service]?.databaseUrl
  if (!url) throw new Error(`${service} has no database in this run`)
  return createDatabase(url, { max: 2, applicationName: 'cluster-campaign' })
}

const ms = (value: number | undefined) => (value === undefined ? '–' : `${Math.round(value)}`)
const seconds = (value: number | undefined) => (value === undefined ? '–' : (value / 1000).toFixed(1))

/** The events held by the run's dead-letter topics (`<topic>.dlt`): none is replayed during a campaign. */
async function deadLetterCount(cluster: Cluster, topics: string[]): Promise<number> {
  return withKafkaAdmin(cluster, async (admin) => {
    let count = 0
    for (const topic of topics.filter((name) => name.endsWith('.dlt')))
      for (const { high, low } of await admin.fetchTopicOffsets(topic)) count += Number(high) - Number(low)
    return count
  })
}

function table(results: FaultResult[]): string {
  const lines = [
    '| fault | sent | accepted | retried (placed late) | refused | lost | double charges | duplicated | stock conserved | settled (s) | p50/p99 before (ms) | p50/p99 during | p50/p99 after | first shipped after the fault struck (s) | realtime back / reconnects / resyncs / missed | revoked token refused after | dead letters |',
    '|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|',
  ]
  for (const { reconciliation: r, retries, placedLate, latency, realtime, revoked, deadLetters } of results) {
    const doubleCharges = r.duplicated.filter((line) => /charged \d+ times/.test(line)).length
    const stockOk = stockAccounted(r.stock) === r.stock.initial
    lines.push(
      `| ${r.fault} | ${r.sent} | ${r.accepted} | ${retries} (${placedLate}) | ${pairs(r.refused)} | ${r.lost.length} | ${doubleCharges} | ${r.duplicated.length - doubleCharges} | ${stockOk ? 'yes' : 'NO'} | ${r.settleSeconds.toFixed(0)} | ${ms(latency.before.p50)}/${ms(latency.before.p99)} | ${ms(latency.during.p50)}/${ms(latency.during.p99)} | ${ms(latency.after.p50)}/${ms(latency.after.p99)} | ${seconds(latency.firstShippedAfterStartMs)} | ${realtime.connected}/${realtime.clients} in ${realtime.backWithinS.toFixed(0)} s / ${realtime.reconnects} / ${realtime.resyncs} / ${realtime.missed} | ${revoked.refused ? 'yes' : `NO (${revoked.answers.join(', ')})`} | ${deadLetters} |`,
    )
  }
  return lines.join('\n')
}

async function main(): Promise<number> {
  if (process.argv[2] === 'down') {
    // what a run that could not clean up left (it was SIGKILLed): the hosts, everything in them, and Toxiproxy
    await destroyCluster(prefix)
    say(`cluster ${prefix} removed`)
    return 0
  }
  if (!Number.isInteger(replicas) || replicas < 1)
    throw new Error(`CLUSTER_REPLICAS must be 1 or more (got ${replicas})`)
  const only = process.env.CLUSTER_ONLY?.split(',').filter(Boolean)
  const chosen = clusterFaults.filter((fault) => !only || only.includes(fault.name))
  if (chosen.length === 0) throw new Error(`no fault named ${only?.join(', ')}`)
  const started = new Date()
  let cluster: Cluster | undefined
  let system: MeridianSystem | undefined
  const watches: RealtimeWatch[] = []
  let interrupted = false
  const onSignal = (signal: NodeJS.Signals) => {
    if (interrupted) return
    interrupted = true
    say(`${signal}: cleaning up`)
    void (async () => {
      for (const watch of watches) watch.close()
      await system?.close().catch(() => {})
      await (cluster ? cluster.destroy() : destroyCluster(prefix)).catch(() => {})
      process.exit(130)
    })()
  }
  process.on('SIGINT', onSignal)
  process.on('SIGTERM', onSignal)

  const results: FaultResult[] = []
  let failed = false
  try {
    const services = discoverServices(join(repoRoot, 'services'))
    // the gateway's 8080 and the services' ports of a run across hosts (startSystem's cluster: 3100 + n)
    const servicePorts = [8080, ...services.map((_, n) => 3100 + n)]
    cluster = await startCluster({
      prefix,
      subnet,
      servicePorts,
      log: say,
      secure,
      // notification's mail to the machine's Mailpit, as on one machine
      ...(process.env.SMTP_URL ? { smtpUrl: process.env.SMTP_URL } : {}),
    })
    const topicNames = (namespace: string) =>
      expandTopics(loadTopicDeclaration()).map((topic) => `${namespace}${topic.name}`)
    system = await startSystem({
      prefix: 'cluster',
      baseEnv: { ...process.env, ...cluster.env },
      cluster: cluster.system,
      topicReplication: clusterReplication,
      // two instances of every service by default, the gateway's too
      replicas: Object.fromEntries(services.map((service) => [service.name, replicas])),
      form: 'production',
      // the builds under plain node start on a fraction of a core each: what a start waits for is the cluster (its
      // group coordinators loading, Consul's agents), so they start eight at a time (two at a time, the short
      // campaign's nine services took 45-93 s to start)
      startConcurrency: 8,
      env,
      // no platform pauses before SIGTERM here: each instance keeps serving 1 s after leaving Consul
      settings: { LOG_LEVEL: process.env.CLUSTER_LOG_LEVEL ?? 'warn', DRAIN_PAUSE_MS: '1000' },
      log: say,
    })
    const topics = topicNames(system.kafkaNamespace)
    const client = e2eClient({ ...system, admin: system.admin ?? { email: '', password: '' } })
    const customers: Customer[] = []
    for (let i = 0; i < 10; i++) customers.push(await client.registerCustomer())
    await warmUp(client, customers[0] as Customer)
    system.gatewayUrls.forEach((url, i) => {
      for (const customer of customers.filter((_, n) => n % system!.gatewayUrls.length === i).slice(0, 3))
        watches.push(watchRealtime(url, customer))
    })
    for (const fault of chosen) {
      if (interrupted) break
      try {
        const result = await runFault(cluster, system, fault, { customers, watches, topics })
        results.push(result)
        process.stdout.write(`${report(result.reconciliation)}\n`)
        const r = result.reconciliation
        if (r.lost.length > 0 || r.duplicated.length > 0) failed = true
        if (fault.failsNoRequest && r.sent !== r.accepted) failed = true
        if (result.realtime.connected !== result.realtime.clients || result.realtime.missed > 0) failed = true
        if (result.deadLetters > 0) {
          say(`${fault.name}: ${result.deadLetters} event(s) given up (dead letters)`)
          failed = true
        }
        if (!result.revoked.refused) {
          say(
            `${fault.name}: a token revoked before the fault answered ${result.revoked.answers.join(', ')} after it`,
          )
          failed = true
        }
      } catch (error) {
        failed = true
        say(
          `${fault.name}: ${error instanceof Error ? error.stack : String(error)}; logs in ${system.runDir}`,
        )
      }
    }
  } finally {
    for (const watch of watches) watch.close()
    if (!interrupted) {
      await system?.close().catch((error: unknown) => say(`closing the system: ${String(error)}`))
      await (cluster ? cluster.destroy() : destroyCluster(prefix)).catch((error: unknown) =>
        say(`destroying the cluster: ${String(error)}`),
      )
    }
  }
  const printed = table(results)
  process.stdout.write(`\n${printed}\n`)
  mkdirSync(resultsDir, { recursive: true })
  const stamp = started.toISOString().replace(/[:.]/g, '-')
  writeFileSync(`${resultsDir}cluster-${stamp}.md`, `${printed}\n`)
  const json = `${JSON.stringify({ started, ratePerSecond, replicas, secure, results }, null, 2)}\n`
  writeFileSync(`${resultsDir}cluster-${stamp}.json`, json)
  if (process.env.CLUSTER_RESULTS) writeFileSync(process.env.CLUSTER_RESULTS, json)
  say(`results in ${resultsDir}cluster-${stamp}.{md,json}`)
  return failed ? 1 : 0
}

exitWith(main, say)
