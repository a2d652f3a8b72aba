// `pnpm --filter @meridian/e2e upgrade`: the upgrade campaign (src/upgrade.ts) with its knobs; exits 1 when an order
// was lost or an effect duplicated, or an instance was left on the release.
//
// Knobs: UPGRADE_FROM (a version under releases/; default the newest), UPGRADE_RATE (orders/s, 2), UPGRADE_ORDERS_AFTER
// (orders once every instance has moved, 10), UPGRADE_REPLICAS (instances per service, `order=2,payment=2`; default
// order=2).
import { exitWith } from './campaign.ts'
import { report } from './reconcile.ts'
import { upgradeCampaign } from './upgrade.ts'

const say = (line: string) => process.stderr.write(`[upgrade] ${line}\n`)

function replicasFrom(text: string): Record<string, number> {
  const replicas: Record<string, number> = {}
  for (const part of text.split(',').filter(Boolean)) {
    const [name = '', count = ''] = part.split('=')
    if (!/^[a-z][a-z-]*$/.test(name) || !/^[1-9]\d?$/.test(count))
      throw new Error(`UPGRADE_REPLICAS: '${part}' is not <service>=<instances from 1 to 99>`)
    replicas[name] = Number(count)
  }
  return replicas
}

async function main(): Promise<number> {
  const result = await upgradeCampaign({
    ...(process.env.UPGRADE_FROM ? { from: process.env.UPGRADE_FROM } : {}),
    ratePerSecond: Number(process.env.UPGRADE_RATE ?? 2),
    ordersAfter: Number(process.env.UPGRADE_ORDERS_AFTER ?? 10),
    replicas: replicasFrom(process.env.UPGRADE_REPLICAS ?? 'order=2'),
    say,
  })
  process.stdout.write(`${report(result)}\nmoved, in order: ${result.upgraded.join(', ')}\n`)
  const failed = result.lost.length > 0 || result.duplicated.length > 0 || result.leftBehind.length > 0
  return failed ? 1 : 0
}

exitWith(main, say)
