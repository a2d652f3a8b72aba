// Where each engine comes from (given endpoint, Docker or native) and the endpoints that follow: the plan every
// other step (up, status, down, env) starts from, with how an engine not run natively is probed.
import { type KafkaSecurity, kafkaSecurityFromEnv } from '@meridian/kafka-connection'
import { consulSettingsFromEnv } from './consul-http.ts'
import { dockerReachable } from './docker.ts'
import type { Layout } from './layout.ts'
import { nativeConsul } from './native/consul.ts'
import type {
  ComponentName,
  EngineName,
  NativeEngine,
  OptionalComponentName,
  Progress,
} from './native/engine.ts'
import {
  jaegerVersion,
  nativeJaeger,
  nativeJaegerUiUrl,
  nativeOtlpEndpoint,
  otlpReceiverVersion,
} from './native/jaeger.ts'
import { nativeKafka } from './native/kafka.ts'
import {
  mailpitVersion,
  nativeMailpit,
  nativeMailpitUrl,
  nativeSmtpUrl,
  smtpGreeting,
} from './native/mailpit.ts'
import { nativePostgres } from './native/postgres.ts'
import { nativeRedis } from './native/redis.ts'
import { consulVersion, kafkaCluster, postgresVersion, redisVersion } from './probes.ts'
import { redisTlsFromEnv } from './secure/redis-tls.ts'

export type Mode = 'external' | 'docker' | 'native'

export const components: readonly ComponentName[] = ['postgres', 'kafka', 'consul', 'redis']

/**
 * Engines started only when asked for (`scripts/infra up` and `./scripts/dev` do; the test setup and the benches do
 * not, so that no test run waits for them): Jaeger, the development trace store, and Mailpit, the development SMTP
 * server (a test that reads mail starts a Mailpit of its own). Kept apart from `components`, which the test setup, the
 * engine images and testcontainers take as "what every service needs".
 */
export const optionalComponents: readonly OptionalComponentName[] = ['jaeger', 'mailpit']

/** The environment variable through which each engine's endpoint is given (and printed by `infra env`). */
export const endpointVariable: Record<ComponentName, string> = {
  postgres: 'DATABASE_URL',
  kafka: 'KAFKA_BROKERS',
  consul: 'CONSUL_HTTP_ADDR',
  redis: 'REDIS_URL',
}

/**
 * The optional engines' variables: an OTLP endpoint given here is used instead of starting Jaeger, an SMTP server
 * given here instead of starting Mailpit.
 */
export const optionalEndpointVariable: Record<OptionalComponentName, string> = {
  jaeger: 'OTEL_EXPORTER_OTLP_ENDPOINT',
  mailpit: 'SMTP_URL',
}

/** Where Mailpit's API is, beside SMTP_URL: exported while the Mailpit `up` started runs (or as given). */
export const mailpitUrlVariable = 'MAILPIT_URL'

export interface Endpoints {
  /** server URL (database `postgres`); each service's database is on the same server, see serviceDatabases */
  databaseUrl: string
  kafkaBrokers: string
  consulHttpAddr: string
  consulToken?: string
  redisUrl: string
  /** where services export spans (OTLP/HTTP), when the trace store was asked for */
  otlpEndpoint?: string
  /** where services send mail (smtp://host:port), when mail was asked for */
  smtpUrl?: string
  /** Mailpit's API and UI address, when mail was asked for and Mailpit is ours (not an SMTP server given) */
  mailpitUrl?: string
}

/** The engines' addresses as the variables a service and the system runner read them from. */
export function endpointsEnv(endpoints: Endpoints): Record<string, string> {
  return {
    DATABASE_URL: endpoints.databaseUrl,
    KAFKA_BROKERS: endpoints.kafkaBrokers,
    CONSUL_HTTP_ADDR: endpoints.consulHttpAddr,
    ...(endpoints.consulToken ? { CONSUL_HTTP_TOKEN: endpoints.consulToken } : {}),
    REDIS_URL: endpoints.redisUrl,
  }
}

export interface ComponentPlan {
  name: ComponentName
  mode: Mode
  endpoint: string
}

/** Where an engine comes from, the optional ones included. */
export interface EnginePlan {
  name: EngineName
  mode: Mode
  endpoint: string
}

export interface InfraOptions {
  env?: NodeJS.ProcessEnv
  progress?: Progress
  /** bring up Jaeger too (or check the OTLP endpoint given by OTEL_EXPORTER_OTLP_ENDPOINT) */
  traceStore?: boolean
  /** bring up Mailpit too (or check the SMTP server given by SMTP_URL) */
  mail?: boolean
}

/**
 * The TLS and SASL of infra's Kafka clients: a broker given (KAFKA_BROKERS) with the variables the services read
 * (KAFKA_TLS*, KAFKA_SASL_*); none for the brokers infra starts, which are plaintext.
 */
export function kafkaSecurityOf(mode: Mode, env: NodeJS.ProcessEnv): KafkaSecurity {
  return mode === 'external' ? kafkaSecurityFromEnv(env) : {}
}

const versionProbe: Record<
  ComponentName,
  (endpoint: string, env: NodeJS.ProcessEnv, mode: Mode) => Promise<string>
