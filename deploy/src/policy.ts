// What every rendered Deployment and migration Job must be, whatever the values: probes on the chassis' health paths,
// resources, non-root and read-only, a drain that fits the grace period, a PodDisruptionBudget; each finding is one
// sentence naming the object, so a failing test says what to fix.
import type { KubeObject } from './chart.ts'

interface HttpProbe {
  httpGet?: { path?: string; port?: string | number }
}

interface Container {
  name: string
  image?: string
  args?: string[]
  readinessProbe?: HttpProbe
  livenessProbe?: HttpProbe
  startupProbe?: HttpProbe
  lifecycle?: { preStop?: { sleep?: { seconds?: number }; exec?: { command?: string[] } } }
  resources?: {
    requests?: { cpu?: string | number; memory?: string | number }
    limits?: { cpu?: string | number; memory?: string | number }
  }
  securityContext?: {
    runAsNonRoot?: boolean
    runAsUser?: number
    readOnlyRootFilesystem?: boolean
    allowPrivilegeEscalation?: boolean
    privileged?: boolean
    capabilities?: { drop?: string[]; add?: string[] }
    seccompProfile?: { type?: string }
  }
  volumeMounts?: { name: string; mountPath: string }[]
  env?: { name: string; value?: string; valueFrom?: unknown }[]
}

interface PodSpec {
  securityContext?: { runAsNonRoot?: boolean; runAsUser?: number; seccompProfile?: { type?: string } }
  terminationGracePeriodSeconds?: number
  automountServiceAccountToken?: boolean
  containers: Container[]
  volumes?: { name: string; emptyDir?: unknown }[]
}

interface PodTemplate {
  metadata?: { labels?: Record<string, string> }
  spec: PodSpec
}

/** The uid the images run as (docs/how-to/deploying.md). */
export const imageUid = 10001
/** The services' own drain on SIGTERM, in seconds. */
export const drainSeconds = 30

export const podTemplateOf = (object: KubeObject): PodTemplate =>
  (object.spec as { template: PodTemplate }).template

const hasQuantity = (value: string | number | undefined): boolean => value !== undefined && `${value}` !== ''

/** What a pod (a service's or a migration's) breaks of the security rules. */
function securityFindings(where: string, template: PodTemplate): string[] {
  const pod = template.spec
  const findings: string[] = []
  if (pod.securityContext?.seccompProfile?.type !== 'RuntimeDefault')
    findings.push(`${where}: the pod's seccomp profile is not RuntimeDefault`)
  if (pod.automountServiceAccountToken !== false)
    findings.push(`${where}: a service-account token is mounted though no service calls the Kubernetes API`)
  const emptyDirs = new Set((pod.volumes ?? []).filter((v) => v.emptyDir !== undefined).map((v) => v.name))
  for (const container of pod.containers) {
    const at = `${where}, container ${container.name}`
    const context = container.securityContext ?? {}
    if ((context.runAsNonRoot ?? pod.securityContext?.runAsNonRoot) !== true)
      findings.push(`${at}: runAsNonRoot is not set`)
    if ((context.runAsUser ?? pod.securityContext?.runAsUser) !== imageUid)
      findings.push(`${at}: does not run as uid ${imageUid}, the images' user`)
    if (context.readOnlyRootFilesystem !== true) findings.push(`${at}: the root filesystem is writable`)
    if (context.allowPrivilegeEscalation !== false) findings.push(`${at}: privilege escalation is allowed`)
    if (context.privileged === true) findings.push(`${at}: runs privileged`)
    if (!context.capabilities?.drop?.includes('ALL')) findings.push(`${at}: does not drop ALL capabilities`)
    if (context.capabilities?.add?.length) findings.push(`${at}: adds capabilities`)
    const tmp = container.volumeMounts?.find((mount) => mount.mountPath === '/tmp')
    if (!tmp || !emptyDirs.has(tmp.name))
      findings.push(`${at}: /tmp is not an emptyDir (the root is read-only)`)
    const { requests, limits } = container.resources ?? {}
    if (!hasQuantity(requests?.cpu) || !hasQuantity(requests?.memory))
      findings.push(`${at}: no cpu and memory requests`)
    if (!hasQuantity(limits?.cpu) || !hasQuantity(limits?.memory))
      findings.push(`${at}: no cpu and memory limits`)
  }
  return findings
}

const selects = (selector: Record<string, string> | undefined, labels: Record<string, string> | undefined) =>
  selector !== undefined &&
  Object.keys(selector).length > 0 &&
  Object.entries(selector).every(([key, value]) => labels?.[key] === value)

