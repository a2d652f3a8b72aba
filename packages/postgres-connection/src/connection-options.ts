// libpq's TLS parameters in a PostgreSQL URL — sslmode, sslrootcert, sslcert, sslkey — as every Meridian client takes
// them: the same URL a psql, a migration tool or a managed database's console gives works here. postgres.js knows
// sslmode only in part (no CA file, no client certificate) and sends every query parameter it does not know to the
// server as a setting, which refuses it: so they are read here, their files read once, removed from the URL, and
// given to postgres.js as its `ssl` option.
import { readFileSync } from 'node:fs'
import type { ConnectionOptions } from 'node:tls'

/** libpq's sslmode values, weakest first. */
export const sslModes = ['disable', 'allow', 'prefer', 'require', 'verify-ca', 'verify-full'] as const
export type SslMode = (typeof sslModes)[number]

/**
 * postgres.js' `ssl` option: false (no TLS), 'prefer' or 'allow' (postgres.js' own handling: TLS when the server
 * offers it, the certificate unchecked), or node:tls options for the connection.
 */
export type PostgresSsl = false | 'prefer' | 'allow' | ConnectionOptions

export interface PostgresConnection {
  /** the URL without libpq's TLS parameters (everything else as written): what postgres.js is given */
  url: string
  /** the mode in force: as given, 'verify-full' when only certificate files were given, undefined when neither */
  sslmode: SslMode | undefined
  /** postgres.js' `ssl` option; undefined when the URL says nothing of TLS (postgres.js' default: none) */
  ssl: PostgresSsl | undefined
}

export interface ConnectionOptionsOptions {
  /** what errors call the URL: the variable it came from ('DATABASE_URL'); default 'the PostgreSQL URL' */
  source?: string
}

/** A PostgreSQL URL whose TLS parameters are wrong: the message names the parameter, never the URL (it may hold a password). */
export class PostgresUrlError extends Error {
  override readonly name = 'PostgresUrlError'
}

/** The TLS parameters read here. */
const tlsParameters = ['sslmode', 'sslrootcert', 'sslcert', 'sslkey'] as const
type TlsParameter = (typeof tlsParameters)[number]
const isTlsParameter = (key: string): key is TlsParameter =>
  (tlsParameters as readonly string[]).includes(key)

/**
 * libpq's other TLS and encryption parameters: refused rather than passed on, where the server would answer with an
 * unrecognised setting, or worse, ignored while the operator believes them applied.
 */
const unsupportedParameters = new Set([
  'sslpassword',
  'sslcrl',
  'sslcrldir',
  'sslsni',
  'sslcompression',
  'sslcertmode',
  'ssl_min_protocol_version',
  'ssl_max_protocol_version',
  'requiressl',
  'gssencmode',
  'requirepeer',
])

