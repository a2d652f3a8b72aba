// OpenTelemetry for one service process: tracer provider, exporter, sampler, propagator, context manager and the
// instrumentations, set up once (tracing/preload.ts). Loaded only when tracing is on.
import { Module } from 'node:module'
import { hostname } from 'node:os'
import { FastifyOtelInstrumentation } from '@fastify/otel'
import { type Attributes, context, propagation, trace } from '@opentelemetry/api'
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks'
import { CompositePropagator, W3CTraceContextPropagator } from '@opentelemetry/core'
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto'
import { type Instrumentation, registerInstrumentations } from '@opentelemetry/instrumentation'
import { HttpInstrumentation } from '@opentelemetry/instrumentation-http'
import { IORedisInstrumentation } from '@opentelemetry/instrumentation-ioredis'
import { SocketIoInstrumentation } from '@opentelemetry/instrumentation-socket.io'
import { UndiciInstrumentation } from '@opentelemetry/instrumentation-undici'
import { resourceFromAttributes } from '@opentelemetry/resources'
import {
  AlwaysOffSampler,
  AlwaysOnSampler,
  BatchSpanProcessor,
  ParentBasedSampler,
  type Sampler,
  SimpleSpanProcessor,
  type SpanExporter,
  TraceIdRatioBasedSampler,
  TracerProvider,
} from '@opentelemetry/sdk-trace'
import {
  ATTR_SERVICE_NAME,
  ATTR_SERVICE_VERSION,
  ATTR_URL_FULL,
  ATTR_URL_PATH,
  ATTR_URL_QUERY,
} from '@opentelemetry/semantic-conventions'
import { loggableOutgoingPath } from '../logging.ts'
import {
  activeTracing,
  type TracedService,
  type Tracing,
  type TracingHolder,
  tracingKey,
} from './active-tracing.ts'
import { AllowedBaggagePropagator } from './allowed-baggage.ts'
import { requestTracingOptions } from './request-tracing.ts'
import {
  baggageKeysOf,
  batchSettingsOf,
  resourceAttributesOf,
  type TracingEnv,
  tracesEndpoint,
} from './tracing-env.ts'

/** The resource attribute of the instance (semantic conventions, still in the incubating set). */
const ATTR_SERVICE_INSTANCE_ID = 'service.instance.id'

export interface TracingOptions {
  config: TracingEnv
  /** where spans go; default OTLP HTTP/protobuf to the configured endpoint (tests pass an InMemorySpanExporter) */
  exporter?: SpanExporter
  /** batch (default: spans are sent in the background) or simple (each span handed over as it ends; tests) */
  processor?: 'batch' | 'simple'
  /** the service when already known (tests); a process tells it later with identify() and registered() */
  service?: TracedService & { instanceId?: string }
  /**
   * all (default): http, undici, ioredis and Socket.IO; undici: only undici's, which reads diagnostics channels and so
   * works whenever it is turned on (an in-process test's); none
   */
  instrumentations?: 'all' | 'undici' | 'none'
}

/** The sampler OTEL_TRACES_SAMPLER and OTEL_TRACES_SAMPLER_ARG name; default parent-based always-on. */
export function samplerOf(
  config: Pick<TracingEnv, 'OTEL_TRACES_SAMPLER' | 'OTEL_TRACES_SAMPLER_ARG'>,
): Sampler {
  const ratio = () => new TraceIdRatioBasedSampler(config.OTEL_TRACES_SAMPLER_ARG ?? 1)
  switch (config.OTEL_TRACES_SAMPLER) {
    case 'always_on':
      return new AlwaysOnSampler()
    case 'always_off':
      return new AlwaysOffSampler()
    case 'traceidratio':
      return ratio()
    case 'parentbased_always_off':
      return new ParentBasedSampler({ root: new AlwaysOffSampler() })
    case 'parentbased_traceidratio':
      return new ParentBasedSampler({ root: ratio() })
    default:
      return new ParentBasedSampler({ root: new AlwaysOnSampler() })
  }
}

/** A value given later, or its fallback once `fallbackAfterMs` has passed (so that spans are never held forever). */
function later<Value>(fallback: () => Value, fallbackAfterMs: number) {
  let settle!: (value: Value) => void
  const promise = new Promise<Value>((resolve) => {
    settle = resolve
  })
  setTimeout(() => settle(fallback()), fallbackAfterMs).unref()
  return { promise, settle }
}

/** How long spans wait for the service to name itself before they go out as `unknown_service:node`. */
const identityWaitMs = 60_000

/**
 * The URL attributes of an outgoing call whose path holds a secret (a route's secret path parameter, a secret query
 * parameter): as logs write it. None when nothing needs hiding (the instrumentation's own stand).
 */
function outgoingUrlAttributes(request: { origin: unknown; path: string }): Attributes {
  const logged = loggableOutgoingPath(request.path)
  if (logged === request.path) return {}
  let origin = String(request.origin)
  while (origin.endsWith('/')) origin = origin.slice(0, -1)
  const queryStart = logged.indexOf('?')
  return {
    [ATTR_URL_FULL]: `${origin}${logged}`,
    [ATTR_URL_PATH]: queryStart === -1 ? logged : logged.slice(0, queryStart),
    [ATTR_URL_QUERY]: queryStart === -1 ? '' : logged.slice(queryStart),
  }
}

/** Outgoing undici requests (the kit's upstream client, the gateway's proxy, fetch) inside a trace. */
const undiciInstrumentation = () =>
  new UndiciInstrumentation({ requireParentforSpans: true, startSpanHook: outgoingUrlAttributes })

