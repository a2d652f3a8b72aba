// What every secure engine (infra/src/secure/<engine>.ts) takes and gives: one instance of the engine as a native
// process with TLS made by the run's CA and a credential of its own for each service, kept in the instance's folder.
import { randomBytes } from 'node:crypto'
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import type { CertificateAuthority } from './certificates.ts'

export interface SecureEngineOptions<Ports> {
  /** the instance's own folder: config, data, credentials.json (0600), log */
  dir: string
  ca: CertificateAuthority
  /** listen address, also in the server certificate ('127.0.0.1') */
  host: string
  /** free ports in tests; the standard ones when `infra up --secure` uses it */
  ports: Ports
  /** service names that each get their own credential: e.g. ['auth', 'order'] */
  principals: readonly string[]
}

export interface SecureEngineInstance {
  pid: number
  logFile: string
  /** the environment variables a service named `principal` is configured with: its own credential, the CA */
  envFor(principal: string): Record<string, string>
  /** an administrator's variables (superuser, bootstrap token, …): what provisioning uses */
  adminEnv(): Record<string, string>
  stop(): Promise<void>
}

/** A new random secret: 32 bytes, base64url (a password, a token; safe in URLs and as an SQL literal). */
export const randomSecret = (): string => randomBytes(32).toString('base64url')

/**
 * The instance's credentials, kept in `<dir>/credentials.json` (mode 0600; never logged): read when the file exists,
 * `complete` adding what it lacks (a principal new since), made by `complete` from nothing otherwise. `created`: the
 * file did not exist (the engine's data, made with other credentials or none, must be made again).
 */
export function instanceCredentials<T>(
  dir: string,
  complete: (existing: T | undefined) => T,
): { credentials: T; created: boolean } {
  mkdirSync(dir, { recursive: true, mode: 0o700 })
  const file = join(dir, 'credentials.json')
  const existing = existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as T) : undefined
  const credentials = complete(existing)
  const text = `${JSON.stringify(credentials, null, 2)}\n`
  if (existing === undefined || text !== `${JSON.stringify(existing, null, 2)}\n`) {
    // a partial file left by an interrupted write may have another mode: the mode applies to a new file only
    rmSync(`${file}.partial`, { force: true })
    writeFileSync(`${file}.partial`, text, { mode: 0o600 })
    renameSync(`${file}.partial`, file)
  }
  return { credentials, created: existing === undefined }
}

/** `host` as it goes in a URL's authority: an IPv6 address in brackets. */
export const urlHost = (host: string): string => (host.includes(':') ? `[${host}]` : host)
