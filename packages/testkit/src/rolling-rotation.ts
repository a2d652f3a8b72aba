// A secret rotated under traffic, as an operator rolls it (docs/how-to/rotating-secrets.md): instances of a service
// replaced one at a time with the next setting of a variable, and the secret's other side (a client, a carrier, the
// other instances) moved to the new secret at its step, while requests reach every live instance all along. Each
// instance stops only once every live one has been asked twice since its replacement started, whatever the machine's
// speed: the drill counts requests, never time.

/** One step: a rolling restart onto a setting of the variable, or the other side sending another secret. */
export type RotationStep = { instances: string } | { clientSends: string }

export interface RotationDrill<Instance> {
  /** the setting the instances start with, and the secret the other side sends first */
  initial: { instances: string; clientSends: string }
  /** how many instances run side by side (default 2) */
  replicas?: number
  /** an instance of the service with this setting of the variable, ready for requests */
  start(setting: string): Promise<Instance>
  stop(instance: Instance): Promise<void>
  /**
   * The requests of one visit to `target` (its peers are `live`) with `sent` as the other side's secret: what refused
   * each, or undefined for one that was accepted.
   */
  visit(target: Instance, live: readonly Instance[], sent: string): Promise<(string | undefined)[]>
}

export interface RotationOutcome {
  /** what refused a request, one entry per refused request */
  refused: string[]
  requests: number
}

/** Runs `steps` under traffic: the refused requests and how many were made. */
export async function rotateUnderTraffic<Instance>(
  drill: RotationDrill<Instance>,
  steps: readonly RotationStep[],
): Promise<RotationOutcome> {
  const started: Instance[] = []
  const start = async (setting: string) => {
    const instance = await drill.start(setting)
    started.push(instance)
    return instance
  }
  let live: Instance[] = []
  for (let index = 0; index < (drill.replicas ?? 2); index++) live.push(await start(drill.initial.instances))
  let sent = drill.initial.clientSends
  const refused: string[] = []
  let requests = 0
  let running = true
  const traffic = (async () => {
    while (running) {
      // the live instances as they are at each visit: a replaced one is not visited again
      for (let index = 0; index < live.length; index++) {
        const outcomes = await drill
          .visit(live[index] as Instance, live, sent)
          .catch((error: unknown) => [`threw: ${error instanceof Error ? error.message : String(error)}`])
        requests += outcomes.length
        for (const outcome of outcomes) if (outcome !== undefined) refused.push(outcome)
      }
      await new Promise((resolve) => setTimeout(resolve, 2))
    }
  })()
  const requestsMade = async (more: number) => {
    const until = requests + more
    while (requests < until) await new Promise((resolve) => setTimeout(resolve, 2))
  }
  const stopped = new Set<Instance>()
  try {
    for (const step of steps) {
      if ('clientSends' in step) {
        sent = step.clientSends
        await requestsMade(2 * live.length)
        continue
      }
      for (let index = 0; index < live.length; index++) {
        const replaced = live[index] as Instance
        const replacement = await start(step.instances)
        live = live.map((each) => (each === replaced ? replacement : each))
        await requestsMade(2 * live.length * live.length)
        stopped.add(replaced)
        await drill.stop(replaced)
      }
    }
  } finally {
    running = false
    await traffic
    for (const instance of started) if (!stopped.has(instance)) await drill.stop(instance)
  }
  return { refused, requests }
}