/** The instrumentations the kit turns on: never kafkajs (the event backbone writes its own spans and headers). */
function kitInstrumentations(): Instrumentation[] {
  return [
    new HttpInstrumentation({
      // a request's span is @fastify/otel's, which takes the caller's trace context from the headers itself: an http
      // server span above it said nothing more and cost ~30% of tracing's CPU per request, sampled or not (its
      // attributes are computed before the sampler decides) — bench:tracing, 2026-11-26
      disableIncomingRequestInstrumentation: true,
      // calls made outside any trace (Consul's blocking watches, background rounds) would each be a trace of one span
      requireParentforOutgoingSpans: true,
    }),
    undiciInstrumentation(),
    new IORedisInstrumentation({ requireParentSpan: true }),
    // the live dashboard's figures go out every interval to whoever watches, outside any request: a trace of one
    // span each time would bury the traces that say something
    new SocketIoInstrumentation({ emitIgnoreEventList: ['metrics:update'] }),
  ]
}

/**
 * Turns tracing on for the process: the tracer provider (batching, OTLP HTTP/protobuf), W3C trace context and baggage
 * as the propagator, AsyncLocalStorage as the context manager, the instrumentations. Returns undefined, having done
 * nothing at all, when the configuration leaves tracing off. A second call returns the first one's Tracing.
 */
export function startTracing(options: TracingOptions): Tracing | undefined {
  const { config } = options
  const endpoint = tracesEndpoint(config)
  if (!options.exporter && endpoint === undefined) return undefined
  const existing = activeTracing()
  if (existing) return existing

  const given = options.service
  const name = later(() => 'unknown_service:node', identityWaitMs)
  const version = later<string | undefined>(() => undefined, identityWaitMs)
  const instance = later(() => `${hostname()}-${process.pid}`, identityWaitMs)
  if (given) {
    name.settle(given.name)
    version.settle(given.version)
    instance.settle(given.instanceId ?? `${hostname()}-${process.pid}`)
  }
  const resource = resourceFromAttributes({
    ...resourceAttributesOf(config.OTEL_RESOURCE_ATTRIBUTES),
    [ATTR_SERVICE_NAME]: config.OTEL_SERVICE_NAME ?? name.promise,
    [ATTR_SERVICE_VERSION]: version.promise,
    [ATTR_SERVICE_INSTANCE_ID]: instance.promise,
  })
  const exporter = options.exporter ?? new OTLPTraceExporter({ url: endpoint })
  const provider = new TracerProvider({
    resource,
    sampler: samplerOf(config),
    spanProcessors: [
      options.processor === 'simple'
        ? new SimpleSpanProcessor({ exporter })
        : new BatchSpanProcessor({ exporter, ...batchSettingsOf(config) }),
    ],
  })
  const contextManager = new AsyncLocalStorageContextManager().enable()
  context.setGlobalContextManager(contextManager)
  propagation.setGlobalPropagator(
    new CompositePropagator({
      propagators: [new W3CTraceContextPropagator(), new AllowedBaggagePropagator(baggageKeysOf(config))],
    }),
  )
  trace.setGlobalTracerProvider(provider)
  const chosen = options.instrumentations ?? 'all'
  const loadingBefore = moduleLoading()
  const unregister =
    chosen === 'none'
      ? () => {}
      : registerInstrumentations({
          tracerProvider: provider,
          instrumentations: chosen === 'all' ? kitInstrumentations() : [undiciInstrumentation()],
        })
  const requestTracing = new FastifyOtelInstrumentation(requestTracingOptions)
  const loadingHooked = moduleLoading()

  const bounded = (work: Promise<void>, timeoutMs: number) =>
    Promise.race([work, new Promise<void>((resolve) => setTimeout(resolve, timeoutMs).unref())])
  let stopping: Promise<void> | undefined
  const tracing: Tracing = {
    provider,
    requestTracing,
    instrumentations: chosen,
    identify(service) {
      name.settle(service.name)
      version.settle(service.version)
    },
    registered(instanceId) {
      instance.settle(instanceId)
    },
    loaded() {
      restoreModuleLoading(loadingBefore, loadingHooked)
    },
    flush: (timeoutMs = 5000) => bounded(provider.forceFlush({ timeoutMillis: timeoutMs }), timeoutMs),
    shutdown(timeoutMs = 5000) {
      stopping ??= (async () => {
        // the identity is settled first: spans still waiting for it would otherwise hold the flush until the bound
        name.settle('unknown_service:node')
        version.settle(undefined)
        instance.settle(`${hostname()}-${process.pid}`)
        unregister()
        requestTracing.disable()
        await bounded(provider.shutdown(), timeoutMs)
        trace.disable()
        propagation.disable()
        context.disable()
        delete (globalThis as TracingHolder)[tracingKey]
      })()
      return stopping
    },
  }
  ;(globalThis as TracingHolder)[tracingKey] = tracing
  return tracing
}

/** How modules are loaded now: what require-in-the-middle replaces when an instrumentation is registered. */
interface ModuleLoading {
  require: typeof Module.prototype.require
  getBuiltinModule: typeof process.getBuiltinModule
}

const moduleLoading = (): ModuleLoading => ({
  require: Module.prototype.require,
  getBuiltinModule: process.getBuiltinModule,
})

/**
 * Puts `before` back where `hooked` is still in place: the instrumentations' require hook comes off, and a hook
 * someone added after it (or nothing, when none was installed) is left as it is.
 */
function restoreModuleLoading(before: ModuleLoading, hooked: ModuleLoading): void {
  if (Module.prototype.require === hooked.require && hooked.require !== before.require)
    Module.prototype.require = before.require
  if (
    process.getBuiltinModule === hooked.getBuiltinModule &&
    hooked.getBuiltinModule !== before.getBuiltinModule
  )
    process.getBuiltinModule = before.getBuiltinModule
}
