// What a secure engine is given and what it offers (issue 45): one instance of the engine as a native process, with
// TLS from the run's certificate authority and a credential of its own for each service, kept in the instance's folder.
import { randomBytes } from 'node:crypto'
import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import type { CertificateAuthority } from './certificates.ts'

export interface SecureEngineOptions<Ports> {
  /** the instance's own folder: its configuration, data, credentials.json (0600) and log */
  dir: string
  ca: CertificateAuthority
  /** the address it listens on, also in its server certificate ('127.0.0.1') */
  host: string
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

/** A principal's name: it becomes a user name in the engine's configuration, so nothing but a plain name. */
const principalShape = /^[a-z][a-z0-9-]{0,62}$/

/**
 * The instance's credentials, one per name: random (32 bytes, base64url), made on first use and kept in
 * `<dir>/credentials.json` (mode 0600), so that the instance started again on its folder has the same ones. A name
 * asked for later than the others gets its own and the file is written again. Never logged.
 */
export function instanceCredentials(dir: string, names: readonly string[]): Readonly<Record<string, string>> {
  for (const name of names) {
    if (!principalShape.test(name)) throw new Error(`principal '${name}' must match ${principalShape}`)
  }
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
