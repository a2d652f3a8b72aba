// Each engine's health as `scripts/infra status` shows it, the machine's secure engines (`up --secure`) included.
import { containerOf } from './docker.ts'
import { layoutFromEnv } from './layout.ts'
import type { ComponentName, OptionalComponentName } from './native/engine.ts'
import {
  components,
  type EnginePlan,
  nativeEngines,
  optionalComponents,
  planInfra,
  planMail,
  planTraceStore,
  probeOf,
} from './plan.ts'
import { errorText } from './processes.ts'
import {
  runningSecureEngines,
  type SecureMachine,
  secureEndpoint,
  secureMachine,
  secureProbe,
  secureStateDir,
} from './secure/machine.ts'

export interface ComponentStatus extends EnginePlan {
  /** one of the machine's secure engines (`up --secure`: TLS and a credential per service), else plaintext */
  secure: boolean
  healthy: boolean
  /** the engine's own version while healthy, otherwise why it is not */
  detail: string
  /** pid (native) or container id (docker) */
  process?: string
}

/**
 * Each engine's health, the trace store and Mailpit included (`stopped` when one was not started: they are optional).
 */
export async function infraStatus(env: NodeJS.ProcessEnv = process.env): Promise<ComponentStatus[]> {
  const layout = layoutFromEnv(env)
  const engines = nativeEngines(layout, env)
  const plan: EnginePlan[] = [...(await planInfra(env)), await planTraceStore(env), await planMail(env)]
  const secure = await runningSecureMachine(env)
  return Promise.all(
    plan.map(async (component): Promise<ComponentStatus> => {
      if (secure && components.includes(component.name as ComponentName)) {
        const name = component.name as ComponentName
        const pid = secure.running[name]
        const shown = {
          name,
          mode: 'native' as const,
          endpoint: secureEndpoint(secure.machine, name),
          secure: true,
        }
        if (pid === undefined) return { ...shown, healthy: false, detail: 'stopped' }
        try {
          return {
            ...shown,
            healthy: true,
            detail: await secureProbe[name](secure.machine),
            process: String(pid),
          }
        } catch (error) {
          return { ...shown, healthy: false, detail: errorText(error), process: String(pid) }
        }
      }
      const engine = engines[component.name]
      const processId =
        component.mode === 'native'
          ? engine.runningPid()?.toString()
          : component.mode === 'docker'
            ? await containerOf(component.name)
            : undefined
      const optional = optionalComponents.includes(component.name as OptionalComponentName)
      if (!processId && (component.mode === 'native' || (component.mode === 'docker' && optional))) {
        return { ...component, secure: false, healthy: false, detail: 'stopped' }
      }
      try {
        const detail = component.mode === 'native' ? await engine.probe() : await probeOf(component, env)()
        return {
          ...component,
          secure: false,
          healthy: true,
          detail,
          ...(processId ? { process: processId } : {}),
        }
      } catch (error) {
        return {
          ...component,
          secure: false,
          healthy: false,
          detail: errorText(error),
          ...(processId ? { process: processId } : {}),
        }
      }
    }),
  )
}

/** The machine's secure engines while any of them runs (`up --secure`), with the pid of each that does. */
export async function runningSecureMachine(
  env: NodeJS.ProcessEnv = process.env,
): Promise<{ machine: SecureMachine; running: Partial<Record<ComponentName, number>> } | undefined> {
  const dir = secureStateDir(env)
  const running = runningSecureEngines(dir)
  if (Object.keys(running).length === 0) return undefined
  const machine = await secureMachine(dir)
  return machine ? { machine, running } : undefined
}
