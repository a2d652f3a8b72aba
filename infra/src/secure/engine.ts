// What a secure engine is given and what it offers (issue 45): one instance of the engine as a native process, with
// TLS from the run's certificate authority and a credential of its own for each service, kept in the instance's folder.
import { randomBytes } from 'node:crypto'
import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import type { CertificateAuthority } from './certificates.ts'

export interface SecureEngineOptions<Ports> {
  /** the instance's own folder: its configuration, data, credentials.json (0600) and log */
  dir: string
  ca: CertificateAuthority
  /** the address it listens on, also in its server certificate ('127.0.0.1') */
  host: string
  /** further names its server certificate holds beside `host` (`localhost` for the machine's engines) */
  serverNames?: readonly string[]
  /** free ports in tests; the standard ones when `scripts/infra up --secure` runs it */
  ports: Ports
  /** the services that each get a credential of their own: e.g. ['auth', 'order'] */
  principals: readonly string[]
}

export interface SecureEngineInstance {
  pid: number
  logFile: string
  /** the environment variables a service named `principal` is configured with: its own credential, the CA */
  envFor(principal: string): Record<string, string>
  /** an administrator's variables (superuser, bootstrap token…): what provisioning uses */
  adminEnv(): Record<string, string>
  stop(): Promise<void>
}

/**
 * What a client of an instance is given, known from the instance's folder alone (its credentials.json, the CA, its
 * host and ports): what the instance's starter returns, and what `scripts/infra env` prints for a secure engine that
 * another process started.
 */
export type SecureEngineAccess = Pick<SecureEngineInstance, 'envFor' | 'adminEnv'>

/**
 * The instance's credentials, one per name: random (32 bytes, base64url), made on first use and kept in
 * `<dir>/credentials.json` (mode 0600), so that the instance started again on its folder has the same ones. A name
 * asked for later than the others gets its own and the file is written again. Never logged.
 */
export function instanceCredentials(dir: string, names: readonly string[]): Readonly<Record<string, string>> {
  assertPrincipals(names)
  mkdirSync(dir, { recursive: true, mode: 0o700 })
  const file = join(dir, 'credentials.json')
  const kept: Record<string, string> = existsSync(file)
    ? (JSON.parse(readFileSync(file, 'utf8')) as Record<string, string>)
    : {}
  const missing = names.filter((name) => typeof kept[name] !== 'string')
  if (missing.length > 0) {
    for (const name of missing) kept[name] = randomBytes(32).toString('base64url')
    const partial = `${file}.partial`
    writeFileSync(partial, `${JSON.stringify(kept, null, 2)}\n`, { mode: 0o600 })
    chmodSync(partial, 0o600)
    renameSync(partial, file)
  }
  return Object.freeze(Object.fromEntries(names.map((name) => [name, kept[name] as string])))
}

/** A random secret: `bytes` random bytes, base64url (no padding, nothing to quote in a URL or a shell). */
export const randomSecret = (bytes = 32): string => randomBytes(bytes).toString('base64url')

/** Names a credential is made for: they reach engines' configuration (ACL rules, user names), so nothing to escape. */
const principalPattern = /^[a-z][a-z0-9-]{0,62}$/

/** Throws on a principal an engine could not name safely (empty, upper case, quotes, slashes, …). */
export function assertPrincipals(principals: readonly string[]): void {
  for (const principal of principals) {
    if (!principalPattern.test(principal)) {
      throw new Error(`principal '${principal}' must match ${principalPattern} (a service's name)`)
    }
  }
  const duplicate = principals.find((principal, index) => principals.indexOf(principal) !== index)
  if (duplicate) throw new Error(`principal '${duplicate}' is named twice`)
}

/**
 * The instance's secrets of any shape (instanceCredentials' are a password per name), kept in
 * `<dir>/credentials.json` (mode 0600): `complete` gets what the file holds (an
 * empty object the first time) and returns it with whatever is missing made anew, so that a secret is generated once
 * per instance folder and a principal added later gets its own without changing the others'. The file is written
 * (under a temporary name, then renamed) only when something was added. Nothing here logs a secret.
 */
export function instanceSecrets<Credentials extends object>(
  dir: string,
  complete: (stored: Partial<Credentials>) => Credentials,
): Credentials {
  mkdirSync(dir, { recursive: true, mode: 0o700 })
  const file = join(dir, 'credentials.json')
  const stored = existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as Partial<Credentials>) : {}
  const credentials = complete(structuredClone(stored))
  const text = `${JSON.stringify(credentials, null, 2)}\n`
  if (!existsSync(file) || readFileSync(file, 'utf8') !== text) {
    const partial = `${file}.partial`
    // a partial file left by an interrupted write may have another mode: the new one is made with 0600
    rmSync(partial, { force: true })
    writeFileSync(partial, text, { mode: 0o600 })
    renameSync(partial, file)
  }
  return credentials
}

/** `host` as it goes in a URL's authority: an IPv6 address in brackets. */
export const urlHost = (host: string): string => (host.includes(':') ? `[${host}]` : host)

/** The hosts an instance's server certificate names: its address, then the further names it was given. */
export const serverHosts = (
  options: Pick<SecureEngineOptions<unknown>, 'host' | 'serverNames'>,
): string[] => [...new Set([options.host, ...(options.serverNames ?? [])])]
