import { expandTopics, loadTopicDeclaration } from '@meridian/infra'
import { beforeAll, describe, expect, it } from 'vitest'
import {
  type DeployTools,
  deployTools,
  type KubeObject,
  parseManifest,
  podTemplateOf,
  policyFindings,
  renderChart,
  strimziTopics,
} from '../src/index.ts'
import { valueSets } from './render.ts'

let tools: DeployTools
let defaults: KubeObject[]
beforeAll(async () => {
  tools = deployTools()
  defaults = parseManifest(await renderChart(tools))
})

/** A deep copy of the default rendering with one Deployment changed, to show the policy sees the change. */
function withOrderDeployment(change: (deployment: KubeObject) => void): KubeObject[] {
  const objects = structuredClone(defaults)
  const order = objects.find((o) => o.kind === 'Deployment' && o.metadata.name === 'meridian-order')
  if (!order) throw new Error('no order Deployment rendered')
  change(order)
  return objects
}

const orderContainer = (deployment: KubeObject) => {
  const container = podTemplateOf(deployment).spec.containers[0]
  if (!container) throw new Error('no container')
  return container
}

describe('policy: every Deployment and migration Job', () => {
  it.each(valueSets)(
    'when the chart renders with $name, then no Deployment or Job breaks the policy',
    async ({ valuesFiles }) => {
      const objects = parseManifest(await renderChart(tools, { valuesFiles }))
      expect(objects.filter((o) => o.kind === 'Deployment')).toHaveLength(9)
      expect(policyFindings(objects)).toEqual([])
    },
  )

  it('when a Deployment has no readiness probe, then the policy names it', () => {
    const objects = withOrderDeployment((deployment) => {
      delete orderContainer(deployment).readinessProbe
    })
    expect(policyFindings(objects)).toEqual([
      'Deployment meridian-order, container order: the readiness probe is not an HTTP GET of /health/ready',
    ])
  })

  it('when the liveness probe reads /health/ready, then the policy names it (a failing database would restart every pod)', () => {
    const objects = withOrderDeployment((deployment) => {
      orderContainer(deployment).livenessProbe = { httpGet: { path: '/health/ready', port: 'http' } }
    })
    expect(policyFindings(objects)).toEqual([
      'Deployment meridian-order, container order: the liveness probe is not an HTTP GET of /health/live',
    ])
  })

  it('when a container may escalate, writes its root filesystem, keeps its capabilities and has no limits, then the policy names each', () => {
    const objects = withOrderDeployment((deployment) => {
      const container = orderContainer(deployment)
      container.securityContext = { runAsNonRoot: true, runAsUser: 10001 }
      delete container.resources?.limits
    })
    expect(policyFindings(objects)).toEqual([
      'Deployment meridian-order, container order: the root filesystem is writable',
      'Deployment meridian-order, container order: privilege escalation is allowed',
      'Deployment meridian-order, container order: does not drop ALL capabilities',
      'Deployment meridian-order, container order: no cpu and memory limits',
    ])
  })

  it('when a pod runs as root, then the policy names it', () => {
    const objects = withOrderDeployment((deployment) => {
      const pod = podTemplateOf(deployment).spec
      pod.securityContext = { seccompProfile: { type: 'RuntimeDefault' } }
      orderContainer(deployment).securityContext = {
        ...orderContainer(deployment).securityContext,
        runAsNonRoot: false,
        runAsUser: 0,
      }
    })
    expect(policyFindings(objects)).toEqual([
      'Deployment meridian-order, container order: runAsNonRoot is not set',
      "Deployment meridian-order, container order: does not run as uid 10001, the images' user",
    ])
  })

  it('when the grace period is shorter than preStop and the drain, or there is no preStop, then the policy names it', () => {
    const shortGrace = withOrderDeployment((deployment) => {
      podTemplateOf(deployment).spec.terminationGracePeriodSeconds = 30
    })
    expect(policyFindings(shortGrace)).toEqual([
      "Deployment meridian-order, container order: terminationGracePeriodSeconds 30 is shorter than preStop's 5 s and the 30 s drain",
    ])
    const noPreStop = withOrderDeployment((deployment) => {
      delete orderContainer(deployment).lifecycle
    })
    expect(policyFindings(noPreStop)).toEqual([
      'Deployment meridian-order, container order: no preStop, so SIGTERM may come before the endpoints are removed',
    ])
  })

  it('when a Deployment may roll with an instance unavailable, or recreates its pods, then the policy names it', () => {
    const finding =
      'Deployment meridian-order: its update is not a RollingUpdate with maxUnavailable 0, so a roll may remove capacity'
    const surge = withOrderDeployment((deployment) => {
      ;(deployment.spec as { strategy: unknown }).strategy = {
        type: 'RollingUpdate',
        rollingUpdate: { maxSurge: 1, maxUnavailable: 1 },
      }
    })
    expect(policyFindings(surge)).toEqual([finding])
    const recreate = withOrderDeployment((deployment) => {
      ;(deployment.spec as { strategy: unknown }).strategy = { type: 'Recreate' }
    })
    expect(policyFindings(recreate)).toEqual([finding])
  })

  it('when a Deployment has no PodDisruptionBudget selecting it, then the policy names it', () => {
    const objects = defaults.filter(
      (o) => !(o.kind === 'PodDisruptionBudget' && o.metadata.name === 'meridian-payment'),
    )
    expect(policyFindings(objects)).toEqual([
      'Deployment meridian-payment: 0 PodDisruptionBudgets select it, not one',
    ])
  })

  it('when a PodDisruptionBudget keeps every instance, then the policy names it (a node drain would never end)', async () => {
    const objects = parseManifest(await renderChart(tools, { set: ['services.order.pdb.minAvailable=1'] }))
    expect(policyFindings(objects)).toEqual([
      'Deployment meridian-order: its PodDisruptionBudget lets no pod of 1 be evicted, so a node drain never ends',
    ])
  })

  it('when examples/scaled-out.yaml renders, then the autoscaled services leave replicas to their autoscaler, whose target exists, and every ServiceMonitor scrapes a Service', async () => {
    const objects = parseManifest(await renderChart(tools, { valuesFiles: ['examples/scaled-out.yaml'] }))
    const deployments = new Map(
      objects.filter((o) => o.kind === 'Deployment').map((o) => [o.metadata.name, o]),
    )
    const replicasOf = (name: string) => {
      const deployment = deployments.get(name)
      if (!deployment) throw new Error(`no Deployment ${name}`)
      return (deployment.spec as { replicas?: number }).replicas
    }
    const autoscalers = objects.filter((o) => o.kind === 'HorizontalPodAutoscaler')
    expect(autoscalers.map((o) => o.metadata.name).sort()).toEqual(
      ['auth', 'content', 'gateway', 'inventory', 'realtime-gateway'].map((service) => `meridian-${service}`),
    )
    for (const autoscaler of autoscalers) {
      const target = (autoscaler.spec as { scaleTargetRef: { name: string } }).scaleTargetRef.name
      expect(replicasOf(target), target).toBeUndefined()
    }
    // the consumers stay at the partition count
    expect(replicasOf('meridian-order')).toBe(3)
    const services = objects.filter((o) => o.kind === 'Service')
    const monitors = objects.filter((o) => o.kind === 'ServiceMonitor')
    expect(monitors).toHaveLength(9)
    for (const monitor of monitors) {
      const spec = monitor.spec as {
        selector: { matchLabels: Record<string, string> }
        endpoints: { port: string; path: string }[]
      }
      const selected = services.filter((service) =>
        Object.entries(spec.selector.matchLabels).every(
          ([key, value]) => service.metadata.labels?.[key] === value,
        ),
      )
      expect(selected.map((service) => service.metadata.name)).toEqual([monitor.metadata.name])
      expect(spec.endpoints).toEqual([expect.objectContaining({ port: 'http', path: '/metrics' })])
    }
  })

  it('when the defaults render, then every migration Job is a pre-install and pre-upgrade hook running the migrate command, and no Service selects its pod', () => {
    const jobs = defaults.filter((o) => o.kind === 'Job')
    expect(jobs).toHaveLength(8)
    for (const job of jobs) {
      expect(job.metadata.annotations?.['helm.sh/hook']).toBe('pre-install,pre-upgrade')
      expect(job.metadata.annotations?.['helm.sh/hook-delete-policy']).toBe(
        'before-hook-creation,hook-succeeded',
      )
      expect(podTemplateOf(job).spec.containers[0]?.args).toEqual(['node', 'dist/migrate.js'])
    }
    const broken = structuredClone(defaults)
    const orderJob = broken.find((o) => o.metadata.name === 'meridian-order-migrate')!
    delete orderJob.metadata.annotations?.['helm.sh/hook']
    const labels = podTemplateOf(orderJob).metadata?.labels
    if (labels) labels['app.kubernetes.io/component'] = 'order'
    expect(policyFindings(broken)).toEqual([
      'Job meridian-order-migrate: not a pre-install and pre-upgrade hook',
      'Job meridian-order-migrate: its pod is selected by PodDisruptionBudget meridian-order',
      'Job meridian-order-migrate: its pod is selected by Service meridian-order',
    ])
  })
})

