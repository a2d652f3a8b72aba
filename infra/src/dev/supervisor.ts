// The development runner's supervisor of one service (scripts/dev): what compose's `restart: on-failure` and
// Kubernetes' restartPolicy are to the images. A service is crash-only: a failure nothing handled ends it with a
// non-zero code after it drained (service-kit's run-service.ts), and this starts it again, after 1 s, doubling up to
// 30 s while it keeps failing within a minute of its start. A change under a watched folder restarts it at once
// (what `tsx watch` did, which waits for a change after a crash instead). TERM or INT stops it: the service gets TERM
// once, drains, and this exits with its code.
//
//   tsx infra/src/dev/supervisor.ts --name order --watch services/order/src --watch packages -- <command> [args...]
import { type ChildProcess, spawn } from 'node:child_process'
import { type FSWatcher, watch } from 'node:fs'

export interface SupervisorOptions {
  name: string
  command: string
  args: string[]
  /** folders whose changes restart the service (node_modules, dist and dot-folders inside them are ignored) */
  watch: string[]
  /** the first wait before a restart, ms; doubled while the service keeps failing */
  firstBackoffMs?: number
  maxBackoffMs?: number
  /** a service that ran this long before failing starts again after the first wait */
  healthyAfterMs?: number
  say?: (line: string) => void
}

export interface Supervisor {
  /** TERM to the service, once; resolves with its exit code when it has exited */
  stop(): Promise<number>
  /** how many times the service was started */
  readonly starts: number
}

const ignored = /(^|\/)(node_modules|dist|build|\.[^/]+)(\/|$)/

export function supervise(options: SupervisorOptions): Supervisor {
  const firstBackoffMs = options.firstBackoffMs ?? 1000
  const maxBackoffMs = options.maxBackoffMs ?? 30_000
  const healthyAfterMs = options.healthyAfterMs ?? 60_000
  const say = options.say ?? ((line: string) => process.stderr.write(`[supervisor] ${line}\n`))
  let child: ChildProcess | undefined
  let startedAt = 0
  let backoffMs = firstBackoffMs
  let stopping: Promise<number> | undefined
  let restartForChange = false
  let pending: NodeJS.Timeout | undefined
  let starts = 0
  let lastCode = 0

  function start(): void {
    pending = undefined
    starts++
    startedAt = Date.now()
    const started = spawn(options.command, options.args, { stdio: 'inherit' })
    child = started
    started.on('exit', (code, signal) => onExit(started, code ?? (signal ? 128 : 1), signal))
  }

  function onExit(exited: ChildProcess, code: number, signal: NodeJS.Signals | null): void {
    if (exited !== child) return
    child = undefined
    lastCode = code
    if (stopping) return
    if (restartForChange) {
      restartForChange = false
      backoffMs = firstBackoffMs
      start()
      return
    }
    if (code === 0 && signal === null) {
      say(`${options.name} exited; it starts again when a watched file changes`)
      return
    }
    if (Date.now() - startedAt >= healthyAfterMs) backoffMs = firstBackoffMs
    say(
      `${options.name} ended (${signal ?? `code ${code}`}); starting it again in ${backoffMs / 1000} s (start ${starts + 1})`,
    )
    pending = setTimeout(start, backoffMs)
    backoffMs = Math.min(backoffMs * 2, maxBackoffMs)
  }

  let debounce: NodeJS.Timeout | undefined
  function onChange(file: string | null): void {
    if (stopping || (file !== null && ignored.test(file))) return
    clearTimeout(debounce)
    debounce = setTimeout(() => {
      if (stopping) return
      if (pending) {
        // waiting out a failure: a change is what the developer did about it
        clearTimeout(pending)
        backoffMs = firstBackoffMs
        start()
      } else if (child) {
        say(`${options.name}: a file changed; restarting it`)
        restartForChange = true
        child.kill('SIGTERM')
      } else {
        start()
      }
    }, 200)
  }
  const watchers: FSWatcher[] = options.watch.map((folder) =>
    watch(folder, { recursive: true }, (_event, file) => onChange(file)),
  )

  start()
  return {
    get starts() {
      return starts
    },
    stop() {
      stopping ??= new Promise<number>((resolve) => {
        for (const watcher of watchers) watcher.close()
        clearTimeout(debounce)
        clearTimeout(pending)
        const running = child
        if (!running) return resolve(lastCode)
        running.once('exit', (code, signal) => resolve(code ?? (signal ? 128 : 1)))
        running.kill('SIGTERM')
      })
      return stopping
    },
  }
}

function parseArguments(argv: string[]): SupervisorOptions {
  const separator = argv.indexOf('--')
  if (separator < 0 || separator === argv.length - 1) {
    throw new Error('usage: supervisor.ts --name <service> [--watch <folder>]... -- <command> [args...]')
  }
  const [command, ...args] = argv.slice(separator + 1) as [string, ...string[]]
  const flags = argv.slice(0, separator)
  const watched: string[] = []
  let name = command
  for (let index = 0; index < flags.length; index += 2) {
    const value = flags[index + 1]
    if (value === undefined) throw new Error(`${flags[index]} needs a value`)
    if (flags[index] === '--name') name = value
    else if (flags[index] === '--watch') watched.push(value)
    else throw new Error(`unknown option ${flags[index]}`)
  }
  return { name, command, args, watch: watched }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const supervisor = supervise(parseArguments(process.argv.slice(2)))
  const stop = () => {
    void supervisor.stop().then((code) => process.exit(code))
  }
  process.once('SIGTERM', stop)
  process.once('SIGINT', stop)
}
