// @meridian/service-kit/tracing: starting tracing (the preload's, and tests'), which loads the OpenTelemetry SDK.

export type { ReadableSpan } from '@opentelemetry/sdk-trace'
export { recordSpans, type SpanRecorder } from './span-recorder.ts'
export { samplerOf, startTracing, type TracingOptions } from './tracing.ts'
