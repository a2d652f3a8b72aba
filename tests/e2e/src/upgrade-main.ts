// `pnpm --filter @meridian/e2e upgrade-campaign`: the upgrade campaign (src/upgrade.ts) with its knobs; exits 1 when the
// upgrade broke a promise (upgradeProblems): an order lost or an effect duplicated, an instance left on the release, a
// request refused other than by an instance being away, an event some consumer gave up on (a dead letter), and, when
// every service runs two instances or more (nothing need be away), any refusal, a realtime client sent to sign in
// again or a notification missed.
//
// Knobs: UPGRADE_FROM (a version under releases/; default the newest), UPGRADE_RATE (orders/s, 2), UPGRADE_ORDERS_AFTER
// (orders once every instance has moved, 10), UPGRADE_REPLICAS (instances per service, `order=2,payment=2`, `*=2` for
// every service and the gateway; default order=2), UPGRADE_REALTIME_CLIENTS (customers connected on /notifications
// all along, 6), UPGRADE_RETURNS (shipped orders returned during the moves, one after each instance moved, 6),
// UPGRADE_FORM (development: the trees' sources; images: the release's images moved to this tree's, each built by
// its own scripts/images when missing), UPGRADE_BREAK=drop-column (move to this tree's last commit with an expand
// migration that drops a column the release still writes, src/upgrade-break.ts: the campaign must fail).
import { join } from 'node:path'
import { repoRoot } from '@meridian/infra'
import { discoverServices } from '@meridian/infra/system'
import { exitWith } from './campaign.ts'
import { report } from './reconcile.ts'
import { upgradeCampaign, upgradeProblems } from './upgrade.ts'
import { brokenTree } from './upgrade-break.ts'

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
  const form = process.env.UPGRADE_FORM ?? 'development'
  if (form !== 'development' && form !== 'images')
    throw new Error(`UPGRADE_FORM: '${form}' is neither development nor images`)
  const broken = process.env.UPGRADE_BREAK
  if (broken !== undefined && broken !== 'drop-column')
    throw new Error(`UPGRADE_BREAK: '${broken}' is not a known break (drop-column)`)
  const result = await upgradeCampaign({
    ...(process.env.UPGRADE_FROM ? { from: process.env.UPGRADE_FROM } : {}),
    ...(broken ? { to: await brokenTree(say) } : {}),
    form,
    ratePerSecond: Number(process.env.UPGRADE_RATE ?? 2),
    ordersAfter: Number(process.env.UPGRADE_ORDERS_AFTER ?? 10),
    replicas,
    realtimeClients: Number(process.env.UPGRADE_REALTIME_CLIENTS ?? 6),
    returns: Number(process.env.UPGRADE_RETURNS ?? 6),
    say,
  })
  const { realtime } = result
  process.stdout.write(
    `${report(result)}\nmoved, in order: ${result.upgraded.join(', ')}\ncontract migrations: ${result.contracted.join('; ')}\nreturns during the moves: ${result.returned.completed}/${result.returned.asked} completed and refunded once\nrealtime clients: ${realtime.connected}/${realtime.clients} connected at the end, ${realtime.reconnects} reconnects, ${realtime.resyncs} resyncs, ${realtime.forcedSignIns} forced sign-ins, ${realtime.missed} notifications missed\nevents given up (dead letters not replayed): ${Object.values(result.deadLetters).reduce((sum, count) => sum + count, 0)}\n`,
  )
  // with two instances of everything nothing need be away, so nothing should be noticed
  const nothingAway = services.every((name) => (replicas[name] ?? 1) >= 2)
  const problems = upgradeProblems(result, { nothingAway })
  process.stdout.write(
    problems.length ? `the upgrade failed: ${problems.join('; ')}\n` : 'the upgrade went through\n',
  )
  return problems.length ? 1 : 0
}

exitWith(main, say)
