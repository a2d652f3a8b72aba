// The upgrade campaign: the whole system started from the newest release's tree (its tag unpacked and installed,
// infra/src/release/checkout.ts), then moved to this tree one instance at a time, the gateway last, while orders are
// placed through the gateway at a steady pace. Each instance drains on SIGTERM and its successor applies this tree's
// expand migrations as it starts, so for the length of the campaign both versions run side by side against one schema,
// one event stream and one another's HTTP. With two instances of order, the saga's owner runs as one old and one new
// instance in the same consumer group for a while. Shipped orders are returned during the moves, one after each
// (src/upgrade-returns.ts), and once the last instance has moved every service's contract migrations run. Once every
// order has settled, the reconciliation (src/reconcile.ts): no accepted order lost, no effect duplicated; each return
// completed and refunded once. With two instances of everything, the gateway
// included, orders go through a load balancer over the gateways (src/gateway-balancer.ts), and customers' realtime
// clients stay connected on /notifications all along: then nothing should be refused, no client should be told to
// sign in again, and no notification should go unseen.
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import type { DeadLetterTopics } from '@meridian/contracts'
import { createDatabase } from '@meridian/db'
import { freePort, layoutFromEnv, repoRoot, runLogged } from '@meridian/infra'
import { releasedVersions } from '@meridian/infra/openapi-compat'
import { releaseCheckout } from '@meridian/infra/release-checkout'
import { type MeridianSystem, startSystem } from '@meridian/infra/system'
import { eventually } from '@meridian/testkit'
import { campaignTimings } from './campaign.ts'
import { type Caller, type Customer, type E2eClient, e2eClient } from './client.ts'
import { realtimeSettings } from './global-setup.ts'
import { runOrderFault } from './order-faults.ts'
import { eventuallyMissed, type RealtimeWatch, watchRealtime } from './realtime-watch.ts'
import type { Reconciliation } from './reconcile.ts'
import {
  awayWhileRestarting,
  type ReturnsAccount,
  returnOne,
  returnsAccount,
  shippedOrders,
} from './upgrade-returns.ts'

export interface UpgradeCampaignOptions {
  /** the release to start from; default the newest under releases/ */
  from?: string
  /** orders per second through the gateway */
  ratePerSecond: number
  /** orders placed once every instance runs this tree */
  ordersAfter: number
  /** instances per service (default 1); two gateways are balanced (orders and realtime clients spread over them) */
  replicas?: Record<string, number>
  /** customers with a realtime client on /notifications through the campaign (default 0), spread over the gateways */
  realtimeClients?: number
  /** pause between two instances' upgrades, for orders to flow through the mixed system */
  pauseMs?: number
  /** orders shipped before the moves and returned during them, one after each instance moved (default 0) */
  returns?: number
  /**
   * development (default): every instance runs a tree's sources; images: the release's images
   * (meridian/<name>:<version>, built by the release's own scripts/images when missing) moved to this tree's images
   * (./scripts/images), as a deployment moves its containers
   */
  form?: 'development' | 'images'
  /** the tree every instance moves to and its name; default this tree (src/upgrade-break.ts gives a broken one) */
  to?: { label: string; root: string }
  /** the services the system runs (default every one) */
  only?: string[]
  /** the instances moved, in upgradeOrder's order (default every one) */
  move?: string[]
  /** every service's contract migrations once the instances have moved (default true) */
  contract?: boolean
  say: (line: string) => void
}

export interface UpgradeCampaignResult extends Reconciliation {
  from: string
  /** the instances in the order they were moved */
  upgraded: string[]
  /** instances to be moved still on the release at the end (none when the campaign went through) */
  leftBehind: string[]
  /**
   * what each service's contract migrations did once every instance had moved (`migrate --contract`, one line per
   * service with a database), before the orders placed after the move
   */
  contracted: string[]
  /** the realtime clients' account (all 0 but `clients` and `connected` when nobody noticed the upgrade) */
  realtime: UpgradeRealtime
  /** the returns asked for and received during the moves, once settled (src/upgrade-returns.ts) */
  returned: ReturnsAccount
  /**
   * events some consumer gave up on during the campaign (its dead-letter topics' events not replayed, as the gateway's
   * /api/v1/admin/dead-letters counts them once the orders have settled): an event one version wrote that the other
   * could not read, or work it could not do
   */
  deadLetters: Record<string, number>
}

export interface UpgradeRealtime {
  clients: number
  /** connected at the end */
  connected: number
  reconnects: number
  /** reconnections that could not recover the session (the client fetched its list again) */
  resyncs: number
  /** credentials the server refused (auth:failed): each a user sent to sign in again */
  forcedSignIns: number
  /** notifications of the watched customers that their clients never saw */
  missed: number
}

