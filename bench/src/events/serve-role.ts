// What the writer, relay and consumer processes share: config and requests over IPC, CPU time, clean exit.
import type {
  ChildConfig,
  ChildMessage,
  CpuReply,
  Notice,
  ParentMessage,
  PrefillRequest,
  Request,
  RunRequest,
  StopReply,
} from './ipc.ts'

export interface RoleHandlers {
  /** writer: append events */
  run?(request: RunRequest): Promise<unknown>
  /** writer: fill the outbox ahead of the relay */
  prefill?(request: PrefillRequest): Promise<unknown>
  /** consumer, relay: hand over what was recorded since the last collect */
  collect?(): unknown
  /** writer: what the bench tells it while it runs */
  notice?(notice: Notice): void
  /** closes everything the role opened */
  close(): Promise<void>
}

export type StartRole = (config: ChildConfig, progress: (count: number) => void) => Promise<RoleHandlers>

// with a callback, a channel closed meanwhile (the bench went away) is ignored, not an 'error' event that crashes us
const send = (message: ChildMessage) => {
  if (process.connected) process.send?.(message, undefined, {}, () => {})
}
const describe = (error: unknown) => (error instanceof Error ? (error.stack ?? error.message) : String(error))

export function serveRole(start: StartRole): void {
  if (!process.send)
    throw new Error('this process is started by the events bench (src/events/main.ts), over IPC')

  let peakRss = process.memoryUsage.rss()
  const sampler = setInterval(() => {
    peakRss = Math.max(peakRss, process.memoryUsage.rss())
  }, 100)
  let handlers: RoleHandlers | undefined
  let closing: Promise<void> | undefined
  const close = () => {
    closing ??= (async () => {
      clearInterval(sampler)
      await handlers?.close()
    })()
    return closing
  }
  // once closed, whatever a client library left behind (timers, sockets) must not keep the process alive
  const leave = () => {
    process.disconnect()
    setTimeout(() => process.exit(0), 3000).unref()
  }

  const cpuMicros = () => {
    const { user, system } = process.cpuUsage()
    return user + system
  }

  const answer = async (request: Request): Promise<unknown> => {
    switch (request.kind) {
      case 'init':
        if (handlers) throw new Error('already started')
        handlers = await start(request.config, (count) => send({ type: 'progress', count }))
        return null
      case 'run':
        if (!handlers?.run) throw new Error('this process cannot run load')
        return handlers.run(request)
      case 'prefill':
        if (!handlers?.prefill) throw new Error('this process cannot prefill the outbox')
        return handlers.prefill(request)
      case 'collect':
        if (!handlers?.collect) throw new Error('this process records nothing to collect')
        return handlers.collect()
      case 'cpu':
        return { cpuMicros: cpuMicros() } satisfies CpuReply
      case 'stop':
        await close()
        return { cpuMicros: cpuMicros(), peakRssBytes: peakRss } satisfies StopReply
    }
  }

  process.on('message', (message: ParentMessage) => {
    if (message.type === 'notice') {
      handlers?.notice?.(message.notice)
      return
    }
    answer(message.request).then(
      (result) => {
        send({ type: 'reply', id: message.id, ok: true, result })
        if (message.request.kind === 'stop') leave()
      },
      (error: unknown) => {
        send({ type: 'reply', id: message.id, ok: false, message: describe(error) })
        if (message.request.kind === 'stop') leave()
      },
    )
  })
  // the bench ended without stopping us (crash, Ctrl-C): close and leave
  process.on('disconnect', () => {
    void close()
      .catch(() => {})
      .finally(() => setTimeout(() => process.exit(0), 3000).unref())
  })
}

/** Warnings and errors of the client libraries, one line each on stderr; debug and info dropped. */
export function stderrLogger(name: string) {
  const line = (level: string) => (obj: object, msg?: string) => {
    const err = (obj as { err?: unknown }).err
    process.stderr.write(
      `[bench:${name}] ${level}: ${msg ?? ''}${err instanceof Error ? ` (${err.message})` : ''}\n`,
    )
  }
  const quiet = () => {}
  return { debug: quiet, info: quiet, warn: line('warn'), error: line('error') }
}
