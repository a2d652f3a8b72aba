// migrate(): numbered files in order, once, under the advisory lock; bad folders, changed files and failures rejected.
import { createHash } from 'node:crypto'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { freshDatabase, type TestDatabase } from '@meridian/testkit'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createDatabase, MIGRATION_LOCK_NAME, MigrationError, migrate, type Sql } from '../src/index.ts'

let db: TestDatabase
const clients: Sql[] = []
const folders: string[] = []
let schemas = 0

beforeAll(async () => {
  db = await freshDatabase('db_migrate')
})

afterAll(async () => {
  await Promise.all(clients.map((client) => client.end({ timeout: 5 })))
  await Promise.all(folders.map((folder) => rm(folder, { recursive: true, force: true })))
  await db?.drop()
})

/**
 * A client whose tables land in a schema of their own, so every test starts from an empty schema in this file's
 * database (the advisory lock is per database, which the tests share one after another).
 */
async function emptySchema(): Promise<{ schema: string; connect(): Sql }> {
  const schema = `migrate_${++schemas}`
  await db.sql`create schema ${db.sql(schema)}`
  const url = new URL(db.url)
  url.searchParams.set('search_path', schema)
  return {
    schema,
    connect() {
      const client = createDatabase(url.toString(), { max: 2 })
      clients.push(client)
      return client
    },
  }
}

/** A temporary migrations folder holding `files` (name -> content). */
async function migrationsFolder(files: Record<string, string>): Promise<string> {
  const folder = await mkdtemp(join(tmpdir(), 'meridian-migrations-'))
  folders.push(folder)
  await Promise.all(Object.entries(files).map(([name, content]) => writeFile(join(folder, name), content)))
  return folder
}

function recordingLogger() {
  const lines: { obj: object; msg: string | undefined }[] = []
  return { lines, info: (obj: object, msg?: string) => lines.push({ obj, msg }) }
}

/** The error `run` rejects with; it must reject. */
async function failureOf(run: Promise<unknown>): Promise<unknown> {
  return run.then(
    () => {
      throw new Error('expected migrate to reject')
    },
    (error: unknown) => error,
  )
}

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex')

async function recorded(sql: Sql) {
  return sql<{ version: number; name: string; checksum: string; appliedAt: Date }[]>`
    select version, name, checksum, applied_at from schema_migrations order by version`
}

async function tableExists(sql: Sql, table: string): Promise<boolean> {
  const [row] = await sql<{ found: boolean }[]>`select to_regclass(${table}) is not null as found`
  return row?.found ?? false
}

// 9999 runs before 10000 only when the order is numeric; sorted as text, 10000 would come first and fail.
const catalogue = {
  '0001_create_items.sql': 'create table items (id integer primary key);\n',
  '9999_add_item_price.sql': 'alter table items add column price_cents integer not null default 0;\n',
  '10000_seed_items.sql': 'insert into items (id, price_cents) values (1, 100), (2, 250);\n',
  'README.md': 'Migrations of the test catalogue; only the .sql files count.\n',
}