/** The instances in the order they move: the second instances before the first, every service before the gateway. */
export function upgradeOrder(system: Pick<MeridianSystem, 'services'>): string[] {
  const keys = Object.keys(system.services)
  const isGateway = (key: string) => system.services[key]?.name === 'gateway'
  const rank = (key: string) => (isGateway(key) ? 2 : key.includes('#') ? 0 : 1)
  return keys.sort((a, b) => rank(a) - rank(b) || a.localeCompare(b))
}

export async function upgradeCampaign(options: UpgradeCampaignOptions): Promise<UpgradeCampaignResult> {
  const { say } = options
  const from = options.from ?? releasedVersions(repoRoot)[0]
  if (from === undefined) throw new Error('no release under releases/ to upgrade from')
  const release = await releaseCheckout(from, { progress: say })
  const form = options.form ?? 'development'
  if (form === 'images') {
    const logFile = join(layoutFromEnv().componentDir('images'), `upgrade-from-${from}.log`)
    // this tree's are built by startSystem's images form
    say(`the images of ${from}: its own scripts/images, which keeps those built before (log: ${logFile})`)
    await runLogged(join(release.root, 'scripts', 'images'), [], { cwd: release.root, logFile })
  }
  const system = await startSystem({
    form,
    prefix: 'upgrade',
    gatewayPort: await freePort(),
    simulatorPort: 0,
    release,
    ...(options.to ? { upgradeTo: options.to } : {}),
    ...(options.replicas ? { replicas: options.replicas } : {}),
    ...(options.only ? { only: options.only } : {}),
    // the realtime clients all come from this machine's address: its connection limits are the e2e suite's
    env: { ...campaignTimings, 'realtime-gateway': realtimeSettings },
    // each instance keeps serving 1 s after leaving Consul, as behind a platform's load balancer
    settings: { LOG_LEVEL: 'warn', DRAIN_PAUSE_MS: '1000' },
    log: say,
  })
  const upgraded: string[] = []
  const contracted: string[] = []
  const watches: RealtimeWatch[] = []
  let since = new Date()
  try {
    const client = e2eClient({ ...system, admin: system.admin ?? { email: '', password: '' } })
    const customers: Customer[] = []
    for (let i = 0; i < Math.max(10, options.realtimeClients ?? 0); i++)
      customers.push(await client.registerCustomer())
    for (const [i, customer] of customers.slice(0, options.realtimeClients ?? 0).entries())
      watches.push(watchRealtime(system.gatewayUrls[i % system.gatewayUrls.length] as string, customer))
    // what the clients must see is what comes once they listen (a customer's welcome came before)
    await eventually('every realtime client is connected', () => watches.every((watch) => watch.connected))
    const admin = await client.loginAdmin()
    const returnCases = await shippedOrders(client, admin, options.returns ?? 0)
    const returnsRefused: Record<string, number> = {}
    let returning: Promise<void> = Promise.resolve()
    since = new Date()
    const result = await runOrderFault(
      system,
      {
        name: `upgrade-from-${from}`,
        what: `${options.move ? options.move.join(', ') : 'every instance'} moved from ${from} to ${options.to?.label ?? 'this tree'}, one at a time, the gateway last${(options.contract ?? true) ? ', then the contract migrations' : ''}`,
        async strike(running) {
          const moving = upgradeOrder(running).filter((key) => options.move?.includes(key) ?? true)
          for (const key of moving) {
            await sleep(options.pauseMs ?? 2000)
            await running.upgrade(key)
            upgraded.push(key)
            // one return after each move, asked and received while the next instances move
            const next = returnCases[upgraded.length - 1]
            if (next) returning = returning.then(() => returnOne(client, admin, next, returnsRefused))
          }
          await returning
          if (options.contract ?? true) contracted.push(...(await contractMigrations(running)))
          for (const line of contracted) say(line)
        },
      },
      {
        orders: options.ordersAfter,
        untilStruck: true,
        ratePerSecond: options.ratePerSecond,
        stock: 100_000,
        customers,
        balanced: system.gatewayUrls.length > 1,
        say,
      },
    )
    const leftBehind = Object.entries(system.services)
      .filter(([key, info]) => info.release !== undefined && (options.move?.includes(key) ?? true))
      .map(([key]) => key)
    return {
      ...result,
      from,
      upgraded,
      leftBehind,
      contracted,
      realtime: await realtimeAccount(system, watches, since, say),
      returned: await returnsAccount(client, returnCases, returnsRefused),
      deadLetters: await deadLettersOf(client, admin),
    }
  } catch (error) {
    throw new Error(`${error instanceof Error ? error.message : String(error)}; logs in ${system.runDir}`)
  } finally {
    for (const watch of watches) watch.close()
    await system.close()
  }
}

