// Starting and stopping a run's members: one member by its recorded process (spawnService, then waiting until it
// passes in Consul), and the run's start-up in order: auth and the run's administrator, auth's other instances, the
// rest a few at a time, then each gateway, waited for until its merged document has every service's paths.
import { randomBytes } from 'node:crypto'
import { isAlive, waitFor } from '../processes.ts'
import { makeAdministrator } from './administrator.ts'
import { isPassing } from './consul-instances.ts'
import { addressOf, baseUrlOf, gatewaysOf, type Member, type Members } from './members.ts'
import type { RunPlan } from './run-plan.ts'
import { identityProvider } from './services.ts'
import { spawnService } from './spawned-service.ts'
import type { MeridianSystem } from './system-types.ts'

/** Stops a member's process (`signal`, SIGKILL after graceMs) and forgets it; nothing when it is not running. */
export async function stopMember(
  member: Member,
  signal: NodeJS.Signals = 'SIGTERM',
  graceMs = 15_000,
): Promise<void> {
  const running = member.process
  if (!running) return
  await running.stop(signal, graceMs)
  member.process = undefined
}

/**
 * Starts a member on its port with its environment and log file; resolves once it is ready and, when it registers,
 * passing in Consul. Throws when it is running already.
 */
export async function startMember(plan: RunPlan, member: Member): Promise<void> {
  const { options, consul } = plan
  if (member.process && isAlive(member.process.pid))
    throw new Error(`${member.key} is running (pid ${member.process.pid})`)
  member.process = await spawnService(member.service, {
    env: member.env,
    port: member.port,
    logFile: member.logFile,
    form: plan.form,
    ...(member.release !== undefined ? { imageTag: member.release } : {}),
    ...(member.host ? { host: member.host } : {}),
    ...(options.readyTimeoutMs ? { readyTimeoutMs: options.readyTimeoutMs } : {}),
    ...(options.readyPollMs ? { readyPollMs: options.readyPollMs } : {}),
  })
  // ready is not yet found: others route to it once Consul lists it as passing (a rolling restart stops the next
  // instance only then, as a deployment waits for the new one)
  if (member.env.CONSUL_REGISTER === 'true') {
    const agent = { ...consul, address: member.host?.consulAddr ?? consul.address }
    await waitFor(
      `${member.key} to pass in Consul`,
      async () => {
        if (!(await isPassing(agent, member.consulName, addressOf(member), member.port)))
          throw new Error('not among the passing instances yet')
      },
      { timeoutMs: 30_000, intervalMs: 100 },
    )
  }
  plan.log(`${member.key}: pid ${member.process.pid} on ${member.process.baseUrl}`)
}

/** The paths of a document that a service serves itself (not the chassis' operational ones). */
async function ownPaths(baseUrl: string): Promise<string[]> {
  const response = await fetch(`${baseUrl}/docs/json`, { signal: AbortSignal.timeout(5000) })
  const document = (await response.json()) as { paths?: Record<string, unknown> }
  return Object.keys(document.paths ?? {}).filter(
    (path) => !/^\/(health|healthz|metrics|docs)(\/|$)/.test(path),
  )
}

/** Runs `work` over `items`, at most `limit` at a time; fails with the first failure once all have settled. */
async function inBatches<T>(items: T[], limit: number, work: (item: T) => Promise<void>): Promise<void> {
  const queue = [...items]
  const failures: unknown[] = []
  await Promise.all(
    Array.from({ length: Math.max(1, Math.min(limit, queue.length)) }, async () => {
      for (let item = queue.shift(); item !== undefined; item = queue.shift()) {
        try {
          await work(item)
        } catch (error) {
          failures.push(error)
        }
      }
    }),
  )
  if (failures.length > 0) throw failures[0]
}

/** Starts auth's first instance and, when it has its database, makes the run's administrator in it. */
async function startAuth(plan: RunPlan, auth: Member): Promise<MeridianSystem['admin']> {
  await startMember(plan, auth)
  if (!auth.database) return undefined
  const admin = { email: `admin-${plan.runId}@example.com`, password: randomBytes(18).toString('base64url') }
  await makeAdministrator(auth.service.dir, {
    databaseUrl: auth.database.url,
    // on secure engines auth's own user, as auth itself connects
    redisUrl: auth.env.REDIS_URL ?? plan.redisUrl,
    ...(auth.env.REDIS_TLS_CA ? { redisCaFile: auth.env.REDIS_TLS_CA } : {}),
    name: 'System administrator',
    ...admin,
  })
  return admin
}

/** Starts a gateway, then waits until its merged document has a path of each of `routed` (those that serve any). */
async function startGateway(plan: RunPlan, gatewayMember: Member, routed: Member[]): Promise<void> {
  await startMember(plan, gatewayMember)
  // the gateway routes to what it has found in Consul: wait until its merged document has each service's paths
  const gatewayUrl = baseUrlOf(gatewayMember)
  for (const member of routed) {
    const paths = await ownPaths(baseUrlOf(member))
    if (paths.length === 0) continue
    await waitFor(
      `${gatewayMember.key} to find ${member.consulName} in Consul`,
      async () => {
        const merged = await ownPaths(gatewayUrl)
        if (!paths.some((path) => merged.includes(path)))
          throw new Error(`no path of ${member.service.name} yet`)
      },
      { timeoutMs: 60_000, intervalMs: 250 },
    )
  }
}

/**
 * Starts every member in order: auth (then the run's administrator), auth's other instances, the rest
 * SystemOptions.startConcurrency at a time, the gateways last, each once it routes to every service. The administrator.
 */
export async function startMembers(plan: RunPlan, members: Members): Promise<MeridianSystem['admin']> {
  const auth = members.get(identityProvider)
  const authInstances = [...members.values()].filter((member) => member.service.name === identityProvider)
  const admin = auth ? await startAuth(plan, auth) : undefined
  const rest = [...members.values()].filter(
    (member) => member.service.name !== identityProvider && !member.service.isGateway,
  )
  for (const member of authInstances.filter((each) => each !== auth)) await startMember(plan, member)
  const concurrency = plan.options.startConcurrency ?? (plan.form === 'development' ? 2 : 4)
  await inBatches(rest, concurrency, (member) => startMember(plan, member))
  const routed = rest.concat(auth ? [auth] : []).filter((each) => !each.replicaOf)
  for (const gatewayMember of gatewaysOf(members)) await startGateway(plan, gatewayMember, routed)
  return admin
}