describe('migrate', () => {
  it('when the folder holds numbered files, then they are applied in numeric order and recorded with name and checksum', async () => {
    const sql = (await emptySchema()).connect()
    const logger = recordingLogger()

    const result = await migrate(sql, { dir: await migrationsFolder(catalogue), logger })

    expect(result).toEqual({ applied: [1, 9999, 10000], pendingContract: [] })
    expect(await sql`select id, price_cents from items order by id`).toEqual([
      { id: 1, priceCents: 100 },
      { id: 2, priceCents: 250 },
    ])
    const rows = await recorded(sql)
    expect(rows.map(({ version, name, checksum }) => ({ version, name, checksum }))).toEqual([
      { version: 1, name: 'create_items', checksum: sha256(catalogue['0001_create_items.sql']) },
      { version: 9999, name: 'add_item_price', checksum: sha256(catalogue['9999_add_item_price.sql']) },
      { version: 10000, name: 'seed_items', checksum: sha256(catalogue['10000_seed_items.sql']) },
    ])
    expect(rows.every((row) => row.appliedAt instanceof Date)).toBe(true)
    expect(logger.lines.filter((line) => line.msg === 'applied migration')).toHaveLength(3)
  })

  it('when it runs again with the same files, then it applies nothing and leaves the records as they were', async () => {
    const sql = (await emptySchema()).connect()
    const dir = await migrationsFolder(catalogue)
    await migrate(sql, { dir })
    const before = await recorded(sql)

    const result = await migrate(sql, { dir })

    expect(result).toEqual({ applied: [], pendingContract: [] })
    expect(await recorded(sql)).toEqual(before)
    expect(await sql`select count(*)::int as items from items`).toEqual([{ items: 2 }])
  })

  it('when a new file is added after a run, then only that file is applied', async () => {
    const sql = (await emptySchema()).connect()
    const dir = await migrationsFolder(catalogue)
    await migrate(sql, { dir })
    await writeFile(join(dir, '10001_add_item_name.sql'), 'alter table items add column name text;\n')

    const result = await migrate(sql, { dir })

    expect(result).toEqual({ applied: [10001], pendingContract: [] })
    expect((await recorded(sql)).map((row) => row.version)).toEqual([1, 9999, 10000, 10001])
  })

  it('when two instances migrate the same database at once, then both resolve and each migration runs exactly once', async () => {
    const space = await emptySchema()
    const first = space.connect()
    const second = space.connect()
    await Promise.all([first`select 1`, second`select 1`])
    const dir = await migrationsFolder({
      // The sleep keeps the lock held long enough for the other instance to find it taken.
      '0001_create_runs.sql': 'create table runs (step integer not null);\nselect pg_sleep(0.3);\n',
      '0002_first_step.sql': 'insert into runs (step) values (2);\n',
      '0003_second_step.sql': 'insert into runs (step) values (3);\n',
    })
    const firstLogger = recordingLogger()
    const secondLogger = recordingLogger()

    const results = await Promise.all([
      migrate(first, { dir, logger: firstLogger }),
      migrate(second, { dir, logger: secondLogger }),
    ])

    expect(results.map((result) => result.applied).sort((a, b) => b.length - a.length)).toEqual([
      [1, 2, 3],
      [],
    ])
    expect(await first`select step from runs order by step`).toEqual([{ step: 2 }, { step: 3 }])
    expect((await recorded(first)).map((row) => row.version)).toEqual([1, 2, 3])
    const waited = [firstLogger, secondLogger].filter((logger) =>
      logger.lines.some((line) => line.msg === 'waiting for another instance to finish migrating'),
    )
    expect(waited).toHaveLength(1)
    expect(waited[0]?.lines[0]?.obj).toEqual({ lock: MIGRATION_LOCK_NAME })
  })

  it('when an applied migration file was changed, then it is rejected naming the file and nothing new is applied', async () => {
    const sql = (await emptySchema()).connect()
    const dir = await migrationsFolder(catalogue)
    await migrate(sql, { dir })
    await writeFile(join(dir, '9999_add_item_price.sql'), 'alter table items add column price numeric;\n')
    await writeFile(join(dir, '10001_add_item_name.sql'), 'alter table items add column name text;\n')

    const failure = await failureOf(migrate(sql, { dir }))

    expect(failure).toBeInstanceOf(MigrationError)
    expect(failure).toMatchObject({
      file: '9999_add_item_price.sql',
      message: expect.stringContaining('9999_add_item_price.sql was changed after it was applied'),
    })
    expect((await recorded(sql)).map((row) => row.version)).toEqual([1, 9999, 10000])
  })

  it.each([
    ['too few digits', '001_create_items.sql'],
    ['a dash instead of an underscore', '0002-create-items.sql'],
    ['upper-case letters in the name', '0002_CreateItems.sql'],
    ['no name', '0002.sql'],
  ])(
    'when a .sql file has %s, then the folder is rejected naming that file before anything runs',
    async (_, file) => {
      const space = await emptySchema()
      const sql = space.connect()
      const dir = await migrationsFolder({
        '0001_create_items.sql': 'create table items (id integer);\n',
        [file]: '',
      })

      const failure = await failureOf(migrate(sql, { dir }))

      expect(failure).toBeInstanceOf(MigrationError)
      expect(failure).toMatchObject({ file, message: expect.stringContaining(file) })
      expect(await tableExists(sql, 'schema_migrations')).toBe(false)
      expect(await tableExists(sql, 'items')).toBe(false)
    },
  )

  it('when two files share a version number, then the folder is rejected naming both', async () => {
    const sql = (await emptySchema()).connect()
    const dir = await migrationsFolder({
      '0001_create_items.sql': 'create table items (id integer);\n',
      '00001_create_orders.sql': 'create table orders (id integer);\n',
    })

    const failure = await failureOf(migrate(sql, { dir }))

    expect(failure).toBeInstanceOf(MigrationError)
    expect((failure as Error).message).toContain('00001_create_orders.sql')
    expect((failure as Error).message).toContain('0001_create_items.sql')
    expect(await tableExists(sql, 'schema_migrations')).toBe(false)
  })

  it('when a migration fails, then it leaves no partial table and no record, the error names the file, and later files do not run', async () => {
    const sql = (await emptySchema()).connect()
    const dir = await migrationsFolder({
      '0001_create_items.sql': 'create table items (id integer primary key);\n',
      '0002_create_orders.sql':
        'create table orders (id integer primary key);\ninsert into no_such_table values (1);\n',
      '0003_create_shipments.sql': 'create table shipments (id integer primary key);\n',
    })

    const failure = await failureOf(migrate(sql, { dir }))

    expect(failure).toBeInstanceOf(MigrationError)
    expect(failure).toMatchObject({
      file: '0002_create_orders.sql',
      message: expect.stringContaining('migration 0002_create_orders.sql failed'),
      cause: expect.objectContaining({ code: '42P01' }),
    })
    expect(await tableExists(sql, 'items')).toBe(true)
    expect(await tableExists(sql, 'orders')).toBe(false)
    expect(await tableExists(sql, 'shipments')).toBe(false)
    expect((await recorded(sql)).map((row) => row.version)).toEqual([1])
  })

  it('when the fixed migration is run again, then it picks up where the failed run stopped', async () => {
    const sql = (await emptySchema()).connect()
    const dir = await migrationsFolder({
      '0001_create_items.sql': 'create table items (id integer primary key);\n',
      '0002_create_orders.sql':
        'create table orders (id integer primary key, item_id integer references nope);\n',
    })
    await expect(migrate(sql, { dir })).rejects.toThrow('0002_create_orders.sql')
    await writeFile(
      join(dir, '0002_create_orders.sql'),
      'create table orders (id integer primary key, item_id integer references items);\n',
    )

    const result = await migrate(sql, { dir })

    expect(result).toEqual({ applied: [2], pendingContract: [] })
  })

  it('when the folder does not exist, then it rejects with a MigrationError naming the folder', async () => {
    const sql = (await emptySchema()).connect()
    const dir = join(tmpdir(), 'meridian-no-such-migrations-folder')

    await expect(migrate(sql, { dir })).rejects.toThrow(`cannot read the migrations folder ${dir}`)
  })
})

