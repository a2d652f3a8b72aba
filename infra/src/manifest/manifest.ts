// The one list of what Meridian runs: each service declares its own facts in a `meridian` field of its
// services/<name>/package.json (its port, its database), and infra's package.json declares the payment simulator's
// image the same way. scripts/images and infra's TypeScript read this list; ./scripts/manifest writes the files that
// cannot read it (docker-compose.yml, the chart) from it. docs/how-to/development.md, "Adding a service".
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { type Static, Type } from 'typebox'
import { Value } from 'typebox/value'

/** What a service's package.json says of it under `meridian`. */
export const ServiceDeclaration = Type.Object(
  {
    /** PORT's default (the service's config.ts), the image's and compose's PORT, the chart's container port */
    port: Type.Integer({ minimum: 1, maximum: 65535 }),
    /** its own PostgreSQL database; absent: none (a service with migrations/ has one, one without has none) */
    database: Type.Optional(Type.String({ pattern: '^[a-z][a-z0-9_]*$', maxLength: 63 })),
    /** the path that answers 2xx once it is ready; default /health/ready (the service kit's) */
    health: Type.Optional(Type.String({ pattern: '^/[a-z0-9/_-]*$' })),
  },
  { additionalProperties: false },
)
export type ServiceDeclaration = Static<typeof ServiceDeclaration>

/** What infra's package.json says under `meridian`: an image built from infra (the payment simulator), no service. */
export const ToolDeclaration = Type.Object(
  {
    image: Type.String({ pattern: '^[a-z][a-z0-9-]*$' }),
    port: Type.Integer({ minimum: 1, maximum: 65535 }),
    health: Type.String({ pattern: '^/[a-z0-9/_-]*$' }),
  },
  { additionalProperties: false },
)
export type ToolDeclaration = Static<typeof ToolDeclaration>

export interface ManifestEntry {
  /** the service's folder name, which is its image's name (meridian/<name>) */
  name: string
  port: number
  database?: string
  health: string
  /** a service of services/ (in the chart and Consul); false: a tool image (the simulator), never deployed */
  service: boolean
  /** the package.json that declares it, from the repository's root */
  declaredIn: string
}

/** The gateway comes first in every list (the public entry); the others by port. */
export const gatewayName = 'gateway'

export class ManifestError extends Error {
  override name = 'ManifestError'
}

function declarationErrors(
  schema: typeof ServiceDeclaration | typeof ToolDeclaration,
  value: unknown,
): string[] {
  return [...Value.Errors(schema, value)].map((error) => `${error.instancePath}: ${error.message}`)
}

function readPackage(file: string): Record<string, unknown> {
  return JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>
}

/**
 * Every service of services/ (a folder with a package.json and src/main.ts, as the system runner finds them) with its
 * declaration, then infra's tool images. Throws ManifestError naming every problem: a service without a declaration,
 * a declaration the schema refuses, a database declared without migrations/ or migrations/ without a database, a port
 * or a database two entries share.
 */
export function readManifest(root: string): ManifestEntry[] {
  const problems: string[] = []
  const entries: ManifestEntry[] = []
  const servicesDir = join(root, 'services')
  const folders = existsSync(servicesDir)
    ? readdirSync(servicesDir, { withFileTypes: true })
        .filter((entry) => entry.isDirectory())
        .map((entry) => entry.name)
        .filter((name) => existsSync(join(servicesDir, name, 'package.json')))
        .filter((name) => existsSync(join(servicesDir, name, 'src', 'main.ts')))
        .sort()
    : []
  for (const name of folders) {
    const declaredIn = `services/${name}/package.json`
    const declared = readPackage(join(root, declaredIn)).meridian
    if (declared === undefined) {
      problems.push(`${declaredIn}: no "meridian" field (its port, its database: docs/how-to/development.md)`)
      continue
    }
    const errors = declarationErrors(ServiceDeclaration, declared)
    if (errors.length > 0) {
      problems.push(...errors.map((error) => `${declaredIn}: "meridian"${error}`))
      continue
    }
    const declaration = declared as ServiceDeclaration
    const hasMigrations = existsSync(join(servicesDir, name, 'migrations'))
    if (hasMigrations && declaration.database === undefined)
      problems.push(`${declaredIn}: the service has migrations/ but declares no "database"`)
    if (!hasMigrations && declaration.database !== undefined)
      problems.push(`${declaredIn}: "database" is declared but the service has no migrations/`)
    entries.push({
      name,
      port: declaration.port,
      ...(declaration.database === undefined ? {} : { database: declaration.database }),
      health: declaration.health ?? '/health/ready',
      service: true,
      declaredIn,
    })
  }
  const toolFile = 'infra/package.json'
  const tool = existsSync(join(root, toolFile)) ? readPackage(join(root, toolFile)).meridian : undefined
  if (tool !== undefined) {
    const errors = declarationErrors(ToolDeclaration, tool)
    if (errors.length > 0) problems.push(...errors.map((error) => `${toolFile}: "meridian"${error}`))
    else {
      const { image, port, health } = tool as ToolDeclaration
      entries.push({ name: image, port, health, service: false, declaredIn: toolFile })
    }
  }
  problems.push(...duplicates(entries))
  if (problems.length > 0) throw new ManifestError(`the services' manifest:\n  ${problems.join('\n  ')}`)
  return sortEntries(entries)
}

function duplicates(entries: readonly ManifestEntry[]): string[] {
  const problems: string[] = []
  for (const key of ['name', 'port', 'database'] as const) {
    const seen = new Map<string, string>()
    for (const entry of entries) {
      const value = entry[key]
      if (value === undefined) continue
      const other = seen.get(String(value))
      if (other !== undefined) problems.push(`${entry.declaredIn}: ${key} ${value} is ${other}'s too`)
      else seen.set(String(value), entry.declaredIn)
    }
  }
  return problems
}

/** The services first, the gateway leading them, each group by port; the tools after. */
function sortEntries(entries: ManifestEntry[]): ManifestEntry[] {
  const rank = (entry: ManifestEntry) => (!entry.service ? 2 : entry.name === gatewayName ? 0 : 1)
  return entries.sort((a, b) => rank(a) - rank(b) || a.port - b.port)
}

/** The services of services/ alone (what the chart deploys). */
export const servicesOf = (entries: readonly ManifestEntry[]): ManifestEntry[] =>
  entries.filter((entry) => entry.service)

/** Each service with a database, by name, in the manifest's order. */
export function databasesOf(entries: readonly ManifestEntry[]): Readonly<Record<string, string>> {
  return Object.freeze(
    Object.fromEntries(
      entries.flatMap((entry) => (entry.database === undefined ? [] : [[entry.name, entry.database]])),
    ),
  )
}
