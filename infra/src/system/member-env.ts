// What each service of a run is given: the system's settings, the environment every member shares (the engines, the
// run's credential, issuer, Kafka namespace and Consul names, the simulator as the payment provider), and on top a
// member's own (its engine credentials, its run database, its Consul name, SystemOptions.env).
import { randomBytes } from 'node:crypto'
import { editPostgresUrl } from '../probes.ts'
import type { SecureMachine } from '../secure/machine.ts'
import { createRunDatabase } from './databases.ts'
import { addressOf, baseUrlOf, firsts, gatewaysOf, type Member, type Members } from './members.ts'
import { productionSettings } from './production.ts'
import { systemRedisDatabase, withRedisDatabase } from './redis-database.ts'
import type { RunPlan } from './run-plan.ts'
import { identityProvider } from './services.ts'

/**
 * What every service of a run is given besides its endpoints and names: logs at info, limits far above what a test
 * sends (hundreds of requests and logins from one address would otherwise answer 429: the limiters have tests of
 * their own), and the gateway's merged document rebuilt on every request (it shows the run's instances at once).
 * `settings` in SystemOptions overrides any of them.
 */
export const systemSettings: Readonly<Record<string, string>> = {
  NODE_ENV: 'test',
  LOG_LEVEL: 'info',
  CONSUL_REGISTER: 'true',
  RATE_LIMIT_MAX: '1000000000',
  LOGIN_MAX_FAILURES_PER_ADDRESS: '1000000000',
  LOGIN_MAX_FAILURES_PER_ACCOUNT: '1000000000',
  DOCS_CACHE_MS: '0',
}

/** `realtime-gateway` -> `REALTIME_GATEWAY_SERVICE_NAME` */
const nameVariable = (name: string) => `${name.toUpperCase().replaceAll('-', '_')}_SERVICE_NAME`

/**
 * The variables of an engine's credential or TLS: on secure engines a service gets its own (secureServiceEnv), never
 * those of the environment the run was started from, which are the administrator's.
 */
const engineCredentialVariable =
  /^(DATABASE_URL|[A-Z0-9_]+_DATABASE_URL|KAFKA_TLS.*|KAFKA_SASL_.*|CONSUL_HTTP_TOKEN|CONSUL_CACERT|CONSUL_CLIENT_.*|REDIS_URL|REDIS_TLS_.*|ENGINES_PLAINTEXT_ALLOWED)$/

/** `env` without an engine's credential or TLS (engineCredentialVariable): what a service with its own keeps of it. */
export function withoutEngineCredentials(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  return Object.fromEntries(Object.entries(env).filter(([name]) => !engineCredentialVariable.test(name)))
}

/**
 * A service's own lines of the secure engines (`scripts/infra env --service`): its role (the run's database replaces
 * its standing one), SCRAM user, token, and its Redis user on the run's database number.
 */
export function secureServiceEnv(
  machine: SecureMachine,
  service: string,
  redisDatabase: number = systemRedisDatabase,
): Record<string, string> {
  const own = machine.serviceEnv(service)
  // its standing database's variable would name another database than the run's
  const { [`${service.toUpperCase().replaceAll('-', '_')}_DATABASE_URL`]: _standing, ...rest } = own
  return onRedisDatabase(rest, redisDatabase)
}

/** A service's own variables with its REDIS_URL (when it has one) on the run's database number. */
function onRedisDatabase(env: Record<string, string>, redisDatabase: number): Record<string, string> {
  return env.REDIS_URL ? { ...env, REDIS_URL: withRedisDatabase(env.REDIS_URL, redisDatabase) } : env
}

/** Whether each service logs in to the engines as itself: one machine's secure engines, or a secure cluster's. */
const hasOwnUsers = (plan: RunPlan): boolean =>
  plan.secure !== undefined || plan.options.cluster?.serviceEnv !== undefined

/** What a run of a built form sets beside the system's settings (productionSettings); nothing in development. */
export function productionEnv(plan: RunPlan, publicUrl: string): Record<string, string> {
  const production: Record<string, string> = plan.form === 'development' ? {} : productionSettings(publicUrl)
  // on secure engines (the machine's, or a secure cluster's, whose services get their own credentials) nothing is
  // reached in plaintext: production is not told it may be, so a service that would be refuses to start
  if (plan.secure || plan.options.cluster?.serviceEnv) delete production.ENGINES_PLAINTEXT_ALLOWED
  return production
}

