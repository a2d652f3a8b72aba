import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { repoRoot } from '@meridian/infra'
import { beforeAll, describe, expect, it } from 'vitest'
import { parse } from 'yaml'
import {
  chartDir,
  checkSchemas,
  customResourceKinds,
  type DeployTools,
  deployTools,
  lintChart,
  parseManifest,
  renderChart,
} from '../src/index.ts'
import { exampleFiles, valueSets } from './render.ts'

const services = [
  'gateway',
  'auth',
  'order',
  'payment',
  'inventory',
  'shipping',
  'notification',
  'realtime-gateway',
  'content',
]

let tools: DeployTools
beforeAll(async () => {
  tools = deployTools()
})

describe('the chart renders and lints', () => {
  it('when every file of examples/ is listed, then each is rendered and checked by these tests', () => {
    const files = readdirSync(join(chartDir, 'examples')).map((file) => `examples/${file}`)
    expect(files.sort()).toEqual([...exampleFiles].sort())
  })

  it.each(valueSets)(
    'when helm lint --strict runs with $name, then it finds no error and no warning',
    async ({ valuesFiles }) => {
      const output = await lintChart(tools, { valuesFiles })
      expect(output).toMatch(/1 chart\(s\) linted, 0 chart\(s\) failed/)
      expect(output).not.toMatch(/\[(WARNING|ERROR)\]/)
    },
  )

  it('when the default values render, then each of the nine services has a Deployment, a Service, a ConfigMap and a PodDisruptionBudget, and each of the eight with a database a migration Job', async () => {
    const objects = parseManifest(await renderChart(tools))
    const names = (kind: string) =>
      objects
        .filter((o) => o.kind === kind)
        .map((o) => o.metadata.name)
        .sort()
    const each = services.map((service) => `meridian-${service}`).sort()
    expect(names('Deployment')).toEqual(each)
    expect(names('Service')).toEqual(each)
    expect(names('ConfigMap')).toEqual(each)
    expect(names('PodDisruptionBudget')).toEqual(each)
    expect(names('Job')).toEqual(
      each.filter((name) => name !== 'meridian-gateway').map((name) => `${name}-migrate`),
    )
    // optional parts stay off by default
    for (const kind of ['HorizontalPodAutoscaler', 'Ingress', 'Secret', ...customResourceKinds])
      expect(names(kind), kind).toEqual([])
  })

  it('when a service is disabled, then none of its objects is rendered and the others are', async () => {
    const objects = parseManifest(await renderChart(tools, { set: ['services.shipping.enabled=false'] }))
    expect(objects.filter((o) => o.metadata.name.startsWith('meridian-shipping'))).toEqual([])
    expect(objects.filter((o) => o.kind === 'Deployment')).toHaveLength(8)
  })

  it('when the images are named, then each is <registry>/meridian/<service>:<tag>, the tag the chart appVersion unless image.tag is set', async () => {
    const images = async (set: string[]) =>
      parseManifest(await renderChart(tools, { set }))
        .filter((o) => o.kind === 'Deployment')
        .map(
          (o) =>
            (o.spec as { template: { spec: { containers: { image: string }[] } } }).template.spec
              .containers[0]?.image,
        )
    const appVersion = (parse(readFileSync(join(chartDir, 'Chart.yaml'), 'utf8')) as { appVersion: string })
      .appVersion
    expect(await images([])).toContain(`meridian/order:${appVersion}`)
    expect(await images(['image.registry=registry.example.com:5000/team', 'image.tag=1.2.3'])).toContain(
      'registry.example.com:5000/team/meridian/order:1.2.3',
    )
  })

  it("when one service's imageTag is set, then its Deployment and its migration Job run that tag and every other service keeps the release's", async () => {
    const objects = parseManifest(
      await renderChart(tools, { set: ['image.tag=0.1.0', 'services.order.imageTag=0.2.0'] }),
    )
    const imagesOf = (kind: string) =>
      objects
        .filter((o) => o.kind === kind)
        .map(
          (o) =>
            (o.spec as { template: { spec: { containers: { image: string }[] } } }).template.spec
              .containers[0]?.image ?? '',
        )
    const deployments = imagesOf('Deployment')
    expect(deployments).toHaveLength(services.length)
    expect(deployments.filter((image) => !image.endsWith(':0.1.0'))).toEqual(['meridian/order:0.2.0'])
    const jobs = imagesOf('Job')
    expect(jobs.length).toBeGreaterThan(1)
    expect(jobs.filter((image) => !image.endsWith(':0.1.0'))).toEqual(['meridian/order:0.2.0'])
  })

  it('when an imageTag is no OCI tag, then helm refuses to render and names the value', async () => {
    const message = await renderChart(tools, { set: ['services.order.imageTag=not a tag!'] }).then(
      () => '',
      (failure: Error) => failure.message,
    )
    expect(message).toMatch(/imageTag/)
  })

  it("when the chart's appVersion is compared with the services' version, then they are the same (the images' default tag)", () => {
    const chart = parse(readFileSync(join(chartDir, 'Chart.yaml'), 'utf8')) as { appVersion: string }
    const versionOf = (file: string) =>
      (JSON.parse(readFileSync(join(repoRoot, file), 'utf8')) as { version?: string }).version
    expect(versionOf('package.json')).toBe(chart.appVersion)
    for (const service of services)
      expect(versionOf(`services/${service}/package.json`), service).toBe(chart.appVersion)
  })

  it("when the chart's topic list is compared with infra/topics.json, then it is the same file byte for byte", () => {
    expect(readFileSync(join(chartDir, 'files', 'topics.json'))).toEqual(
      readFileSync(join(repoRoot, 'infra', 'topics.json')),
    )
  })
})

