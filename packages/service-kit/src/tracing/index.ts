// @meridian/service-kit/tracing: starting tracing (the preload's, and tests'), which loads the OpenTelemetry SDK.
export { recordSpans, type SpanRecorder } from './span-recorder.ts'
export { samplerOf, startTracing, type TracingOptions } from './tracing.ts'
