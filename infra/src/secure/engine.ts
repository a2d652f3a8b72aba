// What every secure engine (infra/src/secure/<engine>.ts) takes and gives: one instance in a folder of its own, TLS from
// the run's CA, a credential per service; and the credentials file they keep their secrets in.
import { randomBytes } from 'node:crypto'
import { existsSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs'
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
 * The instance's credentials, kept in `<dir>/credentials.json` (mode 0600): `complete` gets what the file holds (an
 * empty object the first time) and returns it with whatever is missing made anew, so that a secret is generated once
 * per instance folder and a principal added later gets its own without changing the others'. The file is written
 * (under a temporary name, then renamed) only when something was added. Nothing here logs a secret.
 */
export function instanceCredentials<Credentials extends object>(
  dir: string,
  complete: (stored: Partial<Credentials>) => Credentials,
): Credentials {
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
