// Kubernetes' JSON schemas as the PyPI wheel kubernetes-validate ships them, rewritten into the layout kubeconform
// reads offline: one self-contained file per kind, its `$ref`s into the shared _definitions.json inlined as `$defs`.
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'

type Json = null | boolean | number | string | Json[] | { [key: string]: Json }
type JsonObject = { [key: string]: Json }

// kubernetes-validate's files point at their shared definitions as /api/_definitions.json#/$defs/<name>, which
// kubeconform would look for at the file system's root; inside _definitions.json they are #/$defs/<name>.
const definitionRef = /^(?:\/api\/_definitions\.json)?#\/\$defs\/(.+)$/

const isObject = (value: Json | undefined): value is JsonObject =>
  typeof value === 'object' && value !== null && !Array.isArray(value)

/** A copy of `node` whose definition references point into the same document, and the definitions it names. */
function rewriteRefs(node: Json, named: Set<string>): Json {
  if (Array.isArray(node)) return node.map((item) => rewriteRefs(item, named))
  if (!isObject(node)) return node
  const copy: JsonObject = {}
  for (const [key, value] of Object.entries(node)) {
    const match = key === '$ref' && typeof value === 'string' ? definitionRef.exec(value) : null
    if (match?.[1]) {
      named.add(match[1])
      copy[key] = `#/$defs/${match[1]}`
    } else copy[key] = rewriteRefs(value, named)
  }
  return copy
}

/** The schema of one kind with every definition it reaches, directly or through others, inlined. */
export function inlineDefinitions(schema: JsonObject, definitions: JsonObject): JsonObject {
  const pending = new Set<string>()
  const root = rewriteRefs(schema, pending) as JsonObject
  const inlined: JsonObject = {}
  for (const name of pending) {
    if (name in inlined) continue
    const definition = definitions[name]
    if (definition === undefined) throw new Error(`kubernetes schemas: no definition ${name}`)
    inlined[name] = rewriteRefs(definition, pending) // a Set iterates over what is added while it runs
  }
  return Object.keys(inlined).length ? { ...root, $defs: inlined } : root
}

/**
 * Writes into targetDir one schema per kind of sourceDir (a kubernetes-validate version folder, such as
 * v1.31.0-local-strict), named as kubeconform's `{{ .ResourceKind }}{{ .KindSuffix }}.json` (deployment-apps-v1.json).
 * Returns how many it wrote.
 */
export function convertSchemaFolder(sourceDir: string, targetDir: string): number {
  const definitionsFile = JSON.parse(readFileSync(join(sourceDir, '_definitions.json'), 'utf8')) as JsonObject
  const definitions = definitionsFile.$defs
  if (!isObject(definitions))
    throw new Error(`kubernetes schemas: ${sourceDir}/_definitions.json has no $defs`)
  mkdirSync(targetDir, { recursive: true })
  let written = 0
  for (const file of readdirSync(sourceDir)) {
    if (!file.endsWith('.json') || file === '_definitions.json' || file === 'all.json') continue
    const schema = JSON.parse(readFileSync(join(sourceDir, file), 'utf8')) as Json
    // only objects a manifest can hold: those with a kind
    const properties = isObject(schema) ? schema.properties : undefined
    if (!isObject(schema) || !isObject(properties) || !('kind' in properties)) continue
    writeFileSync(join(targetDir, file), JSON.stringify(inlineDefinitions(schema, definitions)))
    written += 1
  }
  return written
}
