// Reading the benchmarks' knobs from the environment: integers with a floor, a fallback when unset.
export function integerKnob(env: NodeJS.ProcessEnv, name: string, fallback: number, least: number): number {
  const raw = env[name]
  if (raw === undefined || raw === '') return fallback
  const value = Number(raw)
  if (!Number.isInteger(value) || value < least)
    throw new Error(`${name} must be an integer of at least ${least} (got '${raw}')`)
  return value
}

export const positiveIntegerKnob = (env: NodeJS.ProcessEnv, name: string, fallback: number): number =>
  integerKnob(env, name, fallback, 1)
