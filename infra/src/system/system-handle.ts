// The handle of a started run (MeridianSystem): its names and addresses, its services' processes as they are now, and
// stop, kill, start, upgrade, migrate and logs of one service by name, and close.
import { readFileSync } from 'node:fs'
import type { PaymentSimulator } from '../payment-simulator/index.ts'
import { startMember, stopMember } from './member-lifecycle.ts'
import { baseUrlOf, gatewaysOf, type Member, type Members, memberOf, publicUrlOf } from './members.ts'
import type { RunPlan } from './run-plan.ts'
import { runServiceScript } from './spawned-service.ts'
import type { MeridianSystem, SystemServiceInfo } from './system-types.ts'

/** What the start-up made beside the members: the administrator, the simulator, and the run's close(). */
export interface StartedRun {
  admin: MeridianSystem['admin']
  simulator: PaymentSimulator
  close: () => Promise<void>
}

/** A member as the handle shows it, its process the current one. */
function serviceInfo(member: Member): SystemServiceInfo {
  return {
    name: member.service.name,
    pid: member.process?.pid,
    port: member.port,
    baseUrl: baseUrlOf(member),
    logFile: member.logFile,
    databaseUrl: (member.replicaOf ?? member).database?.url,
    consulName: member.consulName,
    host: member.host?.name,
    release: member.release,
  }
}

/** MeridianSystem.upgrade: a member started from the release, stopped and started again from the target's code. */
async function upgradeMember(plan: RunPlan, members: Members, name: string, graceMs: number): Promise<void> {
  const { target } = plan
  const member = memberOf(members, name)
  if (member.release === undefined) throw new Error(`${name} runs this tree's code already`)
  const current = plan.currentServices.find((service) => service.name === member.service.name)
  if (!current)
    throw new Error(`${name}: ${target.label} has no service ${member.service.name} to upgrade to`)
  await stopMember(member, 'SIGTERM', graceMs)
  member.service = current
  delete member.release
  await startMember(plan, member)
  plan.log(`${name}: moved from release ${plan.options.release?.version} to ${target.label}`)
}

/** MeridianSystem.migrate: the service's migrate script with a member's environment and code; what it printed. */
function migrateMember(
  plan: RunPlan,
  members: Members,
  name: string,
  args: readonly string[],
): Promise<string> {
  const member = memberOf(members, name)
  if (!(member.replicaOf ?? member).database) throw new Error(`${name} has no database to migrate`)
  return runServiceScript(member.service, 'migrate', args, {
    env: member.env,
    form: plan.form,
    ...(member.release !== undefined ? { imageTag: member.release } : {}),
  })
}

/** The handle of the plan's run, once its members have started. */
export function systemHandle(plan: RunPlan, members: Members, run: StartedRun): MeridianSystem {
  return {
    runId: plan.runId,
    form: plan.form,
    runDir: plan.runDir,
    kafkaNamespace: plan.kafkaNamespace,
    gatewayUrl: publicUrlOf(members, plan.gatewayPort),
    gatewayUrls: gatewaysOf(members).map(baseUrlOf),
    simulatorUrl: run.simulator.url,
    simulator: run.simulator,
    admin: run.admin,
    get services() {
      return Object.fromEntries(
        [...members.values()].map((member): [string, SystemServiceInfo] => [member.key, serviceInfo(member)]),
      )
    },
    stop: (name, signal = 'SIGTERM', graceMs = 15_000) =>
      stopMember(memberOf(members, name), signal, graceMs),
    kill: (name) => stopMember(memberOf(members, name), 'SIGKILL', 0),
    start: (name) => startMember(plan, memberOf(members, name)),
    upgrade: async (name, graceMs = 15_000) => upgradeMember(plan, members, name, graceMs),
    migrate: async (name, args = []) => migrateMember(plan, members, name, args),
    logs: (name) => {
      try {
        return readFileSync(memberOf(members, name).logFile, 'utf8')
      } catch {
        return ''
      }
    },
    close: run.close,
  }
}