describe('policy: secrets', () => {
  it.each(valueSets)(
    'when the chart renders with $name, then no Secret is rendered: every secret is a reference',
    async ({ valuesFiles }) => {
      const objects = parseManifest(await renderChart(tools, { valuesFiles }))
      expect(objects.filter((o) => o.kind === 'Secret')).toEqual([])
      // every secret variable points at a Secret by name and key (a page's address is none: PASSWORD_RESET_URL)
      const inline = objects
        .filter((o) => o.kind === 'Deployment' || o.kind === 'Job')
        .flatMap((o) => podTemplateOf(o).spec.containers.flatMap((c) => c.env ?? []))
        .filter(
          (variable) =>
            /SECRET|CREDENTIAL|PASSWORD|TOKEN|KEYS/.test(variable.name) &&
            !variable.name.endsWith('_URL') &&
            variable.value !== undefined,
        )
      expect(inline).toEqual([])
    },
  )

  it('when secrets.create is set for trying the chart out, then the one Secret holds the given values and is a hook that exists before the migrations', async () => {
    const objects = parseManifest(
      await renderChart(tools, {
        set: ['secrets.create=true', 'secrets.values.service-credential=try-out-credential-0123456789abcdef'],
      }),
    )
    const secrets = objects.filter((o) => o.kind === 'Secret')
    expect(secrets).toHaveLength(1)
    expect((secrets[0] as { stringData?: object }).stringData).toEqual({
      'service-credential': 'try-out-credential-0123456789abcdef',
    })
    expect(secrets[0]?.metadata.annotations?.['helm.sh/hook']).toBe('pre-install,pre-upgrade')
    expect(Number(secrets[0]?.metadata.annotations?.['helm.sh/hook-weight'])).toBeLessThan(0)
    expect(policyFindings(objects)).toEqual([])
  })

  it('when a Secret with values is rendered outside the secrets.create hook, then the policy names it', () => {
    const secret: KubeObject = {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'leaked' },
      stringData: { password: 'x' },
    }
    expect(policyFindings([...defaults, secret])).toEqual([
      'Secret leaked: holds values but is not the secrets.create hook',
    ])
  })
})

