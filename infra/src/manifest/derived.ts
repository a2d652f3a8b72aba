// The files ./scripts/manifest writes from the services' manifest (manifest.ts) and from the events catalogue of
// @meridian/contracts (the one source of event types and of the topic layout). A file that holds more than the lists
// (docker-compose.yml, the chart's values, schema and helpers) has its derived section between a `manifest:begin` line
// and a `manifest:end` line; everything outside them is written by hand and kept as it is.
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { eventCatalogue, kafkaTopicLayout } from '@meridian/contracts'
import { gatewayName, type ManifestEntry, servicesOf } from './manifest.ts'

export interface DerivedFile {
  /** from the repository's root */
  file: string
  /** what ./scripts/manifest writes */
  expected: string
  /** what the file holds now ('' when it is missing) */
  current: string
}

export class DerivedFileError extends Error {
  override name = 'DerivedFileError'
}

export const beginMarker = 'manifest:begin'
export const endMarker = 'manifest:end'

/** `text` with the lines between its begin and end marker lines replaced by `lines`. */
export function replaceSection(file: string, text: string, lines: readonly string[]): string {
  const all = text.split('\n')
  const begin = all.findIndex((line) => line.includes(beginMarker))
  const end = all.findIndex((line, index) => index > begin && line.includes(endMarker))
  if (begin < 0 || end < 0)
    throw new DerivedFileError(
      `${file}: no '${beginMarker}' line followed by a '${endMarker}' line around its derived section`,
    )
  return [...all.slice(0, begin + 1), ...lines, ...all.slice(end)].join('\n')
}

/** `realtime-gateway` -> `REALTIME_GATEWAY`: the prefix of a service's variables (REALTIME_GATEWAY_DATABASE_URL). */
export const variablePrefix = (name: string): string => name.toUpperCase().replaceAll('-', '_')

/** The topic list: each event type of the catalogue, in its order, with the layout's partitions and retries. */
export function topicsJson(): string {
  const declaration = {
    $comment:
      'Every Kafka topic Meridian uses, declared once. Each event type gets its own topic plus {type}.retry.1..{retries} and {type}.dlt, all with the same partition count. Automatic topic creation is off on the broker, so a topic missing here does not exist. Written by ./scripts/manifest from the eventCatalogue and kafkaTopicLayout of packages/contracts: change those, then run it.',
    partitions: kafkaTopicLayout.partitions,
    retries: kafkaTopicLayout.retries,
    eventTypes: Object.keys(eventCatalogue),
  }
  return `${JSON.stringify(declaration, null, 2)}\n`
}

/**
 * A service's own variables are the block `x-<name>-environment: &<name>-own` above `services:` (written by hand,
 * with the comments that say why); its generated block merges them with the shared ones, its own first: in a YAML
 * merge list the earlier map wins, so a service may override a shared default.
 */
const ownEnvironment = (compose: string, name: string): boolean =>
  compose.includes(`\nx-${name}-environment: &${name}-own\n`)

function composeService(entry: ManifestEntry, compose: string, version: string, others: string[]): string[] {
  const { name } = entry
  const image = `    image: meridian/${name}:\${MERIDIAN_TAG:-${version}}`
  const merge = ownEnvironment(compose, name) ? `[*${name}-own, *environment]` : '*environment'
  const environment = [
    `      <<: ${merge}`,
    `      PORT: "${entry.port}"`,
    ...(entry.database === undefined
      ? []
      : [`      DATABASE_URL: \${${variablePrefix(name)}_DATABASE_URL:-}`]),
  ]
  if (entry.database === undefined) {
    const gateway =
      name === gatewayName
        ? [
            '    # started after the others (it finds them in Consul when a request comes). Not "service_healthy": podman without',
            '    # systemd runs no health checks, so such a wait would never end there; scripts/images up waits for readiness.',
            `    depends_on: [${others.join(', ')}]`,
          ]
        : []
    return [`  ${name}:`, '    <<: *service', image, '    environment:', ...environment, ...gateway, '']
  }
  return [
    `  ${name}:`,
    '    <<: *service',
    image,
    `    environment: &${name}-environment`,
    ...environment,
    '    depends_on:',
    `      ${name}-migrate:`,
    '        condition: service_completed_successfully',
    '',
    `  # its migrations: the same image and configuration, \`node dist/migrate.js\`, to its end before ${name} starts`,
    `  ${name}-migrate:`,
    '    <<: *migrate',
    image,
    `    environment: *${name}-environment`,
    '',
  ]
}

