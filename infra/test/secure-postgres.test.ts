// The secure PostgreSQL server's inputs, refused before anything starts or connects: a principal without a database, a
// password that is not base64url (it reaches DDL as a literal), a service infra does not know. The server itself, its
// TLS and its roles are tested with the client that services use, in packages/db/test/secure-postgres.test.ts.
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { provisionServiceRoles, scramVerifier } from '../src/probes.ts'
import { certificateAuthority } from '../src/secure/certificates.ts'
import { instanceSecrets, randomSecret } from '../src/secure/engine.ts'
import { securePgHba, startSecurePostgres } from '../src/secure/postgres.ts'

const dir = mkdtempSync(join(tmpdir(), 'meridian-secure-pg-inputs-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

// nothing listens there: a check that connected would fail with ECONNREFUSED, not the message expected
const nowhere = 'postgres://postgres:x@127.0.0.1:1/postgres'

describe("the secure PostgreSQL server's inputs", () => {
  it('when a principal has no database (the gateway) or is unknown, then the server is not started', async () => {
    const ca = await certificateAuthority(join(dir, 'ca'))
    const start = (principals: string[]) =>
      startSecurePostgres({ dir: join(dir, 'pg'), ca, host: '127.0.0.1', ports: { postgres: 1 }, principals })
    await expect(start(['order', 'gateway'])).rejects.toThrow(
      "postgres: gateway has no database (infra's databaseOfService)",
    )
    await expect(start(['order', "x'; drop role postgres; --"])).rejects.toThrow('has no database')
  })

  it('when a role password is not base64url or too short, or a service unknown, then provisioning refuses before connecting', async () => {
    await expect(
      provisionServiceRoles(nowhere, { order: "abc'; alter role postgres password 'x" }),
    ).rejects.toThrow("the password of 'order' must be 16 to 256 base64url characters")
    await expect(provisionServiceRoles(nowhere, { order: 'short' })).rejects.toThrow('16 to 256 base64url')
    await expect(provisionServiceRoles(nowhere, { toString: randomSecret() })).rejects.toThrow(
      "'toString' is not a service with a database",
    )
    await expect(provisionServiceRoles(nowhere, { gateway: randomSecret() })).rejects.toThrow(
      "'gateway' is not a service with a database",
    )
  })

  it("when a role's password is set, then the server is given a SCRAM-SHA-256 verifier, never the password", () => {
    const password = randomSecret()
    const verifier = scramVerifier(password)
    expect(verifier).toMatch(
      /^SCRAM-SHA-256\$4096:[A-Za-z0-9+/]{22}==\$[A-Za-z0-9+/]{43}=:[A-Za-z0-9+/]{43}=$/,
    )
    expect(verifier).not.toContain(password)
    // a new salt each time: the same password gives another verifier
    expect(scramVerifier(password)).not.toBe(verifier)
  })

  it('when credentials are kept, then the file is mode 0600, read back the same, and a new principal is added to it', () => {
    const folder = join(dir, 'credentials')
    const make = (principals: string[]) => {
      const created = !existsSync(join(folder, 'credentials.json'))
      const credentials = instanceSecrets<{ roles: Record<string, string> }>(folder, (existing) => ({
        roles: Object.fromEntries(principals.map((name) => [name, existing.roles?.[name] ?? randomSecret()])),
      }))
      return { credentials, created }
    }
    rmSync(folder, { recursive: true, force: true })
    const first = make(['order'])
    expect(first.created).toBe(true)
    const file = join(folder, 'credentials.json')
    expect(statSync(file).mode & 0o777).toBe(0o600)
    const again = make(['order', 'payment'])
    expect(again.created).toBe(false)
    expect(again.credentials.roles.order).toBe(first.credentials.roles.order)
    expect(again.credentials.roles.payment).toMatch(/^[A-Za-z0-9_-]{43}$/)
    expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual(again.credentials)
  })

  it('when the server is configured, then its pg_hba.conf admits TLS with SCRAM only: no host, local or trust line', () => {
    const rules = securePgHba.split('\n').filter((line) => line.trim() !== '' && !line.startsWith('#'))
    expect(rules).toEqual(['hostssl  all       all   all      scram-sha-256'])
  })
})