describe('policy: Strimzi topics', () => {
  it('when examples/strimzi.yaml renders, then its KafkaTopics are exactly infra/topics.json expanded, 3 replicas and min.insync.replicas "2" each', async () => {
    const objects = parseManifest(await renderChart(tools, { valuesFiles: ['examples/strimzi.yaml'] }))
    const declared = expandTopics(loadTopicDeclaration())
    const topics = strimziTopics(objects)
    expect(topics.map((t) => t.name).sort()).toEqual(declared.map((t) => t.name).sort())
    for (const topic of topics) {
      const expected = declared.find((t) => t.name === topic.name)
      expect(topic).toEqual({
        name: topic.name,
        partitions: expected?.partitions,
        replicas: 3,
        minInsyncReplicas: '2',
      })
    }
    // each points at the Kafka cluster, and has a Kubernetes name (no underscore)
    for (const object of objects.filter((o) => o.kind === 'KafkaTopic')) {
      expect(object.metadata.labels?.['strimzi.io/cluster']).toBe('meridian')
      expect(object.metadata.name).toMatch(/^[a-z0-9]([a-z0-9.-]*[a-z0-9])?$/)
    }
  })

  it('when a Kafka namespace is set, then every topic carries its prefix, as the services name them', async () => {
    const objects = parseManifest(
      await renderChart(tools, {
        valuesFiles: ['examples/strimzi.yaml'],
        set: ['config.kafkaNamespace=staging.'],
      }),
    )
    const names = strimziTopics(objects).map((t) => t.name)
    expect(names).toContain('staging.order.placed')
    expect(names.every((name) => name.startsWith('staging.'))).toBe(true)
  })

  it('when examples/strimzi.yaml creates the cluster, then it is a KRaft Kafka with node pools that creates no topic on its own', async () => {
    const objects = parseManifest(await renderChart(tools, { valuesFiles: ['examples/strimzi.yaml'] }))
    const kafka = objects.find((o) => o.kind === 'Kafka')
    if (!kafka) throw new Error('no Kafka rendered')
    expect(kafka.metadata.annotations).toMatchObject({
      'strimzi.io/kraft': 'enabled',
      'strimzi.io/node-pools': 'enabled',
    })
    const config = (kafka.spec as { kafka: { config: Record<string, unknown> } }).kafka.config
    expect(config).toMatchObject({ 'auto.create.topics.enable': false, 'min.insync.replicas': 2 })
    const pool = objects.find((o) => o.kind === 'KafkaNodePool')
    expect(pool?.spec).toMatchObject({ replicas: 3, roles: ['controller', 'broker'] })
    // the services reach it through its bootstrap service
    const order = objects.find((o) => o.kind === 'ConfigMap' && o.metadata.name === 'meridian-order')
    expect((order as { data?: Record<string, string> }).data?.KAFKA_BROKERS).toBe(
      'meridian-kafka-bootstrap:9092',
    )
  })
})
