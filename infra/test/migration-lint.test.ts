// lintMigrations: squawk with the repository's .squawk.toml fails an unsafe migration, honours a file's
// `-- squawk-ignore`, lints a no-transaction migration as it runs, and reports a pre-release exception gone stale.
import { copyFile, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { lintMigrations } from '../src/migration-lint/lint.ts'

const repoRoot = fileURLToPath(new URL('../..', import.meta.url))
const squawk = join(repoRoot, 'infra/node_modules/.bin/squawk')
let root: string

// An existing table first, so squawk judges the later files as changes to a table in use.
const existing = 'create table orders (id bigint primary key, total_cents bigint not null);\n'

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'meridian-migration-lint-'))
  await mkdir(join(root, 'services/shop/migrations'), { recursive: true })
  await mkdir(join(root, 'packages'), { recursive: true })
  await copyFile(join(repoRoot, '.squawk.toml'), join(root, '.squawk.toml'))
  await writeFile(join(root, 'services/shop/migrations/0001_orders.sql'), existing)
})

afterAll(async () => {
  await rm(root, { recursive: true, force: true })
})

async function lintOne(name: string, sql: string, exceptions: Record<string, string[]> = {}) {
  const file = `services/shop/migrations/${name}`
  await writeFile(join(root, file), sql)
  return lintMigrations({ root, squawk, files: [file], exceptions })
}

describe('lintMigrations', () => {
  it('when a migration adds a NOT NULL column without a default to an existing table, then it is a violation', async () => {
    const result = await lintOne('0002_note.sql', 'alter table orders add column note text not null;\n')

    expect(result.violations.map((finding) => finding.rule)).toContain('adding-required-field')
  })

  it('when a migration creates an index without concurrently, then it is a violation on its line', async () => {
    const result = await lintOne(
      '0003_total_idx.sql',
      '\ncreate index orders_total on orders (total_cents);\n',
    )

    expect(result.violations).toEqual([
      expect.objectContaining({
        file: 'services/shop/migrations/0003_total_idx.sql',
        line: 2,
        rule: 'require-concurrent-index-creation',
      }),
    ])
  })

  it('when the file ignores the rule with a squawk-ignore comment, then the finding is gone', async () => {
    const result = await lintOne(
      '0004_total_idx.sql',
      '-- the table holds a few hundred rows: built in a transaction, a blink\n' +
        '-- squawk-ignore require-concurrent-index-creation\n' +
        'create index orders_total on orders (total_cents);\n',
    )

    expect(result.violations).toEqual([])
  })

  it('when a no-transaction migration builds its index concurrently, then it passes', async () => {
    const result = await lintOne(
      '0005_total_idx.sql',
      '-- meridian: no-transaction\ncreate index concurrently if not exists orders_total on orders (total_cents);\n',
    )

    expect(result.violations).toEqual([])
  })

  it('when a finding is on the exception list, then it is accepted; when nothing matches an entry, it is stale', async () => {
    const file = 'services/shop/migrations/0006_total_idx.sql'
    const result = await lintOne(
      '0006_total_idx.sql',
      'create index orders_total on orders (total_cents);\n',
      {
        [file]: ['require-concurrent-index-creation', 'ban-drop-table'],
      },
    )

    expect(result.violations).toEqual([])
    expect(result.accepted.map((finding) => finding.rule)).toEqual(['require-concurrent-index-creation'])
    expect(result.staleExceptions).toEqual([{ file, rule: 'ban-drop-table' }])
  })

  it("when the repository's own migrations are linted, then none is a violation", async () => {
    const result = await lintMigrations({ root: repoRoot, squawk })

    expect(result.files.length).toBeGreaterThan(40)
    expect(result.violations).toEqual([])
    expect(result.staleExceptions).toEqual([])
  })
})
