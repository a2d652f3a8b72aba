// The shell's view of the engines (`scripts/infra env`): `export NAME=value` lines for the endpoints, the services'
// databases and the optional engines while they run; and where a native engine writes its log.
import { containerOf } from './docker.ts'
import { layoutFromEnv } from './layout.ts'
import type { EngineName } from './native/engine.ts'
import { nativeJaeger } from './native/jaeger.ts'
import { nativeMailpit } from './native/mailpit.ts'
import {
  endpointsOf,
  mailpitUrlOf,
  mailpitUrlVariable,
  nativeEngines,
  optionalEndpointVariable,
  planInfra,
  planMail,
  planTraceStore,
} from './plan.ts'
import { databaseOf, databaseOfService, databaseUrl, databaseVariableOf } from './probes.ts'
import { securePrincipals } from './secure/machine.ts'
import { runningSecureMachine } from './status.ts'

/** A value in single quotes for a POSIX shell. */
const shellQuote = (value: string): string => `'${value.replaceAll("'", `'\\''`)}'`

const exportLines = (variables: Record<string, string>): string[] =>
  Object.entries(variables).map(([name, value]) => `export ${name}=${shellQuote(value)}`)

/**
 * `export NAME=value` lines for a shell: the engines' endpoints (the trace store's and the SMTP server's while they
 * run), and each service's own database on the PostgreSQL server (`<SERVICE>_DATABASE_URL`), which the services' dev
 * and migrate scripts read, so that however they are started (`./scripts/dev`, `pnpm turbo run dev`, one service's
 * `pnpm dev`) none uses the server's `postgres` database.
 *
 * While the machine's secure engines run (`up --secure`): the administrator's form (the superuser on `postgres`,
 * Kafka's admin user, Redis' admin user, Consul's management token, each with TLS against the machine's CA), and
 * `<SERVICE>_DATABASE_URL` as the service's own role (what it migrates and creates is then its own, as it will be
 * when it runs). With `service`: that service's lines only (its role, SCRAM user, ACL user and token), both modes.
 */
export async function infraEnv(
  env: NodeJS.ProcessEnv = process.env,
  options: { service?: string } = {},
): Promise<string> {
  const secure = await runningSecureMachine(env)
  const lines: string[] = []
  if (secure) {
    const { machine } = secure
    if (options.service) lines.push(...exportLines(machine.serviceEnv(options.service)))
    else {
      lines.push(...exportLines(machine.engines.postgres.adminEnv()))
      for (const service of machine.principals.postgres) {
        const own = machine.engines.postgres.envFor(service)
        lines.push(...exportLines({ [databaseVariableOf(service)]: own[databaseVariableOf(service)] ?? '' }))
      }
      lines.push(
        ...exportLines({
          ...machine.engines.kafka.adminEnv(),
          ...machine.engines.consul.adminEnv(),
          ...machine.engines.redis.adminEnv(),
        }),
      )
    }
  } else {
    const endpoints = endpointsOf(await planInfra(env), env)
    const service = options.service
    const services = securePrincipals().consul
    if (service !== undefined && !services.includes(service))
      throw new Error(`'${service}' is not a service of services/ (${services.join(', ')})`)
    const own = service !== undefined && Object.hasOwn(databaseOfService, service)
    if (service === undefined) {
      lines.push(`export DATABASE_URL=${shellQuote(endpoints.databaseUrl)}`)
      for (const [name, database] of Object.entries(databaseOfService))
        lines.push(
          `export ${databaseVariableOf(name)}=${shellQuote(databaseUrl(endpoints.databaseUrl, database))}`,
        )
    } else if (own) {
      const url = databaseUrl(endpoints.databaseUrl, databaseOf(service))
      lines.push(
        `export DATABASE_URL=${shellQuote(url)}`,
        `export ${databaseVariableOf(service)}=${shellQuote(url)}`,
      )
    }
    lines.push(
      `export KAFKA_BROKERS=${shellQuote(endpoints.kafkaBrokers)}`,
      `export CONSUL_HTTP_ADDR=${shellQuote(endpoints.consulHttpAddr)}`,
      `export REDIS_URL=${shellQuote(endpoints.redisUrl)}`,
    )
    if (endpoints.consulToken) lines.push(`export CONSUL_HTTP_TOKEN=${shellQuote(endpoints.consulToken)}`)
  }
  const traceStore = await runningTraceStore(env)
  if (traceStore) lines.push(`export ${optionalEndpointVariable.jaeger}=${shellQuote(traceStore)}`)
  const mail = await runningMail(env)
  if (mail) lines.push(`export ${optionalEndpointVariable.mailpit}=${shellQuote(mail.smtpUrl)}`)
  if (mail?.mailpitUrl) lines.push(`export ${mailpitUrlVariable}=${shellQuote(mail.mailpitUrl)}`)
  return `${lines.join('\n')}\n`
}

/**
 * Where services send mail: the SMTP server given, or the Mailpit `up` started while it runs (with its API address);
 * undefined otherwise, so that a service started without one is told of none (rather than of a server that is down).
 */
async function runningMail(
  env: NodeJS.ProcessEnv,
): Promise<{ smtpUrl: string; mailpitUrl?: string } | undefined> {
  const plan = await planMail(env)
  const mailpitUrl = mailpitUrlOf(plan, env)
  const found = { smtpUrl: plan.endpoint, ...(mailpitUrl ? { mailpitUrl } : {}) }
  if (plan.mode === 'external') return found
  const running =
    plan.mode === 'native'
      ? nativeMailpit(layoutFromEnv(env)).runningPid() !== undefined
      : (await containerOf('mailpit')) !== undefined
  return running ? found : undefined
}

/**
 * The OTLP endpoint services should export to: the one given, or Jaeger's while the one `up` started runs; undefined
 * otherwise, so that services started without a trace store export nothing (rather than failing to reach one).
 */
async function runningTraceStore(env: NodeJS.ProcessEnv): Promise<string | undefined> {
  const plan = await planTraceStore(env)
  if (plan.mode === 'external') return plan.endpoint
  const running =
    plan.mode === 'native'
      ? nativeJaeger(layoutFromEnv(env)).runningPid() !== undefined
      : (await containerOf('jaeger')) !== undefined
  return running ? plan.endpoint : undefined
}

export function logFileOf(name: EngineName, env: NodeJS.ProcessEnv = process.env): string {
  return nativeEngines(layoutFromEnv(env), env)[name].logFile
}