/** As editPostgresUrl's bound (infra/src/probes.ts): a longer one is a mistake, not a URL. */
const maxUrlLength = 8192
/** `postgres://…` up to the query, the query, the fragment */
const urlShape = /^(postgres(?:ql)?:\/\/[^?#]*)(?:\?([^#]*))?(#.*)?$/s

/** libpq's percent-decoding (a `+` stays a `+`, as libpq reads it); undefined when malformed. */
function decode(text: string): string | undefined {
  try {
    return decodeURIComponent(text)
  } catch {
    return undefined
  }
}

/** What a PEM file of this kind begins its block with. */
const pemMarker = { sslrootcert: 'CERTIFICATE-----', sslcert: 'CERTIFICATE-----', sslkey: 'PRIVATE KEY-----' }

/**
 * Splits libpq's TLS parameters off a PostgreSQL URL and turns them into postgres.js' `ssl` option, reading the
 * certificate files they name (once, now). The modes, as libpq has them:
 *
 * - `disable`: no TLS. `allow`, `prefer`: as postgres.js does them (the server's certificate is not checked).
 * - `require`: TLS, the server's certificate not checked; with `sslrootcert`, checked against it as verify-ca
 *   (libpq: "if a root CA file exists, require behaves as verify-ca").
 * - `verify-ca`: TLS with a server certificate signed by `sslrootcert`'s CA, whatever host it names.
 * - `verify-full`: that, and the certificate names the host connected to (its address or DNS name).
 *
 * `sslrootcert=system` trusts Node's default CAs (verify-full only, as libpq 16+ has it). `sslcert` and `sslkey` (both or
 * neither) are the client's certificate, for servers that ask for one. Certificate files without an sslmode mean
 * verify-full; the verifying modes need `sslrootcert` (libpq would look in ~/.postgresql/root.crt; nothing here
 * reads a file nobody named). A URL with none of these parameters is returned as it is, postgres.js' own default.
 * Throws PostgresUrlError naming the parameter: an unknown mode, a parameter given twice or empty, a file that cannot
 * be read or is not PEM, a combination libpq would refuse or silently ignore.
 */
export function connectionOptionsOf(url: string, options: ConnectionOptionsOptions = {}): PostgresConnection {
  const source = options.source ?? 'the PostgreSQL URL'
  const fail: (message: string) => never = (message) => {
    throw new PostgresUrlError(`${source}: ${message}`)
  }
  if (url.length > maxUrlLength) fail(`longer than ${maxUrlLength} characters`)
  const match = urlShape.exec(url)
  // not a URL this reads (a postgres.js options string, say): postgres.js judges it as before
  if (!match) return { url, sslmode: undefined, ssl: undefined }
  const [, base = '', query, fragment = ''] = match

  const given: Partial<Record<TlsParameter, string>> = {}
  const kept: string[] = []
  let postgresJsSsl = false
  for (const segment of query === undefined || query === '' ? [] : query.split('&')) {
    const equals = segment.indexOf('=')
    const rawKey = equals < 0 ? segment : segment.slice(0, equals)
    const key = decode(rawKey)
    if (key === undefined) fail('a query parameter has a malformed percent-encoding')
    if (key === 'ssl') postgresJsSsl = true
    if (unsupportedParameters.has(key))
      fail(`${key} is not supported (supported: ${tlsParameters.join(', ')})`)
    if (!isTlsParameter(key)) {
      kept.push(segment)
      continue
    }
    const value = equals < 0 ? '' : decode(segment.slice(equals + 1))
    if (value === undefined) fail(`${key} has a malformed percent-encoding`)
    if (value === '') fail(`${key} is empty`)
    if (given[key] !== undefined) fail(`${key} is given twice`)
    given[key] = value
  }
  const plainUrl = `${base}${kept.length > 0 ? `?${kept.join('&')}` : ''}${fragment}`

  const { sslrootcert, sslcert, sslkey } = given
  const anyFile = sslrootcert !== undefined || sslcert !== undefined || sslkey !== undefined
  if (given.sslmode === undefined && !anyFile) return { url: plainUrl, sslmode: undefined, ssl: undefined }
  if (postgresJsSsl) fail("give libpq's sslmode or postgres.js' ssl parameter, not both")
  const sslmode: SslMode = given.sslmode === undefined ? 'verify-full' : parseMode(given.sslmode, fail)

  if ((sslcert === undefined) !== (sslkey === undefined))
    fail(
      `sslcert and sslkey go together (the client's certificate and its key): ${sslcert ? 'sslkey' : 'sslcert'} is missing`,
    )
  if (sslmode === 'disable' || sslmode === 'allow' || sslmode === 'prefer') {
    if (anyFile)
      fail(
        `sslmode=${sslmode} does not verify the server nor send a client certificate, so it cannot use ${
          sslrootcert !== undefined ? 'sslrootcert' : 'sslcert'
        }: use verify-full`,
      )
    return { url: plainUrl, sslmode, ssl: sslmode === 'disable' ? false : sslmode }
  }
  if (sslrootcert === 'system' && sslmode !== 'verify-full')
    fail(
      `sslrootcert=system needs sslmode=verify-full (the system's CAs sign certificates for anyone's host)`,
    )
  if (sslrootcert === undefined && sslmode !== 'require')
    fail(`sslmode=${sslmode} needs sslrootcert: the CA's certificate file (PEM), or 'system'`)

  const read = (parameter: 'sslrootcert' | 'sslcert' | 'sslkey', path: string): string => {
    let text: string
    try {
      text = readFileSync(path, 'utf8')
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code ?? 'unreadable'
      return fail(`${parameter} ${path} cannot be read (${code})`)
    }
    if (!text.includes(`-----BEGIN `) || !text.includes(pemMarker[parameter]))
      fail(`${parameter} ${path} is not a PEM ${parameter === 'sslkey' ? 'private key' : 'certificate'}`)
    return text
  }
  const tls: ConnectionOptions = {}
  if (sslrootcert !== undefined && sslrootcert !== 'system') tls.ca = read('sslrootcert', sslrootcert)
  if (sslcert !== undefined && sslkey !== undefined) {
    tls.cert = read('sslcert', sslcert)
    tls.key = read('sslkey', sslkey)
  }
  if (sslmode === 'require' && sslrootcert === undefined) {
    tls.rejectUnauthorized = false
  } else {
    tls.rejectUnauthorized = true
    // verify-ca (and require with a CA): the chain is checked, the name in the certificate is not
    if (sslmode !== 'verify-full') tls.checkServerIdentity = () => undefined
  }
  return { url: plainUrl, sslmode, ssl: tls }
}

function parseMode(value: string, fail: (message: string) => never): SslMode {
  const mode = sslModes.find((candidate) => candidate === value)
  return mode ?? fail(`sslmode '${value.slice(0, 40)}' is not one of ${sslModes.join(', ')}`)
}
