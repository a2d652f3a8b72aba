// The chart's environment for each service, as Kubernetes would assemble it (the ConfigMap, then the env list with
// its $(VAR) references and the Secret keys), read by the service's own configuration loader in production: the
// chart sets every variable production insists on, and names none the service does not read; production refuses its
// engines reached in plaintext unless engines.plaintextAllowed allows them.
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { beforeAll, describe, expect, it } from 'vitest'
import {
  type DeployTools,
  deployTools,
  type KubeObject,
  parseManifest,
  podTemplateOf,
  renderChart,
} from '../src/index.ts'
import { valueSets } from './render.ts'

interface EnvVar {
  name: string
  value?: string
  valueFrom?: {
    fieldRef?: { fieldPath: string }
    secretKeyRef?: { name: string; key: string; optional?: boolean }
  }
}

interface ServiceConfigModule {
  load: (env: NodeJS.ProcessEnv) => unknown
  variables: string[]
}

// the services' own loaders and schemas (a service's package exports its app only, so its config is read by path)
const configModules: Record<string, () => Promise<Record<string, unknown>>> = {
  gateway: () => import('../../services/gateway/src/config.ts'),
  auth: () => import('../../services/auth/src/config.ts'),
  order: () => import('../../services/order/src/config.ts'),
  payment: () => import('../../services/payment/src/config.ts'),
  inventory: () => import('../../services/inventory/src/config.ts'),
  shipping: () => import('../../services/shipping/src/config.ts'),
  notification: () => import('../../services/notification/src/config.ts'),
  'realtime-gateway': () => import('../../services/realtime-gateway/src/config.ts'),
  content: () => import('../../services/content/src/config.ts'),
}

async function serviceConfig(service: string): Promise<ServiceConfigModule> {
  const module = await configModules[service]!()
  const entries = Object.entries(module)
  const load = entries.find(([name]) => /^load\w+Config$/.test(name))?.[1] as ServiceConfigModule['load']
  const schema = entries.find(([name]) => name.endsWith('Env'))?.[1] as {
    properties: Record<string, unknown>
  }
  return { load, variables: Object.keys(schema.properties) }
}

/** What a Secret key would hold in production: a value of the shape its variable expects, never a real secret. */
function secretStandIn(key: string): string {
  if (key.endsWith('database-url'))
    return `postgres://svc:stand-in@db.example.com:5432/${key.replace('-database-url', '')}`
  if (key === 'stripe-secret-key') return `sk_live_${'standin'.padEnd(40, 'x')}`
  if (key === 'stripe-webhook-secret') return `whsec_${'standin'.padEnd(40, 'x')}`
  if (key === 'redis-url') return 'rediss://:stand-in@redis.example.com:6380'
  return `${key}-stand-in-`.padEnd(48, 'x')
}

/**
 * The container's environment as the kubelet builds it: envFrom first, then env in order, each $(NAME) replaced
 * by a variable defined before it; pod fields are documentation addresses (RFC 5737), Secret keys stand-ins.
 */
function containerEnvironment(deployment: KubeObject, objects: KubeObject[], missingKeys: string[] = []) {
  const container = podTemplateOf(deployment).spec.containers[0]!
  const env: Record<string, string> = {}
  const configMap = objects.find(
    (o) => o.kind === 'ConfigMap' && o.metadata.name === deployment.metadata.name,
  ) as KubeObject & { data: Record<string, string> }
  Object.assign(env, configMap.data)
  const fields: Record<string, string> = { 'status.podIP': '192.0.2.10', 'status.hostIP': '192.0.2.1' }
  for (const variable of (container.env ?? []) as EnvVar[]) {
    const { value, valueFrom } = variable
    if (value !== undefined)
      env[variable.name] = value.replace(/\$\(([A-Z_][A-Z0-9_]*)\)/g, (all, name: string) => env[name] ?? all)
    else if (valueFrom?.fieldRef) env[variable.name] = fields[valueFrom.fieldRef.fieldPath] ?? ''
    else if (valueFrom?.secretKeyRef) {
      const { key, optional } = valueFrom.secretKeyRef
      // an optional key the Secret lacks leaves the variable unset, as the kubelet does
      if (!(optional || missingKeys.includes(key))) env[variable.name] = secretStandIn(key)
    }
  }
  return {
    env,
    configMapKeys: Object.keys(configMap.data),
    envNames: ((container.env ?? []) as EnvVar[]).map((v) => v.name),
  }
}

/** --set of the engines allowed in plaintext: the chart's default addresses are plaintext ones */
const plaintextAllowed = 'engines.plaintextAllowed=true'

// variables of the pod itself that no service reads: the downward API's and the parts of a built DATABASE_URL
const podOnly = ['POD_IP', 'HOST_IP', 'DATABASE_USER', 'DATABASE_PASSWORD']

