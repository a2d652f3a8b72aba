// The whole Meridian system as real processes in a namespace of its own (@meridian/infra/system): the payment-provider
// simulator, auth, every other service of services/, then the gateway, each with a fresh database, the run's Kafka
// namespace and Consul names, and a log file. For end-to-end tests, fault runs and benchmarks; stopped, killed and
// restarted one by one by the pids it recorded, and undone by close().
import type { PaymentSimulator } from '../payment-simulator/index.ts'
import { errorText } from '../processes.ts'
import { createNamespaceTopics } from './kafka-namespace.ts'
import { prepareMembers, productionEnv, sharedEnvOf } from './member-env.ts'
import { startMembers } from './member-lifecycle.ts'
import { assignMembers, publicUrlOf } from './members.ts'
import { planRun } from './run-plan.ts'
import { startRunSimulator } from './run-simulator.ts'
import { killOnExit, type RunResources, systemCloser } from './system-close.ts'
import { systemHandle } from './system-handle.ts'
import type { MeridianSystem, SystemOptions } from './system-types.ts'

export { secureServiceEnv, systemSettings, withoutEngineCredentials } from './member-env.ts'
export { developmentWebhookSecret, paymentWebhookPath } from './run-simulator.ts'
export type {
  MeridianSystem,
  SystemCluster,
  SystemHost,
  SystemOptions,
  SystemServiceInfo,
} from './system-types.ts'

/**
 * Starts the whole system as the options ask (SystemOptions): plans the run and its members, makes its Kafka
 * namespace, starts the simulator, gives each member its environment and database, starts the members in order and
 * returns their handle. A failure once the members are assigned undoes what got done (close()) before it is thrown.
 */
export async function startSystem(options: SystemOptions = {}): Promise<MeridianSystem> {
  const started = Date.now()
  const plan = await planRun(options)
  const { runId, runDir } = plan
  const members = await assignMembers(plan)
  // undone in reverse order by close(), whatever got done
  const resources: RunResources = { topicsCreated: false }
  const close = systemCloser(plan, members, resources, killOnExit(members))
  let simulator: PaymentSimulator
  let admin: MeridianSystem['admin']
  try {
    await createNamespaceTopics(
      plan.brokers,
      plan.kafkaNamespace,
      options.topicReplication,
      plan.kafkaSecurity,
    )
    resources.topicsCreated = true
    const publicUrl = publicUrlOf(members, plan.gatewayPort)
    const production = productionEnv(plan, publicUrl)
    simulator = await startRunSimulator(plan, members, publicUrl, production, resources)
    await prepareMembers(plan, members, sharedEnvOf(plan, members, publicUrl, production, simulator.url))
    admin = await startMembers(plan, members)
  } catch (error) {
    await close()
    throw new Error(`the system did not start: ${errorText(error)}\nlogs: ${runDir}`)
  }
  plan.log(
    `${runId}: ${members.size} services up in ${((Date.now() - started) / 1000).toFixed(1)} s (logs in ${runDir})`,
  )
  return systemHandle(plan, members, { admin, simulator, close })
}
