// The members of a run: every instance of every service (`<name>#<n>` for a replica) with its Consul name, host, port
// and log file, assigned before anything starts (every service is told where auth's keys are, and each keeps its port
// across restarts); and where a member is reached.
import { join } from 'node:path'
import { freePort } from '../free-port.ts'
import type { RunDatabase } from './databases.ts'
import type { RunPlan } from './run-plan.ts'
import type { SystemService } from './services.ts'
import type { SpawnedService } from './spawned-service.ts'
import type { SystemHost } from './system-types.ts'

export interface Member {
  /** the service's name, or `<name>#<n>` for its n-th instance */
  key: string
  /** the release whose code it runs (SystemOptions.release); undefined once it runs this tree's */
  release?: string
  /** the first instance of a replicated service: its database and environment are this one's too */
  replicaOf?: Member
  service: SystemService
  consulName: string
  /** the host it runs on (a run across hosts) */
  host?: SystemHost
  port: number
  logFile: string
  env: NodeJS.ProcessEnv
  database?: RunDatabase
  process?: SpawnedService
}

/** A run's members by key, in the order they were assigned: each service's first instance, then its replicas. */
export type Members = Map<string, Member>

/** Where instance `instance` of the `index`-th service runs in a run across hosts; none on one machine. */
const hostOf = (hosts: SystemHost[], index: number, instance: number): SystemHost | undefined =>
  hosts.length === 0 ? undefined : hosts[(index + instance - 1) % hosts.length]

/** Gives each instance a port: the gateway's, a fixed one per service across hosts, else a free one not yet given. */
function portAssigner(hosts: SystemHost[], gatewayPort: number) {
  const taken = new Set<number>([gatewayPort])
  return async (service: SystemService, index = 0, instance = 1): Promise<number> => {
    // the first gateway on this machine has the run's address; across hosts each gateway has its host's
    if (service.isGateway && (instance === 1 || hosts.length > 0)) return gatewayPort
    // across hosts each host has ports of its own: a port per service, and one more set per round of the hosts
    if (hosts.length > 0) return 3100 + index + 100 * Math.floor((instance - 1) / hosts.length)
    for (;;) {
      const port = await freePort()
      if (!taken.has(port)) {
        taken.add(port)
        return port
      }
    }
  }
}

/**
 * The members of the plan's run: each service's first instance, then its other instances (SystemOptions.replicas),
 * each with its host and port; none started, their environments still empty.
 */
export async function assignMembers(plan: RunPlan): Promise<Members> {
  const { options, hosts, runId, runDir } = plan
  // ports first: every service is told where auth's keys are, and each keeps its port across restarts
  const portFor = portAssigner(hosts, plan.gatewayPort)
  const members: Members = new Map()
  for (const [index, service] of plan.services.entries()) {
    const firstHost = hostOf(hosts, index, 1)
    const first: Member = {
      key: service.name,
      service,
      consulName: `${service.name}-${runId}`,
      ...(firstHost ? { host: firstHost } : {}),
      port: await portFor(service, index, 1),
      logFile: join(runDir, `${service.name}.log`),
      env: {},
      ...(options.release ? { release: options.release.version } : {}),
    }
    members.set(first.key, first)
    // the gateway too: a second one on this machine listens on a port of its own (gatewayUrls lists both)
    const instances = options.replicas?.[service.name] ?? 1
    for (let instance = 2; instance <= instances; instance++) {
      const key = `${service.name}#${instance}`
      const host = hostOf(hosts, index, instance)
      members.set(key, {
        ...first,
        key,
        replicaOf: first,
        ...(host ? { host } : {}),
        port: await portFor(service, index, instance),
        logFile: join(runDir, `${service.name}-${instance}.log`),
      })
    }
  }
  return members
}

/** The address a member listens on: its host's, or this machine's loopback. */
export const addressOf = (member: Member): string => member.host?.address ?? '127.0.0.1'

/** Where a member is reached: `http://<address>:<port>`. */
export const baseUrlOf = (member: Member): string => `http://${addressOf(member)}:${member.port}`

/** the first instance of each service: one database, one Consul name, one route each */
export const firsts = (members: Members): Member[] =>
  [...members.values()].filter((member) => !member.replicaOf)

/** Every gateway instance, the first first. */
export const gatewaysOf = (members: Members): Member[] =>
  [...members.values()].filter((member) => member.service.isGateway)

/** The run's public address: its first gateway's, or where the gateway would listen. */
export function publicUrlOf(members: Members, gatewayPort: number): string {
  const [firstGateway] = gatewaysOf(members)
  return firstGateway ? baseUrlOf(firstGateway) : `http://127.0.0.1:${gatewayPort}`
}

/** The member of this key; throws, naming the others, when there is none. */
export function memberOf(members: Members, name: string): Member {
  const member = members.get(name)
  if (!member) throw new Error(`no service ${name} in this system (${[...members.keys()].join(', ')})`)
  return member
}