/**
 * docker-compose.yml's services: each with its migration when it has a database, the gateway after the others (it
 * waits for them). The payment simulator's block is written by hand: its environment is nothing like a service's.
 */
export function composeYaml(compose: string, entries: readonly ManifestEntry[], version: string): string {
  const services = servicesOf(entries)
  const others = services.filter((entry) => entry.name !== gatewayName)
  const ordered = [...others, ...services.filter((entry) => entry.name === gatewayName)]
  const names = others.map((entry) => entry.name)
  return replaceSection(
    'docker-compose.yml',
    compose,
    ordered.flatMap((entry) => composeService(entry, compose, version, names)),
  )
}

/** The chart's catalogue (templates/_helpers.tpl): each service's port and database, "" for none. */
export function chartCatalogue(helpers: string, entries: readonly ManifestEntry[]): string {
  return replaceSection('deploy/helm/meridian/templates/_helpers.tpl', helpers, [
    '{{- define "meridian.catalogue" -}}',
    ...servicesOf(entries).map(
      (entry) => `${entry.name}: { port: ${entry.port}, database: ${entry.database ?? '""'} }`,
    ),
    '{{- end }}',
  ])
}

/** The chart's values: `services:` with an empty map per service (defaults apply). */
export function chartValues(values: string, entries: readonly ManifestEntry[]): string {
  return replaceSection('deploy/helm/meridian/values.yaml', values, [
    'services:',
    ...servicesOf(entries).map((entry) => `  ${entry.name}: {}`),
  ])
}

// The schema is JSON (no comments, so no markers): its `services` object is found by its exact text, as biome formats it
const schemaServicesStart =
  '\n    "services": {\n      "type": "object",\n      "additionalProperties": false,\n      "properties": {\n'
const schemaServicesEnd = '\n      }\n    },\n'

/** The chart's values schema: `services` allows exactly the services, each the definition `service`. */
export function chartSchema(schema: string, entries: readonly ManifestEntry[]): string {
  const start = schema.indexOf(schemaServicesStart)
  const end = start < 0 ? -1 : schema.indexOf(schemaServicesEnd, start + schemaServicesStart.length)
  if (start < 0 || end < 0)
    throw new DerivedFileError(
      'deploy/helm/meridian/values.schema.json: no "services" object with "properties" (its text as biome formats it)',
    )
  const properties = servicesOf(entries)
    .map((entry) => `        "${entry.name}": {\n          "$ref": "#/definitions/service"\n        }`)
    .join(',\n')
  return `${schema.slice(0, start + schemaServicesStart.length)}${properties}${schema.slice(end)}`
}

const read = (root: string, file: string): string => {
  try {
    return readFileSync(join(root, file), 'utf8')
  } catch {
    return ''
  }
}

/** Every derived file, what it holds and what it should. */
export function derivedFiles(root: string, entries: readonly ManifestEntry[]): DerivedFile[] {
  const version = (JSON.parse(read(root, 'package.json') || '{}') as { version?: string }).version
  if (!version)
    throw new DerivedFileError("package.json: no version (the images' default tag in docker-compose.yml)")
  const derive = (file: string, from: (current: string) => string): DerivedFile => {
    const current = read(root, file)
    return { file, expected: from(current), current }
  }
  return [
    derive('infra/topics.json', topicsJson),
    // the chart reads its own copy (a chart packs only its folder)
    derive('deploy/helm/meridian/files/topics.json', topicsJson),
    derive('docker-compose.yml', (current) => composeYaml(current, entries, version)),
    derive('deploy/helm/meridian/templates/_helpers.tpl', (current) => chartCatalogue(current, entries)),
    derive('deploy/helm/meridian/values.yaml', (current) => chartValues(current, entries)),
    derive('deploy/helm/meridian/values.schema.json', (current) => chartSchema(current, entries)),
  ]
}

/** The derived files that differ from what ./scripts/manifest would write. */
export const staleFiles = (files: readonly DerivedFile[]): DerivedFile[] =>
  files.filter((file) => file.current !== file.expected)