describe("every rendered object passes Kubernetes' schemas (kubeconform -strict, offline)", () => {
  it.each(valueSets)(
    'when the chart renders with $name, then every object is valid for Kubernetes 1.31',
    async ({ valuesFiles }) => {
      const manifest = await renderChart(tools, { valuesFiles })
      const check = await checkSchemas(tools, manifest)
      expect(check.output).toMatch(/Invalid: 0, Errors: 0/)
      expect(check.valid).toBe(true)
      // every object that is not a custom resource was checked, none skipped for want of a schema
      const builtIn = parseManifest(manifest).filter((o) => !customResourceKinds.includes(o.kind)).length
      expect(check.output).toContain(`Valid: ${builtIn},`)
    },
  )

  it('when an SMTP server and its credentials Secret are configured, then every object is still valid and lints', async () => {
    const set = ['smtp.url=smtp://smtp.example.com:587', 'smtp.credentialsSecret=meridian-smtp']
    const check = await checkSchemas(tools, await renderChart(tools, { set }))
    expect(check.output).toMatch(/Invalid: 0, Errors: 0/)
    expect(check.valid).toBe(true)
    await lintChart(tools, { set })
  })

  it('when an object has a field Kubernetes does not know, then kubeconform rejects it and names the field', async () => {
    const manifest = (await renderChart(tools)).replace(
      'revisionHistoryLimit: 5',
      'revisionHistoryLimit: 5\n  surgeLimit: 2',
    )
    const check = await checkSchemas(tools, manifest)
    expect(check.valid).toBe(false)
    expect(check.output).toMatch(/additional properties 'surgeLimit' not allowed/)
  })

  it('when a field has the wrong type, then kubeconform rejects it', async () => {
    const manifest = (await renderChart(tools)).replace('failureThreshold: 30', 'failureThreshold: "thirty"')
    const check = await checkSchemas(tools, manifest)
    expect(check.valid).toBe(false)
    expect(check.output).toMatch(/failureThreshold.*got string/)
  })

  it('when a kind has no schema and is not a known custom resource, then kubeconform fails rather than let it through', async () => {
    const manifest = 'apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: w\n'
    const check = await checkSchemas(tools, manifest)
    expect(check.valid).toBe(false)
    expect(check.output).toMatch(/could not find schema for Widget/)
  })
})

describe('values.schema.json refuses wrong values at render', () => {
  const refused = async (set: string[]) => {
    const error = await renderChart(tools, { set }).then(
      () => undefined,
      (failure: Error) => failure,
    )
    expect(error, `helm template accepted ${set.join(' ')}`).toBeInstanceOf(Error)
    return error?.message ?? ''
  }

  it('when a replica count is negative, then helm refuses to render and names the value', async () => {
    const message = await refused(['services.order.replicas=-1'])
    expect(message).toMatch(/values don't meet the specifications of the schema/)
    expect(message).toMatch(/services\.order\.replicas|\/services\/order\/replicas/)
  })

  it('when an unknown service is configured, then helm refuses to render and names it', async () => {
    const message = await refused(['services.billing.replicas=2'])
    expect(message).toMatch(/billing/)
  })

  it("when the public origin has a path, or the drain is shorter than the services' 30 s, then helm refuses to render", async () => {
    expect(await refused(['publicOrigin=https://shop.example.com/app'])).toMatch(/publicOrigin/)
    expect(await refused(['defaults.drainSeconds=10'])).toMatch(/drainSeconds/)
  })

  it('when smtp.url is not an smtp:// or smtps:// address of a host and port, or smtp.scheme is neither, then helm refuses and names the value', async () => {
    expect(await refused(['smtp.url=http://smtp.example.com:587'])).toMatch(/smtp/)
    // credentials belong in the Secret, never in the URL the ConfigMap holds
    expect(await refused(['smtp.url=smtp://user:password@smtp.example.com:587'])).toMatch(/smtp/)
    expect(await refused(['smtp.scheme=starttls', 'smtp.host=smtp.example.com'])).toMatch(/smtp/)
  })

  it('when order.unverifiedCustomerOrderLimit is negative or no amount, then helm refuses and names the value', async () => {
    expect(await refused(['order.unverifiedCustomerOrderLimit=-1'])).toMatch(/unverifiedCustomerOrderLimit/)
    expect(await refused(['order.unverifiedCustomerOrderLimit=ten dollars'])).toMatch(
      /unverifiedCustomerOrderLimit/,
    )
  })

  it('when engines.postgres.mode is credentials without a host, then helm refuses and says which value to set', async () => {
    expect(await refused(['engines.postgres.mode=credentials'])).toMatch(/engines\.postgres\.host/)
  })
})
