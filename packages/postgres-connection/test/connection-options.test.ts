// libpq's TLS parameters of a PostgreSQL URL as postgres.js' ssl option, without a server: what each mode becomes,
// what stays in the URL, and every way the parameters can be wrong. The real server's side (a CA, a hostname, a
// refused plaintext connection) is in infra/test/secure-postgres.test.ts and packages/db/test/secure-postgres.test.ts.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { ConnectionOptions } from 'node:tls'
import { afterAll, describe, expect, it } from 'vitest'
import { connectionOptionsOf, PostgresUrlError } from '../src/index.ts'

const dir = mkdtempSync(join(tmpdir(), 'meridian-pg-url-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

// PEM-shaped files: this function reads and hands them on; node:tls parses them when it connects
const certificate = '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n'
const privateKey = '-----BEGIN PRIVATE KEY-----\nMIGH\n-----END PRIVATE KEY-----\n'
const file = (name: string, text: string): string => {
  const path = join(dir, name)
  writeFileSync(path, text)
  return path
}
const ca = file('ca.pem', certificate)
const clientCert = file('client.pem', certificate)
const clientKey = file('client-key.pem', privateKey)
const spaced = file('with space+plus.pem', certificate)
const notPem = file('not-pem.txt', 'hello\n')
const aFolder = join(dir, 'a-folder')
mkdirSync(aFolder)

const server = 'postgres://order:s3cret-pw@127.0.0.1:5432/orders'
const tlsOf = (url: string): ConnectionOptions => {
  const { ssl } = connectionOptionsOf(url)
  if (typeof ssl !== 'object') throw new Error(`expected node:tls options, got ${String(ssl)}`)
  return ssl
}
/** The error a URL gets, checked to be a PostgresUrlError that does not repeat the password. */
const errorOf = (url: string, source?: string): string => {
  try {
    connectionOptionsOf(url, source === undefined ? {} : { source })
  } catch (error) {
    expect(error).toBeInstanceOf(PostgresUrlError)
    const message = (error as Error).message
    expect(message).not.toContain('s3cret-pw')
    return message
  }
  throw new Error('expected the URL to be refused')
}

describe("libpq's TLS parameters of a PostgreSQL URL", () => {
  it('when a URL has none, then it is returned as written and postgres.js keeps its own default', () => {
    const url = `${server}?application_name=x&ssl=true`
    expect(connectionOptionsOf(url)).toEqual({ url, sslmode: undefined, ssl: undefined })
    expect(connectionOptionsOf(server)).toEqual({ url: server, sslmode: undefined, ssl: undefined })
  })

  it('when verify-full names a CA, then the CA is read, the parameters leave the URL and the rest stays in its order', () => {
    const url = `${server}?application_name=order&sslmode=verify-full&sslrootcert=${ca}&target_session_attrs=primary#frag`
    const connection = connectionOptionsOf(url)
    expect(connection.url).toBe(`${server}?application_name=order&target_session_attrs=primary#frag`)
    expect(connection.sslmode).toBe('verify-full')
    expect(connection.ssl).toEqual({ ca: certificate, rejectUnauthorized: true })
  })

  it('when verify-ca names a CA, then the chain is checked and the host name is not', () => {
    const tls = tlsOf(`${server}?sslmode=verify-ca&sslrootcert=${ca}`)
    expect(tls).toMatchObject({ ca: certificate, rejectUnauthorized: true })
    expect(tls.checkServerIdentity?.('elsewhere.example', {} as never)).toBeUndefined()
  })

  it('when require has no CA, then TLS is used unverified; with a CA, it is verify-ca, as in libpq', () => {
    expect(tlsOf(`${server}?sslmode=require`)).toEqual({ rejectUnauthorized: false })
    const withCa = tlsOf(`${server}?sslmode=require&sslrootcert=${ca}`)
    expect(withCa).toMatchObject({ ca: certificate, rejectUnauthorized: true })
    expect(withCa.checkServerIdentity?.('elsewhere.example', {} as never)).toBeUndefined()
  })

  it("when the mode is disable, prefer or allow, then postgres.js gets false, 'prefer' or 'allow'", () => {
    expect(connectionOptionsOf(`${server}?sslmode=disable`)).toEqual({
      url: server,
      sslmode: 'disable',
      ssl: false,
    })
    expect(connectionOptionsOf(`${server}?sslmode=prefer`).ssl).toBe('prefer')
    expect(connectionOptionsOf(`${server}?sslmode=allow`).ssl).toBe('allow')
  })

  it('when only certificate files are given, then the mode is verify-full', () => {
    const connection = connectionOptionsOf(`${server}?sslrootcert=${ca}`)
    expect(connection.sslmode).toBe('verify-full')
    expect(connection.ssl).toEqual({ ca: certificate, rejectUnauthorized: true })
  })

  it("when sslrootcert is 'system', then Node's default CAs verify the full name", () => {
    expect(connectionOptionsOf(`${server}?sslmode=verify-full&sslrootcert=system`).ssl).toEqual({
      rejectUnauthorized: true,
    })
  })

  it('when a client certificate and key are given, then both are read and sent', () => {
    expect(
      tlsOf(`${server}?sslmode=verify-full&sslrootcert=${ca}&sslcert=${clientCert}&sslkey=${clientKey}`),
    ).toEqual({
      ca: certificate,
      cert: certificate,
      key: privateKey,
      rejectUnauthorized: true,
    })
  })

  it("when a path is percent-encoded, then it is decoded as libpq does (a '+' stays a '+')", () => {
    const encoded = encodeURIComponent(spaced).replaceAll('%2B', '+')
    expect(tlsOf(`${server}?sslmode=verify-full&sslrootcert=${encoded}`).ca).toBe(certificate)
  })

  it('when the URL names several hosts, then they are kept as written', () => {
    const multi = 'postgres://u:p@198.18.0.1:5432,198.18.0.2:5433/orders'
    const connection = connectionOptionsOf(
      `${multi}?sslmode=verify-full&sslrootcert=${ca}&target_session_attrs=primary`,
    )
    expect(connection.url).toBe(`${multi}?target_session_attrs=primary`)
  })

  it('when the mode is not one of libpq’s, then the error names sslmode and the modes', () => {
    expect(errorOf(`${server}?sslmode=verify`)).toBe(
      "the PostgreSQL URL: sslmode 'verify' is not one of disable, allow, prefer, require, verify-ca, verify-full",
    )
    expect(errorOf(`${server}?sslmode=VERIFY-FULL&sslrootcert=${ca}`)).toContain("sslmode 'VERIFY-FULL'")
  })

  it('when a parameter is given twice or empty, then it is refused (no silent choice between two modes)', () => {
    expect(errorOf(`${server}?sslmode=verify-full&sslrootcert=${ca}&sslmode=disable`)).toContain(
      'sslmode is given twice',
    )
    expect(errorOf(`${server}?sslmode=verify-full&sslrootcert=`)).toContain('sslrootcert is empty')
    expect(errorOf(`${server}?sslmode`)).toContain('sslmode is empty')
  })

  it('when a file is missing, a folder or not PEM, then the error names the parameter, the path and the source', () => {
    const missing = join(dir, 'nowhere.pem')
    expect(errorOf(`${server}?sslmode=verify-full&sslrootcert=${missing}`, 'DATABASE_URL')).toBe(
      `DATABASE_URL: sslrootcert ${missing} cannot be read (ENOENT)`,
    )
    expect(errorOf(`${server}?sslmode=verify-full&sslrootcert=${aFolder}`)).toContain(
      `sslrootcert ${aFolder} cannot be read (EISDIR)`,
    )
    expect(errorOf(`${server}?sslmode=verify-full&sslrootcert=${notPem}`)).toContain(
      `sslrootcert ${notPem} is not a PEM certificate`,
    )
    // a certificate where the key should be (the two swapped)
    expect(
      errorOf(`${server}?sslmode=verify-full&sslrootcert=${ca}&sslcert=${clientKey}&sslkey=${clientCert}`),
    ).toContain(`sslcert ${clientKey} is not a PEM certificate`)
    expect(
      errorOf(`${server}?sslmode=verify-full&sslrootcert=${ca}&sslcert=${clientCert}&sslkey=${clientCert}`),
    ).toContain(`sslkey ${clientCert} is not a PEM private key`)
  })

  it('when a combination would be refused or silently ignored by libpq, then it is refused', () => {
    expect(errorOf(`${server}?sslmode=verify-full&sslrootcert=${ca}&sslcert=${clientCert}`)).toContain(
      'sslkey is missing',
    )
    expect(errorOf(`${server}?sslmode=verify-full&sslrootcert=${ca}&sslkey=${clientKey}`)).toContain(
      'sslcert is missing',
    )
    expect(errorOf(`${server}?sslmode=prefer&sslrootcert=${ca}`)).toContain(
      'sslmode=prefer does not verify the server nor send a client certificate, so it cannot use sslrootcert',
    )
    expect(errorOf(`${server}?sslmode=disable&sslcert=${clientCert}&sslkey=${clientKey}`)).toContain(
      'sslmode=disable',
    )
    expect(errorOf(`${server}?sslmode=verify-full`)).toContain('sslmode=verify-full needs sslrootcert')
    expect(errorOf(`${server}?sslmode=verify-ca`)).toContain('sslmode=verify-ca needs sslrootcert')
    expect(errorOf(`${server}?sslmode=verify-ca&sslrootcert=system`)).toContain(
      'sslrootcert=system needs sslmode=verify-full',
    )
    expect(errorOf(`${server}?sslmode=verify-full&sslrootcert=${ca}&ssl=false`)).toContain(
      "give libpq's sslmode or postgres.js' ssl parameter, not both",
    )
  })

  it('when a libpq TLS parameter this client does not apply is given, then it is refused, not sent on nor ignored', () => {
    expect(errorOf(`${server}?sslmode=verify-full&sslrootcert=${ca}&sslpassword=x`)).toContain(
      'sslpassword is not supported (supported: sslmode, sslrootcert, sslcert, sslkey)',
    )
    expect(errorOf(`${server}?sslcrl=/x.pem`)).toContain('sslcrl is not supported')
  })

  it('when the query is malformed or the URL absurdly long, then the error says so without repeating the URL', () => {
    expect(errorOf(`${server}?sslmode=verify-full&sslrootcert=%E0%A4%A`)).toContain(
      'sslrootcert has a malformed percent-encoding',
    )
    expect(errorOf(`${server}?%ZZ=1`)).toContain('a query parameter has a malformed percent-encoding')
    expect(errorOf(`${server}?application_name=${'a'.repeat(9000)}`)).toContain('longer than 8192 characters')
  })
})
