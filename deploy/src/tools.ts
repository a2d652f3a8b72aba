// The chart's and the alert rules' tools, obtained once into the cache folder and found there afterwards: helm,
// kubeconform and promtool built from the Go module proxy (wrapper modules in deploy/tools, whose go.sum pins every module), and Kubernetes' JSON
// schemas from the PyPI wheel kubernetes-validate (pinned by version and hash), converted for kubeconform.
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { layoutFromEnv, type Progress, run } from '@meridian/infra'
import { convertSchemaFolder } from './kubernetes-schemas.ts'

export const deployDir = resolve(dirname(fileURLToPath(import.meta.url)), '..')
export const chartDir = join(deployDir, 'helm', 'meridian')

/** The Kubernetes version the chart is validated against (the chart's kubeVersion allows 1.30 and later). */
export const kubernetesVersion = '1.31.0'

/** The wheel that carries Kubernetes' schemas, by version and by the sha256 of its file on the registry. */
export const kubernetesValidateWheel = {
  version: '1.37.0',
  sha256: '85136d018a27b50ec7fc049d902bfa5193f5976807e6c0f408e3ab6fe078cad9',
} as const

export interface DeployTools {
  helm: string
  kubeconform: string
  /** Prometheus' promtool: checks and unit-tests deploy/observability's rules */
  promtool: string
  /** kubeconform's -schema-location template, pointing into the cache */
  schemaLocation: string
  kubernetesVersion: string
}

interface GoTool {
  name: 'helm' | 'kubeconform' | 'promtool'
  module: string
  mainPackage: string
}

const goTools: readonly GoTool[] = [
  { name: 'helm', module: 'helm.sh/helm/v3', mainPackage: 'helm.sh/helm/v3/cmd/helm' },
  {
    name: 'kubeconform',
    module: 'github.com/yannh/kubeconform',
    mainPackage: 'github.com/yannh/kubeconform/cmd/kubeconform',
  },
  {
    name: 'promtool',
    module: 'github.com/prometheus/prometheus',
    mainPackage: 'github.com/prometheus/prometheus/cmd/promtool',
  },
]

/** The version of a tool its wrapper module requires. */
export function pinnedToolVersion(tool: GoTool): string {
  const goMod = join(deployDir, 'tools', tool.name, 'go.mod')
  const escaped = tool.module.replaceAll('.', '\\.')
  const match = new RegExp(`^require ${escaped} (v[\\w.-]+)$`, 'm').exec(readFileSync(goMod, 'utf8'))
  if (!match?.[1]) throw new Error(`${tool.name}: no version of ${tool.module} required in ${goMod}`)
  return match[1]
}

async function goBuild(tool: GoTool, binDir: string, progress: Progress): Promise<string> {
  const version = pinnedToolVersion(tool)
  const path = join(binDir, `${tool.name}-${version}`)
  if (existsSync(path)) return path
  await run('go', ['version']).catch(() => {
    throw new Error(
      `${tool.name}: the Go toolchain is needed once to build ${tool.name}; install Go 1.21+ and retry`,
    )
  })
  progress(
    `building ${tool.name} ${version} from the Go module proxy into ${path}; first run only, takes minutes`,
  )
  mkdirSync(binDir, { recursive: true })
  // a name of this process's own, so that two first runs at once do not write one file
  const partial = `${path}.${process.pid}.partial`
  await run('go', ['build', '-trimpath', '-buildvcs=false', '-o', partial, tool.mainPackage], {
    cwd: join(deployDir, 'tools', tool.name),
    // go.sum pins every module; nothing else is consulted
    // go.mod asks for a newer Go than many machines have: an older one (1.21+) fetches it from the module proxy,
    // also where the system's go.env says GOTOOLCHAIN=local (Debian's), unless the caller chose otherwise
    env: {
      ...process.env,
      CGO_ENABLED: '0',
      GOFLAGS: '-mod=readonly',
      GOTOOLCHAIN: process.env.GOTOOLCHAIN ?? 'auto',
    },
    timeoutMs: 30 * 60_000,
  })
  renameSync(partial, path)
  return path
}

/** The kubeconform layout of one Kubernetes version's strict schemas, fetched and converted on first use. */
async function kubernetesSchemas(home: string, progress: Progress): Promise<string> {
  const { version, sha256 } = kubernetesValidateWheel
  const root = join(home, `kubernetes-validate-${version}`)
  const target = join(root, `v${kubernetesVersion}-standalone-strict`)
  if (existsSync(target)) return root
  progress(
    `fetching Kubernetes ${kubernetesVersion}'s schemas (PyPI wheel kubernetes-validate ${version}) into ${root}; first run only`,
  )
  const work = join(home, `kubernetes-validate-${version}.${process.pid}.partial`)
  rmSync(work, { recursive: true, force: true })
  mkdirSync(work, { recursive: true })
  // a virtual environment of our own, so that pip is there whatever the system Python has (as scripts/api-fuzz does)
  const venv = join(home, 'python')
  if (!existsSync(join(venv, 'bin', 'pip'))) await run('python3', ['-m', 'venv', venv])
  const requirements = join(work, 'requirements.txt')
  writeFileSync(requirements, `kubernetes-validate==${version} --hash=sha256:${sha256}\n`)
  await run(join(venv, 'bin', 'pip'), [
    'download',
    '--quiet',
    '--disable-pip-version-check',
    '--no-input',
    '--no-deps',
    '--only-binary=:all:',
    '--require-hashes',
    '-r',
    requirements,
    '-d',
    work,
  ])
  const wheel = join(work, `kubernetes_validate-${version}-py3-none-any.whl`)
  const folder = `kubernetes_validate/kubernetes-json-schema/v${kubernetesVersion}-local-strict/`
  // only the one version's folder of the wheel's 26
  await run('python3', [
    '-c',
    'import sys, zipfile\nz = zipfile.ZipFile(sys.argv[1])\nfor n in z.namelist():\n  if n.startswith(sys.argv[3]): z.extract(n, sys.argv[2])',
    wheel,
    join(work, 'wheel'),
    folder,
  ])
  const converted = join(work, 'out')
  const written = convertSchemaFolder(join(work, 'wheel', folder), converted)
  if (written < 50) throw new Error(`kubernetes schemas: only ${written} kinds found in ${wheel}`)
  mkdirSync(root, { recursive: true })
  renameSync(converted, target)
  rmSync(work, { recursive: true, force: true })
  return root
}

/** helm, kubeconform, promtool and the schemas, from the cache, obtained first where missing. */
export async function ensureDeployTools(progress: Progress = () => {}): Promise<DeployTools> {
  const home = layoutFromEnv().componentDir('deploy')
  const binDir = join(home, 'bin')
  const [helm, kubeconform, promtool] = goTools
  const helmPath = await goBuild(helm!, binDir, progress)
  const kubeconformPath = await goBuild(kubeconform!, binDir, progress)
  const promtoolPath = await goBuild(promtool!, binDir, progress)
  const schemas = await kubernetesSchemas(home, progress)
  return {
    helm: helmPath,
    kubeconform: kubeconformPath,
    promtool: promtoolPath,
    schemaLocation: `${schemas}/{{ .NormalizedKubernetesVersion }}-standalone{{ .StrictSuffix }}/{{ .ResourceKind }}{{ .KindSuffix }}.json`,
    kubernetesVersion,
  }
}
