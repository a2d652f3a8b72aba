// What an instance is doing at any moment: the request, the batch of messages or the realtime event whose code is
// running, kept in an AsyncLocalStorage that every callback started from it inherits (a timer, a stream's handler, a
// promise nobody awaited). When such a callback throws or rejects past every handler, the process ends (crash-only:
// run-service.ts drains and exits non-zero, and its supervisor starts it again); the fatal line names this work, so
// the one request or message that did it can be found, and refused, before it ends the next instance too.
import { AsyncLocalStorage } from 'node:async_hooks'
import type { FastifyInstance, FastifyRequest } from 'fastify'

/**
 * A unit of work: one HTTP request, one batch of a consumer (the event backbone runs each batch with the app's
 * `withWork` decorator), one realtime event or message of a connection.
 */
export type Work =
  | { kind: 'request'; requestId: string; method: string; route: string }
  | { kind: 'messages'; consumer: string; topic: string; partition: number; offsets: string }
  | { kind: 'realtime'; transport: 'socket.io' | 'ws'; event: string; connection: string; userId?: string }

const storage = new AsyncLocalStorage<Work>()

/** Runs `fn` as `work`: anything it starts, awaited or not, is that work's. */
export const withWork = <Result>(work: Work, fn: () => Result): Result => storage.run(work, fn)

/** The work whose code is running now; undefined outside any (a start, a timer of the instance's own). */
export const currentWork = (): Work | undefined => storage.getStore()

/** The fields a log line gives the work: the request id at the top, where every request's line has it. */
export function workLogFields(work: Work | undefined): Record<string, unknown> {
  if (work === undefined) return {}
  if (work.kind === 'request') return { requestId: work.requestId, during: work }
  return { during: work }
}

const works = new WeakMap<FastifyRequest, Work>()

/**
 * Every request runs as its work from onRequest on. A body arrives on the socket's own callbacks, outside the request's
 * context: preValidation enters the request's work again, so the handler and what it starts are the request's too.
 * Only this store is entered each time (never a whole saved context, which would undo the request span that tracing's
 * own hook makes active after this one).
 */
export function registerWorkContext(app: FastifyInstance): void {
  // for what the app runs beside its requests (the event backbone's consumers run each batch with it)
  app.decorate('withWork', withWork)
  app.addHook('onRequest', (request, _reply, done) => {
    const route = request.routeOptions.url ?? 'unmatched'
    const work: Work = { kind: 'request', requestId: request.id, method: request.method, route }
    works.set(request, work)
    withWork(work, done)
  })
  app.addHook('preValidation', (request, _reply, done) => {
    const work = works.get(request)
    if (work) withWork(work, done)
    else done()
  })
}
