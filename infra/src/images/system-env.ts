// The environment file of the system run from images (docker-compose.yml, profile `system`), as a deployment has one:
// a database role of its own with a password of its own, one database per service owned by it, and the production
// secrets every service needs. Written once with mode 0600 and kept: the next `scripts/images up` reuses it, so the
// system's data and signing keys survive a restart. Nothing in it is a development default (production refuses those).
//
//   tsx infra/src/images/system-env.ts <file>      (scripts/images up runs it; DATABASE_URL is the server's admin URL)
import { randomBytes } from 'node:crypto'
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { dirname } from 'node:path'
import {
  databaseOfService,
  databaseUrl,
  databaseVariableOf,
  editPostgresUrl,
  postgresClient,
} from '../probes.ts'

/** The role the system's services connect as, and the prefix of its databases (apart from the development ones). */
export const systemRole = 'meridian_system'
export const systemDatabaseOf = (database: string): string => `system_${database}`

const secretNames = [
  'SERVICE_CREDENTIAL',
  'SIGNING_KEY_ENCRYPTION_SECRET',
  'OIDC_COOKIE_KEYS',
  'OIDC_WEB_CLIENT_SECRET',
  'OIDC_MACHINE_CLIENT_SECRET',
  'IDEMPOTENCY_SECRET',
  'UNSUBSCRIBE_SECRET',
  'MERIDIAN_SYSTEM_DB_PASSWORD',
] as const

const secret = () => randomBytes(32).toString('base64url')

/**
 * payment's keys at the provider, of the shapes it expects: test keys, which the simulator (the provider the file's
 * system uses) accepts; replace them with your own to charge through Stripe.
 */
const providerKeys = {
  STRIPE_SECRET_KEY: () => `sk_test_${randomBytes(24).toString('hex')}`,
  STRIPE_WEBHOOK_SECRET: () => `whsec_${randomBytes(24).toString('hex')}`,
} as const

/** NAME=value lines as compose's --env-file reads them; values here never need quoting (base64url, URLs). */
export function parseEnvFile(text: string): Record<string, string> {
  const values: Record<string, string> = {}
  for (const line of text.split('\n')) {
    const match = /^([A-Z][A-Z0-9_]*)=(.*)$/.exec(line.trim())
    if (match?.[1]) values[match[1]] = match[2] ?? ''
  }
  return values
}

/** The engines' addresses besides PostgreSQL's, as `scripts/infra env` gives them (SMTP_URL: Mailpit's, while it runs). */
const engineVariables = ['KAFKA_BROKERS', 'CONSUL_HTTP_ADDR', 'REDIS_URL', 'SMTP_URL'] as const

/**
 * The file's values: its secrets as they were when it exists, new ones otherwise; the databases' URLs on `serverUrl`;
 * the other engines' addresses from `engines` (the environment `scripts/infra env` made).
 */
export function systemEnv(
  serverUrl: string,
  previous: Record<string, string>,
  engines: NodeJS.ProcessEnv = {},
): Record<string, string> {
  const values: Record<string, string> = {}
  for (const name of engineVariables) {
    const value = engines[name]
    if (value) values[name] = value
  }
  for (const name of secretNames) values[name] = previous[name] || secret()
  for (const [name, key] of Object.entries(providerKeys)) values[name] = previous[name] || key()
  const server = editPostgresUrl(serverUrl, {
    username: systemRole,
    password: values.MERIDIAN_SYSTEM_DB_PASSWORD ?? '',
  })
  for (const [service, database] of Object.entries(databaseOfService))
    values[databaseVariableOf(service)] = databaseUrl(server, systemDatabaseOf(database))
  return values
}

/** The names a system's databases go by: the system's own (a test gives others, so as not to touch those). */
export interface SystemNames {
  role: string
  databaseOf: (database: string) => string
}

/** The role (its password set to the file's) and the databases it owns, created when missing. */
export async function ensureSystemDatabases(
  serverUrl: string,
  password: string,
  names: SystemNames = { role: systemRole, databaseOf: systemDatabaseOf },
): Promise<void> {
  // DDL takes no bind parameters: the password is base64url (letters, digits, - and _), quoted as a literal
  if (!/^[A-Za-z0-9_-]+$/.test(password)) throw new Error('the system password must be base64url')
  if (!/^[a-z_][a-z0-9_]*$/.test(names.role)) throw new Error(`not a role name: ${names.role}`)
  const sql = postgresClient(serverUrl, { max: 1, connect_timeout: 5, onnotice: () => {} })
  try {
    const [role] = await sql`select 1 from pg_roles where rolname = ${names.role}`
    await sql.unsafe(`${role ? 'alter' : 'create'} role ${names.role} with login password '${password}'`)
    for (const database of Object.values(databaseOfService)) {
      const name = names.databaseOf(database)
      const [exists] = await sql`select 1 from pg_database where datname = ${name}`
      if (!exists) await sql`create database ${sql(name)} owner ${sql(names.role)}`
    }
  } finally {
    await sql.end({ timeout: 2 })
  }
}

async function main(file: string | undefined): Promise<void> {
  const serverUrl = process.env.DATABASE_URL
  if (!file || !serverUrl) throw new Error('usage: DATABASE_URL=<server admin URL> system-env.ts <env file>')
  const previous = existsSync(file) ? parseEnvFile(readFileSync(file, 'utf8')) : {}
  const values = systemEnv(serverUrl, previous, process.env)
  await ensureSystemDatabases(serverUrl, values.MERIDIAN_SYSTEM_DB_PASSWORD ?? '')
  mkdirSync(dirname(file), { recursive: true })
  const lines = Object.entries(values).map(([name, value]) => `${name}=${value}`)
  writeFileSync(
    file,
    `# Meridian's system from images: secrets and database addresses (scripts/images up; keep it private)\n${lines.join('\n')}\n`,
    { mode: 0o600 },
  )
  chmodSync(file, 0o600)
}

if (import.meta.url === `file://${process.argv[1]}`) {
  main(process.argv[2]).catch((error: unknown) => {
    process.stderr.write(`system-env: ${error instanceof Error ? error.message : String(error)}\n`)
    process.exit(1)
  })
}