describe('migrate: separate tracks', () => {
  let database: TestDatabase
  beforeAll(async () => {
    database = await freshDatabase('mtrack')
  })
  afterAll(async () => {
    await database.drop()
  })

  it("when a package keeps its own migration table, then its versions are recorded there and do not collide with the service's", async () => {
    const sql = createDatabase(database.url)
    try {
      const serviceDir = await mkdtemp(join(tmpdir(), 'svc-'))
      const packageDir = await mkdtemp(join(tmpdir(), 'pkg-'))
      await writeFile(join(serviceDir, '0001_things.sql'), 'create table things (id int);')
      await writeFile(join(packageDir, '0001_outbox.sql'), 'create table outbox_like (id int);')
      expect((await migrate(sql, { dir: serviceDir })).applied).toEqual([1])
      expect((await migrate(sql, { dir: packageDir, table: 'events_schema_migrations' })).applied).toEqual([
        1,
      ])
      const tracks =
        await sql`select (select count(*)::int from schema_migrations) as service, (select count(*)::int from events_schema_migrations) as package`
      expect(tracks[0]).toEqual({ service: 1, package: 1 })
      await expect(migrate(sql, { dir: packageDir, table: 'bad; drop table things' })).rejects.toThrow(
        /plain identifier/,
      )
    } finally {
      await sql.end({ timeout: 5 })
    }
  })
})

