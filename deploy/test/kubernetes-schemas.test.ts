import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { convertSchemaFolder, inlineDefinitions } from '../src/kubernetes-schemas.ts'

const definitions = {
  'io.k8s.Meta': { type: 'object', properties: { name: { $ref: '#/$defs/io.k8s.Name' } } },
  'io.k8s.Name': { type: 'string' },
  'io.k8s.Spec': {
    type: 'object',
    properties: { replicas: { type: 'integer' } },
    additionalProperties: false,
  },
  'io.k8s.Unused': { type: 'boolean' },
}

const deployment = {
  $schema: 'https://json-schema.org/draft/2020-12/schema',
  properties: {
    kind: { enum: ['Deployment'] },
    metadata: { $ref: '/api/_definitions.json#/$defs/io.k8s.Meta' },
    spec: { $ref: '/api/_definitions.json#/$defs/io.k8s.Spec' },
  },
}

describe("kubernetes-validate's schemas in kubeconform's layout", () => {
  it('when a kind refers to the shared definitions, then they are inlined with the ones they refer to, and no other', () => {
    const inlined = inlineDefinitions(deployment, definitions)
    expect(inlined.properties).toEqual({
      kind: { enum: ['Deployment'] },
      metadata: { $ref: '#/$defs/io.k8s.Meta' },
      spec: { $ref: '#/$defs/io.k8s.Spec' },
    })
    expect(Object.keys(inlined.$defs as object).sort()).toEqual(['io.k8s.Meta', 'io.k8s.Name', 'io.k8s.Spec'])
    expect(JSON.stringify(inlined)).not.toContain('/api/_definitions.json')
  })

  it('when a kind refers to a definition that does not exist, then the conversion fails and names it', () => {
    const broken = {
      properties: { kind: {}, spec: { $ref: '/api/_definitions.json#/$defs/io.k8s.Missing' } },
    }
    expect(() => inlineDefinitions(broken, definitions)).toThrow(/no definition io\.k8s\.Missing/)
  })

  it('when a folder is converted, then each kind gets its own file under its name and the shared files none', () => {
    const source = mkdtempSync(join(tmpdir(), 'kv-source-'))
    const target = join(mkdtempSync(join(tmpdir(), 'kv-target-')), 'v1.31.0-standalone-strict')
    writeFileSync(join(source, '_definitions.json'), JSON.stringify({ $defs: definitions }))
    writeFileSync(join(source, 'all.json'), JSON.stringify({ oneOf: [] }))
    writeFileSync(join(source, 'deployment-apps-v1.json'), JSON.stringify(deployment))
    // a part of an object, not a kind a manifest holds
    writeFileSync(join(source, 'deploymentspec-apps-v1.json'), JSON.stringify(definitions['io.k8s.Spec']))
    expect(convertSchemaFolder(source, target)).toBe(1)
    const written = JSON.parse(readFileSync(join(target, 'deployment-apps-v1.json'), 'utf8'))
    expect(written.$defs['io.k8s.Name']).toEqual({ type: 'string' })
  })
})
