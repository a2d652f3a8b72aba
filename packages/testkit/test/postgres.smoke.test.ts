// PostgreSQL is a real server: every service database exists and takes transactions; test databases are isolated.
import { databaseUrl, serviceDatabases } from '@meridian/infra'
import postgres from 'postgres'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { freshDatabase, infraEndpoints, type TestDatabase } from '../src/index.ts'

describe('postgres smoke', () => {
  it.each(serviceDatabases)(
    'when a client connects to the %s database, then it commits and rolls back transactions',
    async (name) => {
      const sql = postgres(databaseUrl(infraEndpoints().databaseUrl, name), { max: 1, onnotice: () => {} })
      try {
        const [server] = await sql<{ current_database: string; version: string }[]>`
        select current_database(), version()`
        expect(server?.current_database).toBe(name)
        expect(server?.version).toMatch(/^PostgreSQL \d+/)

        await sql`create temporary table smoke (id int primary key, note text not null)`
        await sql.begin(async (tx) => {
          await tx`insert into smoke ${tx({ id: 1, note: 'kept' })}`
        })
        await expect(
          sql.begin(async (tx) => {
            await tx`insert into smoke ${tx({ id: 2, note: 'rolled back' })}`
            await tx`insert into smoke ${tx({ id: 1, note: 'duplicate' })}`
          }),
        ).rejects.toMatchObject({ code: '23505' })
        expect(await sql`select id, note from smoke order by id`).toEqual([{ id: 1, note: 'kept' }])
      } finally {
        await sql.end({ timeout: 5 })
      }
    },
  )

  describe('isolation', () => {
    let one: TestDatabase
    let other: TestDatabase

    beforeAll(async () => {
      ;[one, other] = await Promise.all([freshDatabase('iso'), freshDatabase('iso')])
    })

    afterAll(async () => {
      await Promise.all([one?.drop(), other?.drop()])
    })

    it("when two test files each take a fresh database, then neither sees the other's tables", async () => {
      expect(one.name).not.toBe(other.name)
      await one.sql`create table things (id int)`
      await one.sql`insert into things values (1)`
      const [row] = await other.sql<{ exists: boolean }[]>`
        select exists (select 1 from information_schema.tables where table_name = 'things')`
      expect(row?.exists).toBe(false)
    })

    it('when a fresh database is dropped, then it no longer exists on the server', async () => {
      const temporary = await freshDatabase('drop')
      await temporary.drop()
      const admin = postgres(infraEndpoints().databaseUrl, { max: 1 })
      try {
        const rows = await admin`select 1 from pg_database where datname = ${temporary.name}`
        expect(rows).toHaveLength(0)
      } finally {
        await admin.end({ timeout: 5 })
      }
    })
  })
})