/** The environment every member of the run shares, before its own. */
export function sharedEnvOf(
  plan: RunPlan,
  members: Members,
  publicUrl: string,
  production: Record<string, string>,
  simulatorUrl: string,
): NodeJS.ProcessEnv {
  const { baseEnv, options, runId } = plan
  const auth = members.get(identityProvider)
  const authInstances = [...members.values()].filter((member) => member.service.name === identityProvider)
  // each service logs in to the engines as itself: one machine's secure engines, or a secure cluster's
  const ownUsers = hasOwnUsers(plan)
  return {
    ...(ownUsers ? withoutEngineCredentials(baseEnv) : baseEnv),
    ...systemSettings,
    ...production,
    // the run's own: its services call each other's /internal/ routes with it, never with the public default
    SERVICE_CREDENTIAL: randomBytes(32).toString('base64url'),
    // the issuer of every token and of auth's OpenID provider is the public address: the run's gateway
    JWT_ISSUER: publicUrl,

    ...options.settings,
    // on secure engines each service's own user, below
    ...(ownUsers ? {} : { REDIS_URL: plan.redisUrl }),
    KAFKA_NAMESPACE: plan.kafkaNamespace,
    // the realtime channel's Redis keys and adapter stream: the run's own, as its topics are; on secure engines the
    // declared default, the only one realtime-gateway's ACL user may touch (the run's database number keeps its keys
    // apart, not its channels: two runs at once on one secure Redis would hear each other's adapter messages; a
    // cluster's Redis serves one run)
    ...(ownUsers ? {} : { REALTIME_REDIS_PREFIX: `${runId}:realtime:` }),
    // the provider is the simulator, which speaks Stripe's API: its keys are the defaults, or in production the run's
    STRIPE_API_BASE: simulatorUrl,
    // every instance of auth: a key is read from the next when one is down
    ...(auth
      ? {
          AUTH_JWKS_URL: authInstances
            .map((member) => `${baseUrlOf(member)}/.well-known/jwks.json`)
            .join(','),
        }
      : {}),
    // a service finds the others under the run's Consul names (<NAME>_SERVICE_NAME, e.g. order's inventory)
    ...Object.fromEntries(
      firsts(members).map((member) => [nameVariable(member.service.name), member.consulName]),
    ),
    GATEWAY_SERVICE_NAMES: firsts(members)
      .filter((member) => !member.service.isGateway)
      .map((member) => `${member.service.name}=${member.consulName}`)
      .join(','),
  }
}

/** A first member's run database (when its service has one) and environment: the shared one, then its own. */
async function prepareFirst(
  plan: RunPlan,
  member: Member,
  sharedEnv: NodeJS.ProcessEnv,
  gateways: Member[],
): Promise<void> {
  const { options, secure, redisDatabase } = plan
  const name = member.service.name
  const own = secure
    ? secureServiceEnv(secure, name, redisDatabase)
    : onRedisDatabase(options.cluster?.serviceEnv?.(name) ?? {}, redisDatabase)
  if (member.service.hasDatabase) {
    const ownUrl = own.DATABASE_URL
    member.database = await createRunDatabase(
      plan.serverUrl,
      `${plan.prefix}_${name.replaceAll('-', '_')}_${plan.dbSuffix}`,
      ownUrl ? (database) => editPostgresUrl(ownUrl, { database }) : options.cluster?.databaseUrl,
      ownUrl ? name : undefined,
    )
  }
  member.env = {
    ...sharedEnv,
    ...own,
    ...(member.database ? { DATABASE_URL: member.database.url } : {}),
    CONSUL_SERVICE_NAME: member.consulName,
    // across hosts the gateways forward from their hosts' addresses: a service believes their X-Forwarded-For
    ...(plan.hosts.length > 0 && !member.service.isGateway
      ? { TRUSTED_PROXIES: ['loopback', ...gateways.map(addressOf)].join(',') }
      : {}),
    ...options.env?.['*'],
    ...options.env?.[name],
  }
}

/**
 * Gives every member its environment on top of `sharedEnv`, and each service with migrations its run database (made
 * here, one per service, in the order of the services); a replica shares its first instance's, and across hosts
 * registers with its own host's Consul agent.
 */
export async function prepareMembers(
  plan: RunPlan,
  members: Members,
  sharedEnv: NodeJS.ProcessEnv,
): Promise<void> {
  const gateways = gatewaysOf(members)
  for (const member of firsts(members)) await prepareFirst(plan, member, sharedEnv, gateways)
  for (const member of members.values()) {
    if (member.replicaOf) member.env = member.replicaOf.env
    // across hosts, each registers with its own host's agent
    if (member.host) member.env = { ...member.env, CONSUL_HTTP_ADDR: member.host.consulAddr }
  }
}