> = {
  postgres: postgresVersion,
  kafka: async (brokers, env, mode) => {
    const cluster = await kafkaCluster(brokers, kafkaSecurityOf(mode, env))
    return `Kafka broker (${cluster.brokers} node${cluster.brokers === 1 ? '' : 's'})`
  },
  consul: (addr, env) => consulVersion(consulSettingsFromEnv(env, addr)),
  // rediss:// with REDIS_TLS_CA (and a client certificate) as the services are given it
  redis: (url, env) => redisVersion(url, redisTlsFromEnv(url, env)),
}

/**
 * How an engine not run natively is probed: Jaeger in a container by its query API, a given collector by OTLP;
 * Mailpit in a container by its API, a given SMTP server by its greeting.
 */
export function probeOf(component: EnginePlan, env: NodeJS.ProcessEnv): () => Promise<string> {
  if (component.name === 'jaeger') {
    return component.mode === 'external'
      ? () => otlpReceiverVersion(component.endpoint)
      : () => jaegerVersion(nativeJaegerUiUrl)
  }
  if (component.name === 'mailpit') {
    return component.mode === 'external'
      ? () => smtpGreeting(component.endpoint)
      : () => mailpitVersion(nativeMailpitUrl)
  }
  const name = component.name
  // a Kafka client's TLS and SASL variables are checked here, once: a mistake in them is no broker still starting
  if (name === 'kafka') kafkaSecurityOf(component.mode, env)
  return () => versionProbe[name](component.endpoint, env, component.mode)
}

export function nativeEngines(layout: Layout, env: NodeJS.ProcessEnv): Record<EngineName, NativeEngine> {
  return {
    postgres: nativePostgres(layout, env),
    kafka: nativeKafka(layout),
    consul: nativeConsul(layout),
    redis: nativeRedis(layout),
    jaeger: nativeJaeger(layout),
    mailpit: nativeMailpit(layout),
  }
}

/** Native endpoints, known without starting anything (used by the Docker path too: same ports). */
const localEndpoint: Record<ComponentName, string> = {
  postgres: 'postgres://postgres:postgres@127.0.0.1:5432/postgres',
  kafka: '127.0.0.1:9092',
  consul: 'http://127.0.0.1:8500',
  redis: 'redis://127.0.0.1:6379',
}

async function chooseLocalMode(env: NodeJS.ProcessEnv): Promise<Exclude<Mode, 'external'>> {
  const wanted = env.MERIDIAN_INFRA ?? 'auto'
  if (wanted === 'native' || wanted === 'docker') return wanted
  if (wanted !== 'auto') throw new Error(`MERIDIAN_INFRA must be auto, docker or native (got '${wanted}')`)
  return (await dockerReachable()) ? 'docker' : 'native'
}

/** Decides, for each engine, where it comes from. */
export async function planInfra(env: NodeJS.ProcessEnv = process.env): Promise<ComponentPlan[]> {
  const needsLocal = components.some((name) => !env[endpointVariable[name]])
  const localMode = needsLocal ? await chooseLocalMode(env) : 'native'
  return components.map((name) => {
    const given = env[endpointVariable[name]]
    return given
      ? { name, mode: 'external', endpoint: given }
      : { name, mode: localMode, endpoint: localEndpoint[name] }
  })
}

/** Where the trace store comes from: the OTLP endpoint given, else Jaeger in the local mode the others use. */
export async function planTraceStore(env: NodeJS.ProcessEnv = process.env): Promise<EnginePlan> {
  const given = env[optionalEndpointVariable.jaeger]
  return given
    ? { name: 'jaeger', mode: 'external', endpoint: given }
    : { name: 'jaeger', mode: await chooseLocalMode(env), endpoint: nativeOtlpEndpoint }
}

/** Where mail goes: the SMTP server given, else Mailpit in the local mode the others use. */
export async function planMail(env: NodeJS.ProcessEnv = process.env): Promise<EnginePlan> {
  const given = env[optionalEndpointVariable.mailpit]
  return given
    ? { name: 'mailpit', mode: 'external', endpoint: given }
    : { name: 'mailpit', mode: await chooseLocalMode(env), endpoint: nativeSmtpUrl }
}

/** Mailpit's API address beside a mail plan: ours when we run it, else only as given (MAILPIT_URL). */
export function mailpitUrlOf(plan: EnginePlan, env: NodeJS.ProcessEnv): string | undefined {
  return plan.mode === 'external' ? env[mailpitUrlVariable] || undefined : nativeMailpitUrl
}

export function endpointsOf(plan: EnginePlan[], env: NodeJS.ProcessEnv = process.env): Endpoints {
  const endpoint = (name: ComponentName) => plan.find((p) => p.name === name)?.endpoint ?? localEndpoint[name]
  const traceStore = plan.find((p) => p.name === 'jaeger')
  const mail = plan.find((p) => p.name === 'mailpit')
  const mailpitUrl = mail ? mailpitUrlOf(mail, env) : undefined
  return {
    databaseUrl: endpoint('postgres'),
    kafkaBrokers: endpoint('kafka'),
    consulHttpAddr: endpoint('consul'),
    ...(env.CONSUL_HTTP_TOKEN ? { consulToken: env.CONSUL_HTTP_TOKEN } : {}),
    redisUrl: endpoint('redis'),
    ...(traceStore ? { otlpEndpoint: traceStore.endpoint } : {}),
    ...(mail ? { smtpUrl: mail.endpoint } : {}),
    ...(mailpitUrl ? { mailpitUrl } : {}),
  }
}