/** The problems of a refused configuration (a ConfigError's, one line per variable); fails when it was accepted. */
function refusedProblems(load: () => unknown): string[] {
  try {
    load()
  } catch (error) {
    const { problems } = error as { problems?: unknown }
    if (Array.isArray(problems)) return problems.map(String)
    throw error
  }
  throw new Error('the configuration was accepted')
}

let tools: DeployTools
beforeAll(async () => {
  tools = deployTools()
})

describe("each service's own loader accepts the chart's environment in production", () => {
  it.each(valueSets)(
    'when the chart renders with $name, then every service starts its configuration in production (its plaintext engines refused unless allowed) and reads every variable it is given',
    async ({ valuesFiles }) => {
      const objects = parseManifest(await renderChart(tools, { valuesFiles }))
      const deployments = objects.filter((o) => o.kind === 'Deployment')
      expect(deployments).toHaveLength(9)
      for (const deployment of deployments) {
        const service = deployment.metadata.labels?.['app.kubernetes.io/component'] ?? ''
        const { load, variables } = await serviceConfig(service)
        const { env, configMapKeys, envNames } = containerEnvironment(deployment, objects)
        expect(env.NODE_ENV, service).toBe('production')
        if (env.ENGINES_PLAINTEXT_ALLOWED === 'true') expect(() => load(env), service).not.toThrow()
        else {
          // the chart sets everything else production insists on: what is refused is the engines' plaintext alone
          const problems = refusedProblems(() => load(env))
          expect(problems.length, service).toBeGreaterThan(0)
          expect(
            problems.filter((problem) => !problem.includes('production refuses plaintext engines')),
            service,
          ).toEqual([])
          expect(() => load({ ...env, ENGINES_PLAINTEXT_ALLOWED: 'true' }), service).not.toThrow()
        }
        const unread = [...configMapKeys, ...envNames].filter(
          (name) => !variables.includes(name) && !podOnly.includes(name),
        )
        expect(unread, `${service} is given variables it does not read`).toEqual([])
      }
    },
  )

  it('when the defaults render, then each instance announces its pod address in Consul and reaches auth and the engines by their cluster names', async () => {
    const objects = parseManifest(await renderChart(tools))
    const order = objects.find((o) => o.kind === 'Deployment' && o.metadata.name === 'meridian-order')!
    const { env } = containerEnvironment(order, objects)
    expect(env).toMatchObject({
      SERVICE_HOST: '192.0.2.10',
      PORT: '3002',
      JWT_ISSUER: 'https://meridian.example.com',
      AUTH_JWKS_URL: 'http://meridian-auth:3001/.well-known/jwks.json',
      KAFKA_BROKERS: 'kafka:9092',
      CONSUL_HTTP_ADDR: 'http://consul-server:8500',
      REDIS_URL: 'redis://redis:6379',
    })
  })

  it("when Consul runs as an agent per node, then CONSUL_HTTP_ADDR is the node's address", async () => {
    const objects = parseManifest(await renderChart(tools, { valuesFiles: ['examples/consul-agents.yaml'] }))
    const order = objects.find((o) => o.kind === 'Deployment' && o.metadata.name === 'meridian-order')!
    const { env } = containerEnvironment(order, objects)
    expect(env.CONSUL_HTTP_ADDR).toBe('http://192.0.2.1:8500')
    expect(env.CONSUL_HTTP_TOKEN).toBe(secretStandIn('consul-http-token'))
  })

  it('when PostgreSQL is CloudNativePG, then DATABASE_URL is built from its read-write service and the role Secret of the service', async () => {
    const objects = parseManifest(await renderChart(tools, { valuesFiles: ['examples/cloudnativepg.yaml'] }))
    const order = objects.find((o) => o.kind === 'Deployment' && o.metadata.name === 'meridian-order')!
    const container = podTemplateOf(order).spec.containers[0]!
    const user = (container.env as EnvVar[]).find((v) => v.name === 'DATABASE_USER')
    expect(user?.valueFrom?.secretKeyRef).toEqual({ name: 'meridian-db-order', key: 'username' })
    const { env } = containerEnvironment(order, objects)
    expect(env.DATABASE_URL).toBe(
      `postgres://${secretStandIn('username')}:${secretStandIn('password')}@meridian-pg-rw:5432/orders?sslmode=require`,
    )
    // the Cluster has a role and a database of that name, the role's password in the same Secret
    const cluster = objects.find((o) => o.kind === 'Cluster')!
    const roles = (
      cluster.spec as { managed: { roles: { name: string; passwordSecret: { name: string } }[] } }
    ).managed.roles
    expect(roles).toContainEqual(
      expect.objectContaining({ name: 'orders', passwordSecret: { name: 'meridian-db-order' } }),
    )
    const databases = objects
      .filter((o) => o.kind === 'Database')
      .map((o) => o.spec as { name: string; owner: string })
    expect(databases).toContainEqual(expect.objectContaining({ name: 'orders', owner: 'orders' }))
    expect(databases.map((d) => d.name).sort()).toEqual([
      'auth',
      'content',
      'inventory',
      'notifications',
      'orders',
      'payments',
      'realtime',
      'shipping',
    ])
  })

  it('when a variable is given as a number in a values file, then its ConfigMap holds the digits the service reads', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'meridian-values-'))
    const file = join(dir, 'numbers.yaml')
    // a YAML number reaches the templates as a float, which would print 1209600 as 1.2096e+06
    writeFileSync(
      file,
      'engines:\n  plaintextAllowed: true\nservices:\n  auth:\n    env:\n      REFRESH_TOKEN_TTL_SECONDS: 1209600\n',
    )
    const objects = parseManifest(await renderChart(tools, { valuesFiles: [file] }))
    const auth = objects.find((o) => o.kind === 'Deployment' && o.metadata.name === 'meridian-auth')!
    const { env } = containerEnvironment(auth, objects)
    expect(env.REFRESH_TOKEN_TTL_SECONDS).toBe('1209600')
    const { load } = await serviceConfig('auth')
    expect(load(env)).toMatchObject({ REFRESH_TOKEN_TTL_SECONDS: 1209600 })
  })

  it('when order.unverifiedCustomerOrderLimit is set (an amount, 0, or text), then order alone is given UNVERIFIED_CUSTOMER_ORDER_LIMIT and its loader reads it; unset (the defaults), no service is', async () => {
    const limitsOf = (objects: KubeObject[]) =>
      Object.fromEntries(
        objects
          .filter((o) => o.kind === 'Deployment')
          .map((o) => [
            o.metadata.labels?.['app.kubernetes.io/component'] ?? '',
            containerEnvironment(o, objects).env.UNVERIFIED_CUSTOMER_ORDER_LIMIT,
          ])
          .filter(([, limit]) => limit !== undefined),
      )
    const { load } = await serviceConfig('order')
    const orderEnv = (objects: KubeObject[]) =>
      containerEnvironment(
        objects.find((o) => o.kind === 'Deployment' && o.metadata.name === 'meridian-order')!,
        objects,
      ).env

    const amount = parseManifest(
      await renderChart(tools, { set: ['order.unverifiedCustomerOrderLimit=12.5', plaintextAllowed] }),
    )
    expect(limitsOf(amount)).toEqual({ order: '12.5' })
    expect(load(orderEnv(amount))).toMatchObject({ UNVERIFIED_CUSTOMER_ORDER_LIMIT: 12.5 })

    // 0 is a limit (no order at all), not "unset"; a YAML number and a quoted one render alike
    const dir = mkdtempSync(join(tmpdir(), 'meridian-values-'))
    for (const [text, expected] of [
      ['0', '0'],
      ['"50"', '50'],
      ['1000000', '1000000'],
    ] as const) {
      const file = join(dir, 'order-limit.yaml')
      writeFileSync(file, `order:\n  unverifiedCustomerOrderLimit: ${text}\n`)
      const objects = parseManifest(
        await renderChart(tools, { valuesFiles: [file], set: [plaintextAllowed] }),
      )
      expect(limitsOf(objects), text).toEqual({ order: expected })
      expect(load(orderEnv(objects))).toMatchObject({ UNVERIFIED_CUSTOMER_ORDER_LIMIT: Number(expected) })
    }

    expect(limitsOf(parseManifest(await renderChart(tools)))).toEqual({})
  })

  it('when an SMTP server and its credentials Secret are configured, then auth and notification get SMTP_URL, SMTP_USERNAME and SMTP_PASSWORD from it, and no other service does', async () => {
    const mailers = ['auth', 'notification']
    const smtpOf = (objects: KubeObject[], service: string) => {
      const deployment = objects.find(
        (o) => o.kind === 'Deployment' && o.metadata.labels?.['app.kubernetes.io/component'] === service,
      )!
      const container = podTemplateOf(deployment).spec.containers[0]!
      const { env } = containerEnvironment(deployment, objects)
      const fromSecret = Object.fromEntries(
        ((container.env ?? []) as EnvVar[])
          .filter((v) => v.name.startsWith('SMTP_'))
          .map((v) => [v.name, v.valueFrom?.secretKeyRef]),
      )
      return { url: env.SMTP_URL, fromSecret }
    }

    const byUrl = parseManifest(
      await renderChart(tools, {
        set: ['smtp.url=smtps://smtp.example.com:465', 'smtp.credentialsSecret=meridian-smtp'],
      }),
    )
    const services = byUrl
      .filter((o) => o.kind === 'Deployment')
      .map((o) => o.metadata.labels?.['app.kubernetes.io/component'] ?? '')
    for (const service of services) {
      const { url, fromSecret } = smtpOf(byUrl, service)
      if (!mailers.includes(service)) {
        expect({ url, fromSecret }, service).toEqual({ url: undefined, fromSecret: {} })
        continue
      }
      expect(url, service).toBe('smtps://smtp.example.com:465')
      expect(fromSecret, service).toEqual({
        SMTP_USERNAME: { name: 'meridian-smtp', key: 'username' },
        SMTP_PASSWORD: { name: 'meridian-smtp', key: 'password' },
      })
    }

    // host and port instead of a URL, the Secret's keys named otherwise
    const byParts = parseManifest(
      await renderChart(tools, {
        set: [
          'smtp.host=email-smtp.example.com',
          'smtp.port=2587',
          'smtp.credentialsSecret=ses',
          'smtp.usernameKey=user',
          'smtp.passwordKey=pass',
        ],
      }),
    )
    expect(smtpOf(byParts, 'notification')).toEqual({
      url: 'smtp://email-smtp.example.com:2587',
      fromSecret: {
        SMTP_USERNAME: { name: 'ses', key: 'user' },
        SMTP_PASSWORD: { name: 'ses', key: 'pass' },
      },
    })

    // nothing configured (the defaults): no SMTP variable anywhere
    const defaults = parseManifest(await renderChart(tools))
    for (const service of mailers)
      expect(smtpOf(defaults, service), service).toEqual({ url: undefined, fromSecret: {} })
  })

  it('when a Secret key production needs is missing, then the service refuses to start and names the variable', async () => {
    // the engines allowed in plaintext: the missing key is what is refused
    const objects = parseManifest(await renderChart(tools, { set: [plaintextAllowed] }))
    const auth = objects.find((o) => o.kind === 'Deployment' && o.metadata.name === 'meridian-auth')!
    const { load } = await serviceConfig('auth')
    const { env } = containerEnvironment(auth, objects, ['oidc-cookie-keys'])
    expect(refusedProblems(() => load(env))).toEqual([
      'OIDC_COOKIE_KEYS: must be set in production (its default is for development only)',
    ])
  })

  it('when engines.plaintextAllowed is left false (the default), then every Deployment and migration Job is given ENGINES_PLAINTEXT_ALLOWED=false and each service refuses its plaintext engines by name; true, every one is given true and starts', async () => {
    const allowanceOf = (objects: KubeObject[]) =>
      objects
        .filter((o) => o.kind === 'Deployment' || o.kind === 'Job')
        .map((o) => {
          const container = podTemplateOf(o).spec.containers[0]!
          const inline = ((container.env ?? []) as EnvVar[]).find(
            (v) => v.name === 'ENGINES_PLAINTEXT_ALLOWED',
          )
          const configMap = objects.find(
            (c) => c.kind === 'ConfigMap' && c.metadata.name === o.metadata.name,
          ) as (KubeObject & { data: Record<string, string> }) | undefined
          // a Deployment reads it from its ConfigMap, a migration Job (a hook, before the ConfigMap) inline
          return [`${o.kind} ${o.metadata.name}`, inline?.value ?? configMap?.data.ENGINES_PLAINTEXT_ALLOWED]
        })
    const defaults = parseManifest(await renderChart(tools))
    const allowances = allowanceOf(defaults)
    // nine Deployments and eight migration Jobs
    expect(allowances).toHaveLength(17)
    for (const [name, value] of allowances) expect(value, name).toBe('false')
    const { load } = await serviceConfig('order')
    const orderEnv = (objects: KubeObject[]) =>
      containerEnvironment(
        objects.find((o) => o.kind === 'Deployment' && o.metadata.name === 'meridian-order')!,
        objects,
      ).env
    const problems = refusedProblems(() => load(orderEnv(defaults)))
    // each engine at its default address: a Secret's DATABASE_URL without sslmode, redis://, http:// Consul, Kafka
    // without TLS
    expect(problems.map((problem) => problem.slice(0, problem.indexOf(':')))).toEqual([
      'DATABASE_URL',
      'REDIS_URL',
      'CONSUL_HTTP_ADDR',
      'KAFKA_TLS',
    ])
    for (const problem of problems) expect(problem).toContain('ENGINES_PLAINTEXT_ALLOWED=true allows them')

    const allowed = parseManifest(await renderChart(tools, { set: [plaintextAllowed] }))
    for (const [name, value] of allowanceOf(allowed)) expect(value, name).toBe('true')
    expect(load(orderEnv(allowed))).toMatchObject({ NODE_ENV: 'production', ENGINES_PLAINTEXT_ALLOWED: true })
  })
})
