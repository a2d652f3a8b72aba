// The chart driven the way a user drives it: helm lint, helm template (parsed into objects) and kubeconform, each
// run against the chart in deploy/helm/meridian with the tools of the cache folder.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { run } from '@meridian/infra'
import { parseAllDocuments } from 'yaml'
import { chartDir, type DeployTools } from './tools.ts'

/** One rendered Kubernetes object, as parsed. */
export interface KubeObject {
  apiVersion: string
  kind: string
  metadata: { name: string; labels?: Record<string, string>; annotations?: Record<string, string> }
  // the rest is per kind; the policy checks read it through their own narrow types
  [field: string]: unknown
}

export interface RenderOptions {
  /** values files, relative to the chart (examples/scaled-out.yaml) or absolute */
  valuesFiles?: string[]
  /** --set NAME=VALUE pairs */
  set?: string[]
  releaseName?: string
}

const valuesArgs = (options: RenderOptions): string[] => [
  ...(options.valuesFiles ?? []).flatMap((file) => [
    '-f',
    file.startsWith('/') ? file : join(chartDir, file),
  ]),
  ...(options.set ?? []).flatMap((pair) => ['--set', pair]),
]

/** `helm lint --strict`: resolves with its output, rejects with it when the chart has an error or a warning. */
export function lintChart(tools: DeployTools, options: RenderOptions = {}): Promise<string> {
  return run(tools.helm, [
    'lint',
    '--strict',
    '--kube-version',
    tools.kubernetesVersion,
    chartDir,
    ...valuesArgs(options),
  ])
}

/** `helm template`'s manifest text; rejects with helm's message when the values or a template are wrong. */
export function renderChart(tools: DeployTools, options: RenderOptions = {}): Promise<string> {
  return run(tools.helm, [
    'template',
    options.releaseName ?? 'meridian',
    chartDir,
    '--namespace',
    'meridian',
    '--kube-version',
    tools.kubernetesVersion,
    ...valuesArgs(options),
  ])
}

/** Every object of a multi-document manifest, empty documents left out. */
export function parseManifest(text: string): KubeObject[] {
  return parseAllDocuments(text).flatMap((document) => {
    if (document.errors.length)
      throw new Error(`rendered YAML does not parse: ${document.errors[0]?.message}`)
    const object = document.toJS() as KubeObject | null
    return object ? [object] : []
  })
}

/** The kinds that are custom resources: no schema for them in Kubernetes' own, the policy checks read them instead. */
export const customResourceKinds = [
  'KafkaTopic',
  'Kafka',
  'KafkaNodePool',
  'Cluster',
  'Database',
  'ServiceMonitor',
]

export interface SchemaCheck {
  valid: boolean
  /** kubeconform's lines: one per invalid object, then its summary */
  output: string
}

/**
 * kubeconform -strict of a manifest against the cached schemas of tools.kubernetesVersion: an unknown field, a wrong
 * type or a kind without a schema (unless skipped as a custom resource) makes it invalid. Never goes to the network.
 */
export async function checkSchemas(tools: DeployTools, manifest: string): Promise<SchemaCheck> {
  const dir = mkdtempSync(join(tmpdir(), 'meridian-kubeconform-'))
  try {
    const file = join(dir, 'manifest.yaml')
    writeFileSync(file, manifest)
    const args = [
      '-strict',
      '-summary',
      '-kubernetes-version',
      tools.kubernetesVersion,
      '-schema-location',
      tools.schemaLocation,
      '-skip',
      customResourceKinds.join(','),
      file,
    ]
    const output = await run(tools.kubeconform, args).then(
      (text) => ({ valid: true, output: text }),
      (error: Error) => ({ valid: false, output: error.message }),
    )
    return output
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}