/** What a service's Deployment breaks: probes, drain, security, resources, its PodDisruptionBudget. */
function deploymentFindings(deployment: KubeObject, objects: KubeObject[]): string[] {
  const where = `Deployment ${deployment.metadata.name}`
  const template = podTemplateOf(deployment)
  const findings = securityFindings(where, template)
  const grace = template.spec.terminationGracePeriodSeconds ?? 30
  for (const container of template.spec.containers) {
    const at = `${where}, container ${container.name}`
    if (container.readinessProbe?.httpGet?.path !== '/health/ready')
      findings.push(`${at}: the readiness probe is not an HTTP GET of /health/ready`)
    if (container.livenessProbe?.httpGet?.path !== '/health/live')
      findings.push(`${at}: the liveness probe is not an HTTP GET of /health/live`)
    if (!container.startupProbe?.httpGet?.path) findings.push(`${at}: no HTTP startup probe`)
    const preStop = container.lifecycle?.preStop
    if (!preStop) findings.push(`${at}: no preStop, so SIGTERM may come before the endpoints are removed`)
    const pause = preStop?.sleep?.seconds ?? 0
    if (grace < pause + drainSeconds)
      findings.push(
        `${at}: terminationGracePeriodSeconds ${grace} is shorter than preStop's ${pause} s and the ${drainSeconds} s drain`,
      )
  }
  // a roll adds a new pod before it takes an old one away: during an upgrade the service never runs below its replicas
  const strategy = (
    deployment.spec as { strategy?: { type?: string; rollingUpdate?: { maxUnavailable?: unknown } } }
  ).strategy
  if (strategy?.type !== 'RollingUpdate' || strategy.rollingUpdate?.maxUnavailable !== 0)
    findings.push(
      `${where}: its update is not a RollingUpdate with maxUnavailable 0, so a roll may remove capacity`,
    )
  const labels = template.metadata?.labels
  const budgets = objects.filter(
    (o) =>
      o.kind === 'PodDisruptionBudget' &&
      selects(
        (o.spec as { selector?: { matchLabels?: Record<string, string> } }).selector?.matchLabels,
        labels,
      ),
  )
  if (budgets.length !== 1)
    findings.push(`${where}: ${budgets.length} PodDisruptionBudgets select it, not one`)
  for (const budget of budgets) {
    const { minAvailable, maxUnavailable } = budget.spec as {
      minAvailable?: unknown
      maxUnavailable?: unknown
    }
    const floor = fewestReplicas(deployment, objects)
    if (maxUnavailable === 0 || (typeof minAvailable === 'number' && minAvailable >= floor))
      findings.push(
        `${where}: its PodDisruptionBudget lets no pod of ${floor} be evicted, so a node drain never ends`,
      )
  }
  return findings
}

/** The fewest instances a Deployment runs: its replicas, or its autoscaler's minReplicas. */
function fewestReplicas(deployment: KubeObject, objects: KubeObject[]): number {
  const autoscaler = objects.find(
    (o) =>
      o.kind === 'HorizontalPodAutoscaler' &&
      (o.spec as { scaleTargetRef?: { kind?: string; name?: string } }).scaleTargetRef?.name ===
        deployment.metadata.name,
  )
  if (autoscaler) return (autoscaler.spec as { minReplicas?: number }).minReplicas ?? 1
  return (deployment.spec as { replicas?: number }).replicas ?? 1
}

const hookPhases = (object: KubeObject): string[] =>
  (object.metadata.annotations?.['helm.sh/hook'] ?? '').split(',').map((phase) => phase.trim())

/** What a migration Job breaks: it must be a hook before install and upgrade, bounded, and as locked down. */
function migrationFindings(job: KubeObject, objects: KubeObject[]): string[] {
  const where = `Job ${job.metadata.name}`
  const template = podTemplateOf(job)
  const findings = securityFindings(where, template)
  const phases = hookPhases(job)
  if (!phases.includes('pre-install') || !phases.includes('pre-upgrade'))
    findings.push(`${where}: not a pre-install and pre-upgrade hook`)
  if (!job.metadata.annotations?.['helm.sh/hook-delete-policy'])
    findings.push(`${where}: no hook-delete-policy`)
  if (typeof (job.spec as { backoffLimit?: number }).backoffLimit !== 'number')
    findings.push(`${where}: no backoffLimit`)
  const labels = template.metadata?.labels
  for (const service of objects.filter((o) => o.kind === 'Service' || o.kind === 'PodDisruptionBudget')) {
    const spec = service.spec as {
      selector?: Record<string, string> & { matchLabels?: Record<string, string> }
    }
    const selector = service.kind === 'Service' ? spec.selector : spec.selector?.matchLabels
    if (selects(selector, labels))
      findings.push(`${where}: its pod is selected by ${service.kind} ${service.metadata.name}`)
  }
  return findings
}

/** Every finding of the policy over one rendering of the chart; empty when it holds. */
export function policyFindings(objects: KubeObject[]): string[] {
  const findings: string[] = []
  for (const object of objects) {
    if (object.kind === 'Deployment') findings.push(...deploymentFindings(object, objects))
    if (object.kind === 'Job') findings.push(...migrationFindings(object, objects))
    if (object.kind === 'Secret') {
      const { data, stringData } = object as { data?: object; stringData?: object }
      if (!hookPhases(object).includes('pre-install') && (data || stringData))
        findings.push(`Secret ${object.metadata.name}: holds values but is not the secrets.create hook`)
    }
  }
  return findings
}

/** The topics the KafkaTopic resources declare, by Kafka name, as the policy compares them with infra/topics.json. */
export interface DeclaredTopic {
  name: string
  partitions: number
  replicas: number
  minInsyncReplicas: string
}

export function strimziTopics(objects: KubeObject[]): DeclaredTopic[] {
  return objects
    .filter((object) => object.kind === 'KafkaTopic')
    .map((object) => {
      const spec = object.spec as {
        topicName: string
        partitions: number
        replicas: number
        config?: Record<string, unknown>
      }
      return {
        name: spec.topicName,
        partitions: spec.partitions,
        replicas: spec.replicas,
        minInsyncReplicas: spec.config?.['min.insync.replicas'] as string,
      }
    })
}
