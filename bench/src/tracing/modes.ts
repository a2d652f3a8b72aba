// The tracing modes the tracing bench compares: off (the SDK not even started), and traces exported over OTLP/HTTP to
// the trace store with parent-based ratio sampling at 10% and at 100% — set through the standard OTEL_* variables,
// as an operator sets them.
export interface TracingMode {
  name: 'off' | '10%' | '100%'
  /** the sampling ratio of a trace's root; undefined: tracing off */
  ratio?: number
}

export const tracingModes: TracingMode[] = [
  { name: 'off' },
  { name: '10%', ratio: 0.1 },
  { name: '100%', ratio: 1 },
]

/** The environment of a service (or the chassis server) in that mode. */
export function tracingEnv(mode: TracingMode, otlpEndpoint: string): Record<string, string> {
  // off: nothing inherited from a developer's shell (`eval "$(./scripts/infra env)"` exports the endpoint) starts it
  if (mode.ratio === undefined) return { OTEL_EXPORTER_OTLP_ENDPOINT: '', OTEL_SDK_DISABLED: 'true' }
  return {
    OTEL_EXPORTER_OTLP_ENDPOINT: otlpEndpoint,
    OTEL_SDK_DISABLED: 'false',
    OTEL_TRACES_SAMPLER: 'parentbased_traceidratio',
    OTEL_TRACES_SAMPLER_ARG: String(mode.ratio),
  }
}
