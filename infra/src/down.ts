// Stopping what `scripts/infra up` and `up --secure` started (`scripts/infra down`), or the trace store alone.
import { composeDown } from './docker.ts'
import { layoutFromEnv } from './layout.ts'
import { nativeJaeger } from './native/jaeger.ts'
import { components, type InfraOptions, nativeEngines, optionalComponents, planInfra } from './plan.ts'
import { downSecureEngines, secureStateDir } from './secure/machine.ts'
import { stderrProgress, withLock } from './up.ts'

/**
 * Stops what `up` and `up --secure` started natively (by recorded pid) or through compose; endpoints from the
 * environment are left alone.
 */
export async function infraDown(options: InfraOptions = {}): Promise<void> {
  const env = options.env ?? process.env
  const progress = options.progress ?? stderrProgress
  const layout = layoutFromEnv(env)
  const engines = nativeEngines(layout, env)
  const plan = await planInfra(env)
  await withLock(layout, progress, async () => {
    if (plan.some((p) => p.mode === 'docker')) await composeDown()
    // whatever the mode now, a native engine we started earlier is ours to stop
    await Promise.all(
      [...components, ...optionalComponents].map(async (name) => {
        const pid = engines[name].runningPid()
        const stopped = await engines[name].stop()
        progress(
          `${name}: ${stopped ? `stopped pid ${pid}` : 'was not running (not started by scripts/infra)'}`,
        )
      }),
    )
    await downSecureEngines(secureStateDir(env), progress)
  })
}

/** Stops the Jaeger `up` started natively from this cache folder (by its recorded pid); false when none runs. */
export async function stopTraceStore(options: Omit<InfraOptions, 'traceStore'> = {}): Promise<boolean> {
  const env = options.env ?? process.env
  const layout = layoutFromEnv(env)
  return withLock(layout, options.progress ?? stderrProgress, () => nativeJaeger(layout).stop())
}
