// The upgrade campaign's short form (src/upgrade.ts): a system of its own started from the newest release, moved to
// this tree one instance at a time (order as two instances, so one old and one new share its consumer group for a
// while), the gateway last, with orders placed through the gateway at 2 per second all along. It runs beside the
// suite's shared system, which stays idle meanwhile.
import { scaledMs } from '@meridian/testkit'
import { describe, expect, it } from 'vitest'
import { report } from '../src/reconcile.ts'
import { upgradeCampaign, upgradeOrder } from '../src/upgrade.ts'

const say = (line: string) => process.stderr.write(`[upgrade] ${line}\n`)

describe('an upgrade from the newest release, one instance at a time', () => {
  it('when the instances are ordered for an upgrade, then second instances go before first ones and the gateway last', () => {
    const services = Object.fromEntries(
      ['gateway', 'order#2', 'auth', 'order', 'payment'].map((key) => [key, { name: key.split('#')[0] }]),
    ) as unknown as Parameters<typeof upgradeOrder>[0]['services']
    expect(upgradeOrder({ services })).toEqual(['order#2', 'auth', 'order', 'payment', 'gateway'])
  })

  it(
    'when every instance moves to this tree while orders are placed, then every accepted order settles once and nothing is lost or duplicated',
    async () => {
      const result = await upgradeCampaign({
        ratePerSecond: 2,
        ordersAfter: 10,
        replicas: { order: 2 },
        pauseMs: 1000,
        say,
      })
      say(report(result))
      expect(result.leftBehind).toEqual([])
      expect(result.upgraded.at(-1)).toBe('gateway')
      expect(result.upgraded).toContain('order#2')
      expect(result.accepted).toBeGreaterThan(0)
      // a service of one instance is away while it restarts: the client is told 503, or, while the gateway itself
      // restarts, finds no listener or a closing connection; a 4xx or any other 5xx would be the versions disagreeing
      const away = new Set(['503', 'ECONNREFUSED', 'ECONNRESET', 'UND_ERR_SOCKET'])
      expect(Object.keys(result.refused).filter((refusal) => !away.has(refusal))).toEqual([])
      expect(result.lost).toEqual([])
      expect(result.duplicated).toEqual([])
    },
    scaledMs(900_000),
  )
})
