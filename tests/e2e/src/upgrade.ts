// The upgrade campaign: the whole system started from the newest release's tree (its tag unpacked and installed,
// infra/src/release/checkout.ts), then moved to this tree one instance at a time, the gateway last, while orders are
// placed through the gateway at a steady pace. Each instance drains on SIGTERM and its successor applies this tree's
// expand migrations as it starts, so for the length of the campaign both versions run side by side against one schema,
// one event stream and one another's HTTP. With two instances of order, the saga's owner runs as one old and one new
// instance in the same consumer group for a while. Once every order has settled, the reconciliation
// (src/reconcile.ts): no accepted order lost, no effect duplicated.
import { setTimeout as sleep } from 'node:timers/promises'
import { freePort, repoRoot } from '@meridian/infra'
import { releasedVersions } from '@meridian/infra/openapi-compat'
import { releaseCheckout } from '@meridian/infra/release-checkout'
import { type MeridianSystem, startSystem } from '@meridian/infra/system'
import { campaignTimings } from './campaign.ts'
import { runOrderFault } from './order-faults.ts'
import type { Reconciliation } from './reconcile.ts'

export interface UpgradeCampaignOptions {
  /** the release to start from; default the newest under releases/ */
  from?: string
  /** orders per second through the gateway */
  ratePerSecond: number
  /** orders placed once every instance runs this tree */
  ordersAfter: number
  /** instances per service (default 1; the gateway keeps one: it is the campaign's address) */
  replicas?: Record<string, number>
  /** pause between two instances' upgrades, for orders to flow through the mixed system */
  pauseMs?: number
  say: (line: string) => void
}

export interface UpgradeCampaignResult extends Reconciliation {
  from: string
  /** the instances in the order they were moved */
  upgraded: string[]
  /** instances still on the release at the end (none when the campaign went through) */
  leftBehind: string[]
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
  const system = await startSystem({
    prefix: 'upgrade',
    gatewayPort: await freePort(),
    simulatorPort: 0,
    release,
    ...(options.replicas ? { replicas: options.replicas } : {}),
    env: campaignTimings,
    settings: { LOG_LEVEL: 'warn' },
    log: say,
  })
  const upgraded: string[] = []
  try {
    const result = await runOrderFault(
      system,
      {
        name: `upgrade-from-${from}`,
        what: `every instance moved from ${from} to this tree, one at a time, the gateway last`,
        async strike(running) {
          for (const key of upgradeOrder(running)) {
            await sleep(options.pauseMs ?? 2000)
            await running.upgrade(key)
            upgraded.push(key)
          }
        },
      },
      {
        orders: options.ordersAfter,
        untilStruck: true,
        ratePerSecond: options.ratePerSecond,
        stock: 100_000,
        say,
      },
    )
    const leftBehind = Object.entries(system.services)
      .filter(([, info]) => info.release !== undefined)
      .map(([key]) => key)
    return { ...result, from, upgraded, leftBehind }
  } catch (error) {
    throw new Error(`${error instanceof Error ? error.message : String(error)}; logs in ${system.runDir}`)
  } finally {
    await system.close()
  }
}
