// `pnpm --filter @meridian/e2e upgrade-campaign`: the upgrade campaign (src/upgrade.ts) with its knobs; exits 1 when an order
// was lost or an effect duplicated, or an instance was left on the release, and, when every service runs two
// instances or more (nothing need be away), when a request was refused, a realtime client was sent to sign in again
// or missed a notification.
//
// Knobs: UPGRADE_FROM (a version under releases/; default the newest), UPGRADE_RATE (orders/s, 2), UPGRADE_ORDERS_AFTER
// (orders once every instance has moved, 10), UPGRADE_REPLICAS (instances per service, `order=2,payment=2`, `*=2` for
// every service and the gateway; default order=2), UPGRADE_REALTIME_CLIENTS (customers connected on /notifications
// all along, 6).
import { join } from 'node:path'
import { repoRoot } from '@meridian/infra'
import { discoverServices } from '@meridian/infra/system'
import { exitWith } from './campaign.ts'
import { pairs, report } from './reconcile.ts'
import { upgradeCampaign } from './upgrade.ts'

const say = (line: string) => process.stderr.write(`[upgrade] ${line}\n`)

/** this tree's services, by name */
const services = discoverServices(join(repoRoot, 'services')).map((service) => service.name)

function replicasFrom(text: string): Record<string, number> {
  const replicas: Record<string, number> = {}
  for (const part of text.split(',').filter(Boolean)) {
    const [name = '', count = ''] = part.split('=')
    if (!/^([a-z][a-z-]*|\*)$/.test(name) || !/^[1-9]\d?$/.test(count))
      throw new Error(`UPGRADE_REPLICAS: '${part}' is not <service or *>=<instances from 1 to 99>`)
    for (const each of name === '*' ? services : [name]) replicas[each] = Number(count)
  }
  return replicas
}

async function main(): Promise<number> {
  const replicas = replicasFrom(process.env.UPGRADE_REPLICAS ?? 'order=2')
  const result = await upgradeCampaign({
    ...(process.env.UPGRADE_FROM ? { from: process.env.UPGRADE_FROM } : {}),
    ratePerSecond: Number(process.env.UPGRADE_RATE ?? 2),
    ordersAfter: Number(process.env.UPGRADE_ORDERS_AFTER ?? 10),
    replicas,
    realtimeClients: Number(process.env.UPGRADE_REALTIME_CLIENTS ?? 6),
    say,
  })
  const { realtime } = result
  process.stdout.write(
    `${report(result)}\nmoved, in order: ${result.upgraded.join(', ')}\nrealtime clients: ${realtime.connected}/${realtime.clients} connected at the end, ${realtime.reconnects} reconnects, ${realtime.resyncs} resyncs, ${realtime.forcedSignIns} forced sign-ins, ${realtime.missed} notifications missed\n`,
  )
  const failed = result.lost.length > 0 || result.duplicated.length > 0 || result.leftBehind.length > 0
  const everyServiceTwice = services.every((name) => (replicas[name] ?? 1) >= 2)
  const noticed =
    Object.keys(result.refused).length > 0 ||
    realtime.forcedSignIns > 0 ||
    realtime.missed > 0 ||
    realtime.connected < realtime.clients
  if (everyServiceTwice && noticed)
    say(
      `with two instances of everything nothing should be noticed: refused ${pairs(result.refused) || 'none'}`,
    )
  return failed || (everyServiceTwice && noticed) ? 1 : 0
}

exitWith(main, say)
