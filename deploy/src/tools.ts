// The chart's and the alert rules' tools, obtained once into the cache folder by ./scripts/prepare (src/prerequisites.ts
// declares them) and found there afterwards: helm, kubeconform and promtool built from the Go module proxy (wrapper
// modules in deploy/tools, whose go.sum pins every module), and Kubernetes' JSON schemas from the PyPI wheel
// kubernetes-validate (pinned by version and hash), converted for kubeconform.
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { layoutFromEnv, MissingPrerequisite, runLogged } from '@meridian/infra'
import { builtGoBinary, type GoBuild } from '@meridian/infra/prepare'
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
  tags?: readonly string[]
}

export const goTools: readonly GoTool[] = [
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
    // the scrape configuration finds the services through Consul (observability/prometheus/prometheus.yml): the other
    // clouds' service discoveries (AWS, Azure, GCE, …, a third of Prometheus' dependencies) are left out of the build
    tags: ['remove_all_sd', 'enable_consul_sd'],
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

const deployHome = () => layoutFromEnv().componentDir('deploy')

/** How a tool is built from its wrapper module in deploy/tools, once per version, into the cache's deploy/bin. */
export function goToolBuild(tool: GoTool): GoBuild {
  const version = pinnedToolVersion(tool)
  return {
    name: tool.name,
    title: `${tool.name} ${version}`,
    version,
    wrapperDir: join(deployDir, 'tools', tool.name),
    mainPackage: tool.mainPackage,
    ...(tool.tags ? { tags: tool.tags } : {}),
    // go.mod asks for a newer Go than many machines have: an older one (1.21+) fetches it from the module proxy,
    // also where the system's go.env says GOTOOLCHAIN=local (Debian's), unless the caller chose otherwise
    toolchain: process.env.GOTOOLCHAIN ?? 'auto',
    binDir: join(deployHome(), 'bin'),
  }
}

/** Where one Kubernetes version's strict schemas are, in kubeconform's layout (present or not). */
export function kubernetesSchemasDir(): { root: string; target: string } {
  const root = join(deployHome(), `kubernetes-validate-${kubernetesValidateWheel.version}`)
  return { root, target: join(root, `v${kubernetesVersion}-standalone-strict`) }
}

/** Fetches the wheel and converts its one version's folder of schemas (pip's output into `logFile`). */
export async function fetchKubernetesSchemas(logFile: string): Promise<string> {
  const { version, sha256 } = kubernetesValidateWheel
  const home = deployHome()
  const { root, target } = kubernetesSchemasDir()
  if (existsSync(target)) return root
  const work = join(home, `kubernetes-validate-${version}.${process.pid}.partial`)
  rmSync(work, { recursive: true, force: true })
  mkdirSync(work, { recursive: true })
  // a virtual environment of our own, so that pip is there whatever the system Python has
  const venv = join(home, 'python')
  if (!existsSync(join(venv, 'bin', 'pip'))) await runLogged('python3', ['-m', 'venv', venv], { logFile })
  const requirements = join(work, 'requirements.txt')
  writeFileSync(requirements, `kubernetes-validate==${version} --hash=sha256:${sha256}\n`)
  await runLogged(
    join(venv, 'bin', 'pip'),
    [
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
    ],
    { logFile },
  )
  const wheel = join(work, `kubernetes_validate-${version}-py3-none-any.whl`)
  const folder = `kubernetes_validate/kubernetes-json-schema/v${kubernetesVersion}-local-strict/`
  // only the one version's folder of the wheel's 26
  await runLogged(
    'python3',
    [
      '-c',
      'import sys, zipfile\nz = zipfile.ZipFile(sys.argv[1])\nfor n in z.namelist():\n  if n.startswith(sys.argv[3]): z.extract(n, sys.argv[2])',
      wheel,
      join(work, 'wheel'),
      folder,
    ],
    { logFile },
  )
  const converted = join(work, 'out')
  const written = convertSchemaFolder(join(work, 'wheel', folder), converted)
  if (written < 50) throw new Error(`kubernetes schemas: only ${written} kinds found in ${wheel}`)
  mkdirSync(root, { recursive: true })
  renameSync(converted, target)
  rmSync(work, { recursive: true, force: true })
  return root
}

/** helm, kubeconform, promtool and the schemas, from the cache; MissingPrerequisite before ./scripts/prepare. */
export function deployTools(): DeployTools {
  const [helm, kubeconform, promtool] = goTools.map((tool) => builtGoBinary(goToolBuild(tool)))
  const { root, target } = kubernetesSchemasDir()
  if (!existsSync(target))
    throw new MissingPrerequisite(
      `Kubernetes ${kubernetesVersion}'s schemas`,
      `fetches them once from the PyPI wheel kubernetes-validate ${kubernetesValidateWheel.version}`,
    )
  return {
    helm: helm!,
    kubeconform: kubeconform!,
    promtool: promtool!,
    schemaLocation: `${root}/{{ .NormalizedKubernetesVersion }}-standalone{{ .StrictSuffix }}/{{ .ResourceKind }}{{ .KindSuffix }}.json`,
    kubernetesVersion,
  }
}
