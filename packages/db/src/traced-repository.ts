// A repository whose every method is a span (db.system.name postgresql, the repository and method as its name) while
// a trace is active: postgres.js has no OpenTelemetry instrumentation, and a query is known best by its method.
import { type Span, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api'

const tracer = trace.getTracer('@meridian/db')

type Method = (...args: never[]) => unknown

function endWith(span: Span, error: unknown): never {
  span.recordException(error instanceof Error ? error : String(error))
  span.setStatus({ code: SpanStatusCode.ERROR })
  span.end()
  throw error
}

/** The method wrapped: outside a trace (or with tracing off) it is called as it is, with nothing allocated. */
function tracedMethod<Fn extends Method>(repository: string, name: string, method: Fn): Fn {
  const spanName = `${repository}.${name}`
  const wrapped = function (this: unknown, ...args: Parameters<Fn>): ReturnType<Fn> {
    // no parent, no span: queries of background rounds (the relay's polls) would each be a trace of one span
    if (trace.getActiveSpan() === undefined) return method.apply(this, args) as ReturnType<Fn>
    return tracer.startActiveSpan(
      spanName,
      {
        kind: SpanKind.CLIENT,
        // never the arguments: they are customers' data
        attributes: {
          'db.system.name': 'postgresql',
          'db.operation.name': name,
          'db.collection.name': repository,
        },
      },
      (span) => {
        let result: unknown
        try {
          result = method.apply(this, args)
        } catch (error) {
          endWith(span, error)
        }
        if (result instanceof Promise) {
          return result.then(
            (value: unknown) => {
              span.end()
              return value
            },
            (error: unknown) => endWith(span, error),
          ) as ReturnType<Fn>
        }
        span.end()
        return result as ReturnType<Fn>
      },
    )
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
