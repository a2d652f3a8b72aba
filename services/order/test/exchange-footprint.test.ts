// The exchange was built as a process of the order service alone: payment, inventory and shipping answer its commands
// as they answer any order's, so no commit of the exchange touched their sources. Read from the repository's history:
// every commit that touched an exchange file (its machine, commands, declaration, use cases, routes, contracts, tests)
// and every file those commits touched.
import { execFileSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'

const root = fileURLToPath(new URL('../../../', import.meta.url))
const git = (...args: string[]) =>
  execFileSync('git', args, { cwd: root, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 })
    .split('\n')
    .filter((line) => line.length > 0)

/** The files that make the exchange: any change to one of them is one of the exchange's commits. */
const exchangeFiles = [
  'services/order/src/domain/exchange-machine.ts',
  'services/order/src/domain/exchange-commands.ts',
  'services/order/src/domain/exchange-process.ts',
  'services/order/src/domain/exchanges.ts',
  'services/order/src/data/exchanges-repository.ts',
  'services/order/src/routes/exchanges/index.ts',
  'services/order/migrations/0008_exchanges.sql',
  'packages/contracts/src/exchanges.ts',
  'tests/e2e/test/exchanges.test.ts',
]

describe("the exchange's footprint", () => {
  it("when the commits that made the exchange are listed, then none of them touched payment's, inventory's or shipping's source", () => {
    const commits = git('log', '--format=%H', '--', ...exchangeFiles)
    // a checkout without its history cannot tell: that is a failure to see, not a pass
    expect(commits.length, 'the exchange has commits in this clone').toBeGreaterThan(0)
    const touched = new Set(commits.flatMap((commit) => git('show', '--name-only', '--format=', commit)))
    expect([...touched].filter((file) => /^services\/(payment|inventory|shipping)\//.test(file))).toEqual([])
    // and the list is the exchange's: its machine is among what they touched
    expect(touched).toContain('services/order/src/domain/exchange-machine.ts')
  })
})
