// The process's tracing as the rest of the kit sees it: a handle, or undefined when tracing is off. This module loads
// nothing of the OpenTelemetry SDK, so that a service with tracing off never does.
import type { FastifyOtelInstrumentation } from '@fastify/otel'
import type { TracerProvider } from '@opentelemetry/sdk-trace'

/** Who the spans are from: known to the process only once its main has loaded its configuration and registered. */
export interface TracedService {
  name: string
  version?: string
}

export interface Tracing {
  readonly provider: TracerProvider
  /**
   * @fastify/otel's instrumentation, made once as tracing starts: each app registers its plugin. Made later, it would
   * install the require hook of its own copy of the instrumentation package after `loaded()` was prepared for.
   */
  readonly requestTracing: FastifyOtelInstrumentation
  /** which instrumentations are on (tracing.ts): undici's is what puts the trace context on outgoing calls */
  readonly instrumentations: 'all' | 'undici' | 'none'
  /** the service's name (unless OTEL_SERVICE_NAME) and version: spans wait for them before they are exported */
  identify(service: TracedService): void
  /** the instance id the process registered in Consul (else hostname-pid, given when it did not register) */
  registered(instanceId: string): void
  /**
   * The service's modules are loaded (its app is built): the require hook the instrumentations installed comes off.
   * Every module they patch was loaded, and patched in place, by then; the hook would otherwise resolve every later
   * require() again — kafkajs requires its protocol files on each fetch, commit and produce, ~12% of a busy
   * consumer's CPU under tracing (bench:tracing's profiles, 2026-11-26).
   */
  loaded(): void
  /** sends what has ended; bounded by timeoutMs */
  flush(timeoutMs?: number): Promise<void>
  /** flushes and stops: every instrumentation off, the global provider, propagator and context manager unset */
  shutdown(timeoutMs?: number): Promise<void>
}

/**
 * Where the active Tracing is kept: OpenTelemetry's own globals (tracer provider, propagator, context manager) are
 * process-wide, and the kit's modules may be loaded twice (the preload's bundle and the service's), so the handle is
 * a global under a registered symbol like theirs.
 */
export const tracingKey = Symbol.for('meridian.tracing')
export type TracingHolder = { [tracingKey]?: Tracing }

/** The probes and scrapes every service answers all day: no spans (they would drown the traces that matter). */
export function isOperationsPath(url: string | undefined): boolean {
  return url !== undefined && (url.startsWith('/health') || url.startsWith('/metrics'))
}

/** The process's tracing, or undefined when it is off (the usual case: then nothing of OpenTelemetry is loaded). */
export function activeTracing(): Tracing | undefined {
  return (globalThis as TracingHolder)[tracingKey]
}
