// Undoing a run, whatever of it got done: its members stopped (the gateways first, auth last), what a kill left in
// Consul deregistered, its databases dropped, its Kafka namespace deleted, its simulator stopped; and the exit hook
// that takes the services down with a test runner that ends without close().
import type { WriteStream } from 'node:fs'
import type { PaymentSimulator } from '../payment-simulator/index.ts'
import { errorText, isAlive } from '../processes.ts'
import { deregisterInstance, instanceIds } from './consul-instances.ts'
import { deleteNamespace } from './kafka-namespace.ts'
import { stopMember } from './member-lifecycle.ts'
import { firsts, type Member, type Members } from './members.ts'
import type { RunPlan } from './run-plan.ts'
import { identityProvider } from './services.ts'

/** What a run has made so far beside its members, each undone by close() when it is there. */
export interface RunResources {
  topicsCreated: boolean
  simulator?: PaymentSimulator
  simulatorLog?: WriteStream
}

/** A step of the close: its failure is logged under `label`, and the close goes on. */
type Attempt = (label: string, step: () => Promise<unknown>) => Promise<void>

/**
 * Takes the members' processes down (SIGTERM) when this process exits without close(), rather than leave them
 * running. Returns what removes the hook.
 */
export function killOnExit(members: Members): () => void {
  const kill = () => {
    // the test runner ends without close(): take the services down with it rather than leave them running
    for (const member of members.values()) {
      if (member.process && isAlive(member.process.pid)) process.kill(member.process.pid, 'SIGTERM')
    }
  }
  process.on('exit', kill)
  return () => process.off('exit', kill)
}

/** Stops the members that run, group by group. */
async function stopInOrder(members: Members, attempt: Attempt): Promise<void> {
  // the gateway first (no new requests), then the rest at once, auth last (the others verify its tokens)
  const running = [...members.values()].filter((member) => member.process)
  const stopAll = (group: Member[]) =>
    Promise.all(group.map((member) => attempt(`stop ${member.key}`, () => stopMember(member))))
  await stopAll(running.filter((member) => member.service.isGateway))
  await stopAll(
    running.filter((member) => !member.service.isGateway && member.service.name !== identityProvider),
  )
  await stopAll(running.filter((member) => member.service.name === identityProvider))
}

/** Deregisters every instance left under the run's Consul names, at every agent. */
async function deregisterAll(plan: RunPlan, members: Members, attempt: Attempt): Promise<void> {
  const { consul, hosts } = plan
  // a service deregisters itself on SIGTERM; a killed one's registration is still there
  // (each agent holds its own host's registrations)
  const agents = hosts.length > 0 ? hosts.map((host) => ({ ...consul, address: host.consulAddr })) : [consul]
  for (const member of firsts(members)) {
    await attempt(`deregister ${member.consulName}`, async () => {
      for (const agent of agents)
        for (const id of await instanceIds(agent, member.consulName)) await deregisterInstance(agent, id)
    })
  }
}

/** The close itself: every step attempted in turn, its failure logged. */
async function closeRun(
  plan: RunPlan,
  members: Members,
  resources: RunResources,
  unhookExit: () => void,
): Promise<void> {
  const attempt: Attempt = async (label, step) => {
    try {
      await step()
    } catch (error) {
      plan.log(`close: ${label}: ${errorText(error)}`)
    }
  }
  await stopInOrder(members, attempt)
  unhookExit()
  await deregisterAll(plan, members, attempt)
  for (const member of firsts(members)) {
    const database = member.database
    if (database) await attempt(`drop database ${database.name}`, () => database.drop())
  }
  const { brokers, kafkaNamespace, kafkaSecurity } = plan
  if (resources.topicsCreated)
    await attempt(`delete Kafka namespace ${kafkaNamespace}`, () =>
      deleteNamespace(brokers, kafkaNamespace, kafkaSecurity),
    )
  const simulator = resources.simulator
  if (simulator) await attempt('stop the payment-provider simulator', () => simulator.close())
  resources.simulatorLog?.end()
  plan.log(`${plan.runId}: closed (logs in ${plan.runDir})`)
}

/**
 * The run's close(): undoes, in reverse order, whatever got done of the run (its members, `resources`), and removes
 * the exit hook (`unhookExit`) once the members are stopped. Called again, the same close.
 */
export function systemCloser(
  plan: RunPlan,
  members: Members,
  resources: RunResources,
  unhookExit: () => void,
): () => Promise<void> {
  let closing: Promise<void> | undefined
  return () => {
    closing ??= closeRun(plan, members, resources, unhookExit)
    return closing
  }
}