/**
 * Every service's contract migrations, as an operator runs them once no instance of the previous release is left:
 * `migrate --contract` of the code the instances moved to (the system's migrate: sources, build or image), on each
 * service's database. Its lines (applied, or up to date); a failure throws, which fails the campaign.
 */
async function contractMigrations(system: MeridianSystem): Promise<string[]> {
  const firsts = new Map<string, string>()
  for (const [key, info] of Object.entries(system.services))
    if (info.databaseUrl !== undefined && !firsts.has(info.name)) firsts.set(info.name, key)
  // each on its own database, so all at once: each is a process start (1-3 s), eight one after the other
  return Promise.all(
    [...firsts].map(async ([name, key]) => {
      const output = await system.migrate(key, ['--contract'])
      // the command's own line (a service's logger may print before it)
      return (
        output
          .trim()
          .split('\n')
          .findLast((line) => line.startsWith(`${name}: `)) ?? output.trim()
      )
    }),
  )
}

/** The system's dead-letter topics holding events not replayed, with how many, through the gateway's admin API. */
async function deadLettersOf(client: E2eClient, admin: Caller): Promise<Record<string, number>> {
  const { body } = await client.request<DeadLetterTopics>('GET', '/api/v1/admin/dead-letters', {
    token: admin.token,
  })
  if (body.data === undefined)
    throw new Error(`the dead letters could not be listed: ${JSON.stringify(body)}`)
  return Object.fromEntries(
    body.data.filter((topic) => topic.pending > 0).map((topic) => [topic.topic, topic.pending]),
  )
}

/** Which promises of an upgrade the campaign broke: empty when it went through. */
export function upgradeProblems(result: UpgradeCampaignResult, options: { nothingAway: boolean }): string[] {
  const problems: string[] = []
  if (result.lost.length > 0) problems.push(`${result.lost.length} accepted orders lost`)
  if (result.duplicated.length > 0) problems.push(`${result.duplicated.length} orders' effects duplicated`)
  if (result.leftBehind.length > 0) problems.push(`left on the release: ${result.leftBehind.join(', ')}`)
  // a service of one instance is away while it restarts (awayWhileRestarting); anything else is the versions disagreeing
  const away = awayWhileRestarting
  const refusals = Object.entries(result.refused).filter(([why]) => options.nothingAway || !away.has(why))
  if (refusals.length > 0)
    problems.push(`requests refused: ${refusals.map(([why, count]) => `${why} ×${count}`).join(', ')}`)
  problems.push(...result.returned.problems)
  const deadLetters = Object.entries(result.deadLetters)
  if (deadLetters.length > 0)
    problems.push(`events given up: ${deadLetters.map(([topic, count]) => `${topic} ×${count}`).join(', ')}`)
  if (options.nothingAway) {
    const { realtime } = result
    if (realtime.forcedSignIns > 0)
      problems.push(`${realtime.forcedSignIns} realtime clients sent to sign in again`)
    if (realtime.missed > 0) problems.push(`${realtime.missed} notifications never seen`)
    if (realtime.connected < realtime.clients)
      problems.push(`${realtime.clients - realtime.connected} realtime clients not connected at the end`)
    const returnsRefused = Object.entries(result.returned.refused).filter(([why]) => away.has(why))
    if (returnsRefused.length > 0)
      problems.push(`returns refused: ${returnsRefused.map(([why, count]) => `${why} ×${count}`).join(', ')}`)
  }
  return problems
}

/** What the realtime clients lived through, once the orders have settled (their last notifications given 20 s). */
async function realtimeAccount(
  system: MeridianSystem,
  watches: RealtimeWatch[],
  since: Date,
  say: (line: string) => void,
): Promise<UpgradeRealtime> {
  const sum = (count: (watch: RealtimeWatch) => number) =>
    watches.reduce((total, watch) => total + count(watch), 0)
  const url = system.services.notification?.databaseUrl
  let missed = 0
  if (url && watches.length > 0) {
    const notifications = createDatabase(url, { max: 1, applicationName: 'upgrade-campaign' })
    try {
      missed = await eventuallyMissed(notifications, watches, since, say)
    } finally {
      await notifications.end()
    }
  }
  return {
    clients: watches.length,
    connected: watches.filter((watch) => watch.connected).length,
    reconnects: sum((watch) => watch.reconnects),
    resyncs: sum((watch) => watch.resyncs),
    forcedSignIns: sum((watch) => watch.authFailures),
    missed,
  }
}
