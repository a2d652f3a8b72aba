// A deliberate incompatible change, to show that the upgrade campaign catches one: this tree's last commit with one
// more expand migration in the order service that drops a column the previous release still writes (orders'
// request_hash, the fingerprint of an Idempotency-Key request). It is the mistake expand/contract exists to prevent —
// the drop belongs in a contract migration, after every instance has stopped using the column. ./scripts/lint-migrations
// would refuse it here (squawk's ban-drop-column); the campaign is the check behind the linter, for what a linter lets
// through (an exception given for a wrong reason, a drop done in code). Made with infra's checkoutTree in the cache
// folder, once per commit.
import { readdirSync } from 'node:fs'
import { join } from 'node:path'
import { layoutFromEnv, repoRoot, run } from '@meridian/infra'
import { checkoutTree } from '@meridian/infra/release-checkout'

/** The broken migration's SQL: an expand migration (no `-- meridian: contract` line) that drops a used column. */
export const breakingMigration = `-- A deliberate break (tests/e2e/src/upgrade-break.ts): a column the previous release writes with every order,
-- dropped before the new code starts.
alter table orders drop column request_hash;
`

/** The migration's file name: the order service's next number in this tree. */
export function breakingMigrationFile(root = repoRoot): string {
  const numbers = readdirSync(join(root, 'services', 'order', 'migrations'))
    .map((file) => /^(\d{4})_.*\.sql$/.exec(file)?.[1])
    .filter((number): number is string => number !== undefined)
    .map(Number)
  const next = String(Math.max(0, ...numbers) + 1).padStart(4, '0')
  return `services/order/migrations/${next}_break_drop_request_hash.sql`
}

/** This tree's last commit with the breaking migration, installed: what a campaign's instances move to. */
export async function brokenTree(
  progress?: (line: string) => void,
): Promise<{ label: string; root: string }> {
  const commit = (await run('git', ['rev-parse', 'HEAD'], { cwd: repoRoot })).trim()
  const dir = join(layoutFromEnv().componentDir('upgrade-breaks'), 'drop-request-hash')
  await checkoutTree({
    commit,
    dir,
    extraFiles: { [breakingMigrationFile()]: breakingMigration },
    label: 'the broken tree',
    progress,
  })
  return { label: `${commit.slice(0, 12)} with an expand migration dropping orders.request_hash`, root: dir }
}
