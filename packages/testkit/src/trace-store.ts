// The development trace store (Jaeger) for tests: brought up or reused as `scripts/infra up` does, read through its
// query API, and left as it was found (running for a developer's ./scripts/dev, stopped if this run started it).
import {
  ensureTraceStore,
  holdTraceStore,
  infraEnv,
  nativeJaegerUiUrl,
  stopTraceStore,
} from '@meridian/infra'

export interface StoredSpan {
  traceID: string
  spanID: string
  operationName: string
  processID: string
  references: { refType: string; traceID: string; spanID: string }[]
  tags: { key: string; value: unknown }[]
}

export interface StoredTrace {
  traceID: string
  spans: StoredSpan[]
  processes: Record<string, { serviceName: string; tags: { key: string; value: unknown }[] }>
}

export interface TraceStore {
  /** where services send spans: their OTEL_EXPORTER_OTLP_ENDPOINT */
  otlpEndpoint: string
  /**
   * the traces Jaeger holds with a span of `service` (its service.name), newest first; with `tags`, only those with a
   * span of the service carrying each of them (`{ 'meridian.request_id': id }`)
   */
  tracesOf(service: string, tags?: Record<string, string>): Promise<StoredTrace[]>
  /** stops Jaeger if this store started it, and lets the next test that uses it go */
  release(): Promise<void>
}

/** The environment the engines are looked up in: native, without an OTLP endpoint given from outside. */
function nativeEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, MERIDIAN_INFRA: 'native' }
  delete env.OTEL_EXPORTER_OTLP_ENDPOINT
  return env
}

/**
 * Jaeger up (built into the cache on first use: minutes), its OTLP endpoint and query API — held by this test until
 * `release()`: the tests of every workspace that use it take turns (holdTraceStore), so that none stops it under
 * another.
 */
export async function useTraceStore(): Promise<TraceStore> {
  const env = nativeEnv()
  const letGo = await holdTraceStore()
  let runningBefore: boolean
  let otlpEndpoint: string
  try {
    runningBefore = (await infraEnv(env)).includes('OTEL_EXPORTER_OTLP_ENDPOINT')
    otlpEndpoint = await ensureTraceStore({ env, progress: () => {} })
  } catch (error) {
    letGo()
    throw error
  }
  return {
    otlpEndpoint,
    async tracesOf(service, tags) {
      const query = new URLSearchParams({ service, limit: '20', lookback: '1h' })
      if (tags) query.set('tags', JSON.stringify(tags))
      const url = `${nativeJaegerUiUrl}/api/traces?${query}`
      const response = await fetch(url, { signal: AbortSignal.timeout(5000) })
      // Jaeger answers 404 (or an error list) for a service it has not seen yet
      if (response.status !== 200) return []
      const { data } = (await response.json()) as { data?: StoredTrace[] | null }
      return data ?? []
    },
    async release() {
      try {
        if (!runningBefore) await stopTraceStore({ env, progress: () => {} })
      } finally {
        letGo()
      }
    },
  }
}
