// Tracing on for a test, in process: every span kept in memory as it ends, read back by name; stopped after.
import { InMemorySpanExporter, type ReadableSpan } from '@opentelemetry/sdk-trace'
import type { Tracing } from './active-tracing.ts'
import { startTracing } from './tracing.ts'
import type { TracingEnv } from './tracing-env.ts'

export interface SpanRecorder {
  readonly tracing: Tracing
  /** the spans ended so far, oldest first */
  spans(): ReadableSpan[]
  /** the first ended span of that name */
  span(name: string): ReadableSpan | undefined
  /** forgets the spans ended so far */
  clear(): void
  /** tracing off again, as it was before */
  stop(): Promise<void>
}

/**
 * Starts tracing with an in-memory exporter, each span handed over as it ends. The instrumentations that patch
 * modules are left off (the test has loaded them already); undici's (a diagnostics channel) is the kit's to add.
 */
export function recordSpans(
  config: Partial<TracingEnv> = {},
  service: { name: string; version?: string } = { name: 'test' },
): SpanRecorder {
  const exporter = new InMemorySpanExporter()
  const tracing = startTracing({
    config: { OTEL_SDK_DISABLED: false, OTEL_TRACES_SAMPLER: 'parentbased_always_on', ...config },
    exporter,
    processor: 'simple',
    service,
    instrumentations: 'undici',
  })
  if (!tracing) throw new Error('tracing did not start')
  return {
    tracing,
    spans: () => exporter.getFinishedSpans(),
    span: (name) => exporter.getFinishedSpans().find((span) => span.name === name),
    clear: () => exporter.reset(),
    stop: () => tracing.shutdown(1000),
  }
}
