// The upgrade's schema check shown failing on a deliberate break (src/upgrade-break.ts): the release's system of what an
// order needs, its order service moved to this tree's last commit plus one expand migration that drops a column the
// release writes with every order (orders.request_hash), orders placed at 2 per second all along. Once the new
// instance has applied the migration, the release's instances' orders fail: the campaign must say so, and lose
// nothing it had accepted. ./scripts/lint-migrations refuses such a migration (squawk's ban-drop-column); this is the
// check behind the linter, for what it lets through.
import { scaledMs } from '@meridian/testkit'
import { describe, expect, it } from 'vitest'
import { report } from '../src/reconcile.ts'
import { upgradeCampaign, upgradeProblems } from '../src/upgrade.ts'
import { brokenTree } from '../src/upgrade-break.ts'

const say = (line: string) => process.stderr.write(`[upgrade-break] ${line}\n`)

describe('an upgrade to a tree whose expand migration breaks the release', () => {
  it(
    "when order moves to it while orders are placed, then the release's orders are refused with 500 and the campaign fails, losing nothing it accepted",
    async () => {
      const result = await upgradeCampaign({
        to: await brokenTree(say),
        only: ['auth', 'order', 'inventory', 'payment', 'shipping', 'gateway'],
        move: ['order'],
        contract: false,
        ratePerSecond: 2,
        ordersAfter: 6,
        // orders accepted before the move: the system worked until the migration
        pauseMs: 3000,
        say,
      })
      say(report(result))
      expect(result.upgraded).toEqual(['order'])
      expect(result.accepted).toBeGreaterThan(0)
      // the one problem: orders answered 500 (lost and duplicated are empty, or they would be named first)
      expect(upgradeProblems(result, { nothingAway: false })).toEqual([
        expect.stringMatching(/^requests refused: 500 ×\d+$/),
      ])
    },
    scaledMs(600_000),
  )
})
