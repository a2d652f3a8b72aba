// What every benchmark's entry does around its work: undo steps run newest first however the run ends, Ctrl-C
// cleans up before leaving (a second Ctrl-C does not cut the cleanup short), and a failure is reported once.
import { constants } from 'node:os'

export interface UndoStep {
  label: string
  run: () => Promise<unknown>
}

export interface BenchLifecycle {
  /** what must be undone however the run ends; push each step as soon as there is something to undo */
  undo: UndoStep[]
  /** runs the benchmark, then the cleanup; sets a failing exit code when it throws */
  run(main: () => Promise<void>): Promise<void>
}

export function benchLifecycle(say: (message: string) => void, cleanedUp: string): BenchLifecycle {
  const undo: UndoStep[] = []
  let cleaning: Promise<void> | undefined
  const cleanUp = () => {
    cleaning ??= (async () => {
      for (const step of undo.reverse()) {
        await step.run().catch((error: unknown) => say(`cleanup: ${step.label} failed: ${String(error)}`))
      }
    })()
    return cleaning
  }
  let interrupted = false
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.on(signal, () => {
      say(interrupted ? 'still cleaning up' : `${signal}: cleaning up`)
      interrupted = true
      void cleanUp().finally(() => {
        say(cleanedUp)
        process.exit(128 + constants.signals[signal])
      })
    })
  }
  return {
    undo,
    async run(main) {
      try {
        await main()
      } catch (error) {
        process.exitCode = 1
        // once interrupted, processes going away under a run is expected, not a failure to report
        if (!interrupted)
          say(`failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`)
      } finally {
        await cleanUp()
        if (!interrupted) say(cleanedUp)
      }
    },
  }
}
