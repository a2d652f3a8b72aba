// A PostgreSQL URL edited for a database, user or password: one host, and the multi-host URL a cluster's services use.
import postgres from 'postgres'
import { describe, expect, it } from 'vitest'
import { systemEnv } from '../src/images/system-env.ts'
import { databaseUrl, editPostgresUrl } from '../src/probes.ts'

const multiHost =
  'postgres://postgres:postgres@198.18.3.11:5432,198.18.3.12:5432/postgres?target_session_attrs=primary'

describe('editPostgresUrl', () => {
  it('when a one-host URL gets a database, then only its path changes', () => {
    expect(databaseUrl('postgres://postgres:postgres@127.0.0.1:5432/postgres', 'orders')).toBe(
      'postgres://postgres:postgres@127.0.0.1:5432/orders',
    )
  })

  it('when a multi-host URL gets a database, then every host and the query are kept', () => {
    expect(databaseUrl(multiHost, 'orders')).toBe(
      'postgres://postgres:postgres@198.18.3.11:5432,198.18.3.12:5432/orders?target_session_attrs=primary',
    )
  })

  it('when a multi-host URL gets a user and password, then they are percent-encoded and the hosts kept', () => {
    expect(
      editPostgresUrl('postgresql://u:p@h1,h2:5433/x?sslmode=disable', {
        username: 'meridian',
        password: 'a b/@',
      }),
    ).toBe('postgresql://meridian:a%20b%2F%40@h1,h2:5433/x?sslmode=disable')
  })

  it('when the edited multi-host URL is given to postgres.js, then it reads every host, port and the session attribute', () => {
    const sql = postgres(databaseUrl(multiHost, 'orders'), { max: 1 })
    try {
      expect(sql.options.host).toEqual(['198.18.3.11', '198.18.3.12'])
      expect(sql.options.port).toEqual([5432, 5432])
      expect(sql.options.database).toBe('orders')
      expect((sql.options as { target_session_attrs?: string }).target_session_attrs).toBe('primary')
    } finally {
      void sql.end({ timeout: 0 })
    }
  })

  it('when the system file is made from a multi-host server URL, then every service URL keeps both hosts', () => {
    const values = systemEnv(multiHost, { MERIDIAN_SYSTEM_DB_PASSWORD: 'pw' })
    const urls = Object.entries(values).filter(([name]) => name.endsWith('_DATABASE_URL'))
    expect(urls.length).toBeGreaterThan(0)
    for (const [, url] of urls)
      expect(url).toMatch(
        /^postgres:\/\/[a-z_]+:pw@198\.18\.3\.11:5432,198\.18\.3\.12:5432\/[a-z_]+\?target_session_attrs=primary$/,
      )
  })

  it.each([
    ['another scheme', 'http://127.0.0.1/db'],
    ['an empty host in the list', 'postgres://u@h1,,h2/db'],
    ['no host before the list', 'postgres://u@,h2/db'],
    ['more than 16 hosts', `postgres://u@${Array.from({ length: 17 }, (_, i) => `h${i}`).join(',')}/db`],
    ['a host longer than 255 characters', `postgres://u@${'h'.repeat(256)}/db`],
    ['a URL longer than 8192 characters', `postgres://u@h/${'d'.repeat(8192)}`],
  ])('when the URL has %s, then it is refused with a message that does not repeat it', (_, url) => {
    expect(() => databaseUrl(url, 'orders')).toThrow(/PostgreSQL URL/)
    try {
      databaseUrl(url, 'orders')
    } catch (error) {
      expect((error as Error).message).not.toContain(url)
    }
  })
})
