// The upgrade campaign's short form (src/upgrade.ts): a system of its own started from the newest release, moved to
// this tree one instance at a time (order as two instances, so one old and one new share its consumer group for a
// while), the gateway last, with orders placed through the gateway at 2 per second all along, three shipped orders
// returned during the moves, and the contract migrations at the end. A file of alone/ (it needs not the suite's shared
// system): ./scripts/test runs it beside the end-to-end suite, once the API fuzzing has ended.
import { scaledMs } from '@meridian/testkit'
import { describe, expect, it } from 'vitest'
import { report } from '../src/reconcile.ts'
import { type UpgradeCampaignResult, upgradeCampaign, upgradeOrder, upgradeProblems } from '../src/upgrade.ts'

const say = (line: string) => process.stderr.write(`[upgrade] ${line}\n`)

describe('an upgrade from the newest release, one instance at a time', () => {
  it('when the instances are ordered for an upgrade, then second instances go before first ones and the gateway last', () => {
    const services = Object.fromEntries(
      ['gateway', 'order#2', 'auth', 'order', 'payment'].map((key) => [key, { name: key.split('#')[0] }]),
    ) as unknown as Parameters<typeof upgradeOrder>[0]['services']
    expect(upgradeOrder({ services })).toEqual(['order#2', 'auth', 'order', 'payment', 'gateway'])
  })

  it('when a campaign is judged, then an instance away may be refused while it restarts, but no other answer, loss, duplicate or event given up', () => {
    const clean: UpgradeCampaignResult = {
      ...({} as UpgradeCampaignResult),
      lost: [],
      duplicated: [],
      leftBehind: [],
      refused: { '503': 2, ECONNREFUSED: 1 },
      realtime: { clients: 2, connected: 2, reconnects: 3, resyncs: 0, forcedSignIns: 0, missed: 0 },
      returned: { asked: 2, completed: 2, refused: { '503': 1 }, problems: [] },
      deadLetters: {},
    }
    expect(upgradeProblems(clean, { nothingAway: false })).toEqual([])
    expect(upgradeProblems(clean, { nothingAway: true })).toEqual([
      'requests refused: 503 ×2, ECONNREFUSED ×1',
      'returns refused: 503 ×1',
    ])
    // what the deliberate break (src/upgrade-break.ts: a column dropped by an expand migration) made the release answer
    const broken = { ...clean, refused: { '500': 7, '503': 1 }, lost: ['order-1'] } as UpgradeCampaignResult
    expect(upgradeProblems(broken, { nothingAway: false })).toEqual([
      '1 accepted orders lost',
      'requests refused: 500 ×7',
    ])
    const returned = {
      ...clean,
      returned: { ...clean.returned, completed: 1, problems: ['return r-1: 2 refunds'] },
    }
    expect(upgradeProblems(returned, { nothingAway: false })).toEqual(['return r-1: 2 refunds'])
    // an event one version wrote that the other could not read is parked, not lost: the campaign fails all the same
    const unread = { ...clean, deadLetters: { 'order.placed.dlt': 2 } }
    expect(upgradeProblems(unread, { nothingAway: false })).toEqual(['events given up: order.placed.dlt ×2'])
    const unseen = {
      ...clean,
      refused: {},
      returned: { ...clean.returned, refused: {} },
      realtime: { ...clean.realtime, forcedSignIns: 1, missed: 2, connected: 1 },
    }
    expect(upgradeProblems(unseen, { nothingAway: true })).toEqual([
      '1 realtime clients sent to sign in again',
      '2 notifications never seen',
      '1 realtime clients not connected at the end',
    ])
  })

  it(
    'when every instance moves to this tree while orders are placed, then every accepted order settles once and nothing is lost or duplicated',
    async () => {
      const result = await upgradeCampaign({
        ratePerSecond: 2,
        ordersAfter: 10,
        replicas: { order: 2 },
        pauseMs: 1000,
        returns: 3,
        say,
      })
      say(report(result))
      say(`returns during the moves: ${JSON.stringify(result.returned)}`)
      expect(upgradeProblems(result, { nothingAway: false })).toEqual([])
      expect(result.upgraded.at(-1)).toBe('gateway')
      expect(result.upgraded).toContain('order#2')
      expect(result.accepted).toBeGreaterThan(0)
      expect(result.returned).toMatchObject({ asked: 3, completed: 3 })
      // every service with a database ran its contract migrations once the last instance had moved
      expect(result.contracted.map((line) => line.split(':')[0])).toEqual(
        expect.arrayContaining(['auth', 'order', 'payment', 'inventory', 'shipping']),
      )
    },
    scaledMs(900_000),
  )
})