describe('migrate: expand and contract', () => {
  it('when a contract migration is pending, then a plain run skips it, applies the expand ones after it, and a contract run applies it', async () => {
    const sql = (await emptySchema()).connect()
    const dir = await migrationsFolder({
      '0001_create_items.sql': 'create table items (id integer primary key, legacy text);\n',
      '0002_drop_legacy.sql':
        '-- meridian: contract\n-- the release before this one still read items.legacy\nalter table items drop column legacy;\n',
      '0003_create_tags.sql': '-- meridian: expand\ncreate table tags (id integer primary key);\n',
    })
    const logger = recordingLogger()

    const plain = await migrate(sql, { dir, logger })

    expect(plain).toEqual({ applied: [1, 3], pendingContract: [2] })
    expect(await tableExists(sql, 'tags')).toBe(true)
    const [legacy] = await sql<{ found: boolean }[]>`
      select exists (select 1 from information_schema.columns
        where table_schema = current_schema() and table_name = 'items' and column_name = 'legacy') as found`
    expect(legacy?.found).toBe(true)
    expect(logger.lines.some((line) => line.msg?.startsWith('contract migrations pending'))).toBe(true)

    const contract = await migrate(sql, { dir, contract: true })

    expect(contract).toEqual({ applied: [2], pendingContract: [] })
    const [gone] = await sql<{ found: boolean }[]>`
      select exists (select 1 from information_schema.columns
        where table_schema = current_schema() and table_name = 'items' and column_name = 'legacy') as found`
    expect(gone?.found).toBe(false)
    expect((await recorded(sql)).map((row) => row.version)).toEqual([1, 2, 3])
  })

  it('when the option is not given, then MERIDIAN_MIGRATE_CONTRACT=true asks for contract migrations', async () => {
    const sql = (await emptySchema()).connect()
    const dir = await migrationsFolder({
      '0001_create_items.sql': 'create table items (id integer primary key);\n',
      '0002_drop_items.sql': '-- meridian: contract\ndrop table items;\n',
    })
    const before = process.env.MERIDIAN_MIGRATE_CONTRACT
    process.env.MERIDIAN_MIGRATE_CONTRACT = 'true'
    try {
      expect(await migrate(sql, { dir })).toEqual({ applied: [1, 2], pendingContract: [] })
    } finally {
      if (before === undefined) delete process.env.MERIDIAN_MIGRATE_CONTRACT
      else process.env.MERIDIAN_MIGRATE_CONTRACT = before
    }
  })

  it('when a mark is misspelt, then the folder is refused before anything runs', async () => {
    const sql = (await emptySchema()).connect()
    const dir = await migrationsFolder({
      '0001_create_items.sql': '-- meridian: contrakt\ncreate table items (id integer primary key);\n',
    })

    await expect(migrate(sql, { dir })).rejects.toThrow("unknown mark 'contrakt'")
    expect(await tableExists(sql, 'items')).toBe(false)
  })

  it('when a migration says no-transaction, then create index concurrently runs and is recorded', async () => {
    const sql = (await emptySchema()).connect()
    const dir = await migrationsFolder({
      '0001_create_items.sql': 'create table items (id integer primary key, name text);\n',
      '0002_items_name.sql':
        '-- meridian: no-transaction\n-- built without blocking writes\ncreate index concurrently if not exists items_name on items (name);\n',
    })

    expect(await migrate(sql, { dir })).toEqual({ applied: [1, 2], pendingContract: [] })

    expect(await tableExists(sql, 'items_name')).toBe(true)
  })

  it('when a migration waits for a lock longer than lockTimeout, then it fails and leaves no trace', async () => {
    const { connect } = await emptySchema()
    const sql = connect()
    const holder = connect()
    const dir = await migrationsFolder({
      '0001_create_items.sql': 'create table items (id integer primary key);\n',
    })
    await migrate(sql, { dir })
    await writeFile(join(dir, '0002_items_name.sql'), 'alter table items add column name text;\n')
    const reserved = await holder.reserve()
    try {
      await reserved`begin`
      await reserved`lock table items in access share mode`

      await expect(migrate(sql, { dir, lockTimeout: '200ms' })).rejects.toThrow(
        /0002_items_name\.sql failed: .*lock timeout/,
      )

      await reserved`rollback`
    } finally {
      reserved.release()
    }
    expect((await recorded(sql)).map((row) => row.version)).toEqual([1])
  })
})
