// A tracing SDK for tests of trace propagation, as the service kit registers one: a tracer provider recording into
// memory, the AsyncLocalStorage context manager and the W3C propagator; removed again by uninstall().
import { context, propagation, type SpanContext, trace } from '@opentelemetry/api'
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks'
import { W3CTraceContextPropagator } from '@opentelemetry/core'
import {
  InMemorySpanExporter,
  type ReadableSpan,
  SimpleSpanProcessor,
  TracerProvider,
} from '@opentelemetry/sdk-trace'

export type { ReadableSpan }

export interface TestTracing {
  exporter: InMemorySpanExporter
  /** every span ended so far */
  spans(): ReadableSpan[]
  uninstall(): Promise<void>
}

/**
 * Registers the global tracer provider, context manager and propagator for this test file (each file runs in a
 * worker of its own); uninstall() in afterAll.
 */
export function installTestTracing(): TestTracing {
  const exporter = new InMemorySpanExporter()
  const provider = new TracerProvider({ spanProcessors: [new SimpleSpanProcessor({ exporter })] })
  trace.setGlobalTracerProvider(provider)
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable())
  propagation.setGlobalPropagator(new W3CTraceContextPropagator())
  return {
    exporter,
    spans: () => exporter.getFinishedSpans(),
    async uninstall() {
      trace.disable()
      context.disable()
      propagation.disable()
      await provider.shutdown()
    },
  }
}

/** The `traceparent` W3C writes for a sampled span context. */
export const traceparentOf = (spanContext: SpanContext): string =>
  `00-${spanContext.traceId}-${spanContext.spanId}-01`

/** The span's parent span id, or undefined for a root span. */
export const parentIdOf = (span: ReadableSpan): string | undefined => span.parentSpanContext?.spanId

/** The attribute value of a span, as a string. */
export const attributeOf = (span: ReadableSpan, name: string): string | undefined => {
  const value = span.attributes[name]
  return value === undefined ? undefined : String(value)
}
