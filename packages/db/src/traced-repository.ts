// A repository whose every method is a span (db.system.name postgresql, the repository and method as its name) while
// a trace is active: postgres.js has no OpenTelemetry instrumentation, and a query is known best by its method.
import { type Span, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api'

/** Asked for at each span, not kept: a tracer kept across a restart of tracing (tests) would stay the old one. */
const tracer = () => trace.getTracer('@meridian/db')

type Method = (...args: never[]) => unknown

function recordFailure(span: Span, error: unknown): void {
  span.recordException(error instanceof Error ? error : String(error))
  span.setStatus({ code: SpanStatusCode.ERROR })
  span.end()
}

/**
 * The method wrapped: outside a trace, in a trace the sampler dropped, or with tracing off, it is called as it is, with
 * nothing allocated.
 */
function tracedMethod<Fn extends Method>(repository: string, name: string, method: Fn): Fn {
  const spanName = `${repository}.${name}`
  const wrapped = function (this: unknown, ...args: Parameters<Fn>): ReturnType<Fn> {
    // no parent, no span: queries of background rounds (the relay's polls) would each be a trace of one span; and
    // none under a parent the sampler dropped: its children are dropped with it (parent-based sampling, or a ratio of
    // the same trace id), and the context a query would pass on is that parent's anyway
    const parent = trace.getActiveSpan()
    if (parent === undefined || !parent.isRecording()) return method.apply(this, args) as ReturnType<Fn>
    return tracer().startActiveSpan(spanName, { kind: SpanKind.CLIENT }, (span) => {
      // never the arguments (customers' data); nothing at all for a span a sampler dropped
      if (span.isRecording()) {
        span.setAttributes({
          'db.system.name': 'postgresql',
          'db.operation.name': name,
          'meridian.repository': repository,
        })
      }
      let result: unknown
      try {
        result = method.apply(this, args)
      } catch (error) {
        recordFailure(span, error)
        throw error
      }
      // the caller gets the method's own promise (a postgres.js query keeps its methods); the span ends beside it
      if (result instanceof Promise) {
        result.then(
          () => span.end(),
          (error: unknown) => recordFailure(span, error),
        )
      } else span.end()
      return result as ReturnType<Fn>
    })
  }
  return wrapped as Fn
}

/**
 * The repository with each of its functions traced as `<name>.<method>` — one line where a service builds it:
 * `tracedRepository('orders', createOrdersRepository(sql))`. Other members are kept as they are.
 */
export function tracedRepository<Repository extends object>(
  name: string,
  repository: Repository,
): Repository {
  const traced: Record<string, unknown> = {}
  for (const [key, member] of Object.entries(repository)) {
    traced[key] = typeof member === 'function' ? tracedMethod(name, key, member as Method) : member
  }
  return traced as Repository
}
