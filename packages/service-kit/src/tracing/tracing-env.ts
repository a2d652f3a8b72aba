// The standard OpenTelemetry variables the kit reads (opentelemetry.io's SDK configuration), as a TypeBox schema.
import { type Static, Type } from 'typebox'

const otlpEndpoint = {
  pattern: '^https?://[^\\s]+$',
  maxLength: 2000,
  expectation: 'must be an http:// or https:// URL',
}

/**
 * Tracing's variables, part of every service's ServiceEnv. Unset OTEL_EXPORTER_OTLP_ENDPOINT (and
 * OTEL_EXPORTER_OTLP_TRACES_ENDPOINT), or OTEL_SDK_DISABLED=true: tracing is off and nothing is loaded.
 */
export const TracingEnv = Type.Object({
  /** the collector's base address; traces go to <it>/v1/traces as OTLP HTTP/protobuf */
  OTEL_EXPORTER_OTLP_ENDPOINT: Type.Optional(Type.String(otlpEndpoint)),
  /** the full traces address, used as it is; wins over OTEL_EXPORTER_OTLP_ENDPOINT */
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: Type.Optional(Type.String(otlpEndpoint)),
  /** true: tracing off whatever the endpoints say */
  OTEL_SDK_DISABLED: Type.Boolean({ default: false }),
  /** the service.name spans carry; default the service's own name */
  OTEL_SERVICE_NAME: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
  /** further resource attributes, `key=value,key=value` (values percent-encoded) */
  OTEL_RESOURCE_ATTRIBUTES: Type.Optional(Type.String({ maxLength: 4096 })),
  /** the specification's samplers (the vendor ones aside); default parent-based always-on */
  OTEL_TRACES_SAMPLER: Type.Union(
    [
      Type.Literal('always_on'),
      Type.Literal('always_off'),
      Type.Literal('traceidratio'),
      Type.Literal('parentbased_always_on'),
      Type.Literal('parentbased_always_off'),
      Type.Literal('parentbased_traceidratio'),
    ],
    { default: 'parentbased_always_on' },
  ),
  /** the ratio of the traceidratio samplers, 0 to 1 (default 1) */
  OTEL_TRACES_SAMPLER_ARG: Type.Optional(Type.Number({ minimum: 0, maximum: 1 })),
  /** the batch processor: ms between two exports (the SDK's default 5000) */
  OTEL_BSP_SCHEDULE_DELAY: Type.Optional(Type.Integer({ minimum: 1, maximum: 600_000 })),
  /** the batch processor: ms an export may take before it is given up (default 30000) */
  OTEL_BSP_EXPORT_TIMEOUT: Type.Optional(Type.Integer({ minimum: 1, maximum: 600_000 })),
  /** the batch processor: spans held at most; more are dropped (default 2048) */
  OTEL_BSP_MAX_QUEUE_SIZE: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000 })),
  /** the batch processor: spans per export at most, at most the queue's size (default 512) */
  OTEL_BSP_MAX_EXPORT_BATCH_SIZE: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000 })),
  /**
   * The W3C baggage keys passed on, comma-separated (none by default): a caller's other entries are dropped where a
   * request comes in, never carried to the next service (a client's 8 KB of baggage once went everywhere).
   */
  TRACING_BAGGAGE_KEYS: Type.Optional(
    Type.String({
      pattern: "^[A-Za-z0-9!#$%&'*+.^_`|~-]*(,[A-Za-z0-9!#$%&'*+.^_`|~-]+)*$",
      maxLength: 1000,
    }),
  ),
})
export type TracingEnv = Static<typeof TracingEnv>

/** Where traces are sent, or undefined when tracing is off. */
export function tracesEndpoint(config: TracingEnv): string | undefined {
  if (config.OTEL_SDK_DISABLED) return undefined
  if (config.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) return config.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT
  if (config.OTEL_EXPORTER_OTLP_ENDPOINT)
    return `${withoutTrailingSlashes(config.OTEL_EXPORTER_OTLP_ENDPOINT)}/v1/traces`
  return undefined
}

/** The address without its trailing slashes (a loop: `/\/+$/` backtracks on a long run of slashes inside it). */
function withoutTrailingSlashes(url: string): string {
  let end = url.length
  while (end > 0 && url[end - 1] === '/') end -= 1
  return url.slice(0, end)
}

/**
 * OTEL_RESOURCE_ATTRIBUTES as attributes: `key=value` pairs separated by commas, values percent-decoded. A pair
 * without `=` or with an empty key is skipped, as the specification asks of a malformed entry.
 */
export function resourceAttributesOf(value: string | undefined): Record<string, string> {
  const attributes: Record<string, string> = {}
  if (!value) return attributes
  for (const pair of value.split(',')) {
    const separator = pair.indexOf('=')
    if (separator <= 0) continue
    const key = pair.slice(0, separator).trim()
    const raw = pair.slice(separator + 1).trim()
    if (!key) continue
    try {
      attributes[key] = decodeURIComponent(raw)
    } catch {
      attributes[key] = raw
    }
  }
  return attributes
}

/** The batch span processor's settings, as the OTEL_BSP_* variables give them (the SDK's defaults where unset). */
export interface BatchSettings {
  scheduledDelayMillis?: number
  exportTimeoutMillis?: number
  maxQueueSize?: number
  maxExportBatchSize?: number
}

/**
 * The batch span processor's settings from the specification's OTEL_BSP_* variables, which the SDK's processor does
 * not read by itself (it takes them as options only).
 */
export function batchSettingsOf(
  config: Pick<
    TracingEnv,
    | 'OTEL_BSP_SCHEDULE_DELAY'
    | 'OTEL_BSP_EXPORT_TIMEOUT'
    | 'OTEL_BSP_MAX_QUEUE_SIZE'
    | 'OTEL_BSP_MAX_EXPORT_BATCH_SIZE'
  >,
): BatchSettings {
  const settings: BatchSettings = {}
  if (config.OTEL_BSP_SCHEDULE_DELAY !== undefined)
    settings.scheduledDelayMillis = config.OTEL_BSP_SCHEDULE_DELAY
  if (config.OTEL_BSP_EXPORT_TIMEOUT !== undefined)
    settings.exportTimeoutMillis = config.OTEL_BSP_EXPORT_TIMEOUT
  if (config.OTEL_BSP_MAX_QUEUE_SIZE !== undefined) settings.maxQueueSize = config.OTEL_BSP_MAX_QUEUE_SIZE
  if (config.OTEL_BSP_MAX_EXPORT_BATCH_SIZE !== undefined)
    settings.maxExportBatchSize = config.OTEL_BSP_MAX_EXPORT_BATCH_SIZE
  return settings
}

/** The baggage keys a service passes on (TRACING_BAGGAGE_KEYS). */
export function baggageKeysOf(config: Pick<TracingEnv, 'TRACING_BAGGAGE_KEYS'>): string[] {
  return (config.TRACING_BAGGAGE_KEYS ?? '').split(',').filter(Boolean)
}
