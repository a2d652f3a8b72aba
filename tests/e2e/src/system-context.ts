// What the global setup hands every test file: inject('system') is typed wherever this module is imported.
export interface E2eSystem {
  runId: string
  runDir: string
  gatewayUrl: string
  /** the payment-provider simulator: tokens for test cards, and per order what was charged and refunded */
  simulatorUrl: string
  admin: { email: string; password: string }
  /**
   * the broker the run uses, the prefix of its topics and groups (KAFKA_NAMESPACE), and the administrator's Kafka
   * variables (KAFKA_BROKERS, and KAFKA_TLS* and KAFKA_SASL_* on secure engines: kafkaClientOfEnv takes them)
   */
  kafka: { brokers: string; namespace: string; env: Record<string, string> }
  /** the run's Redis as the administrator reaches it: REDIS_URL on the run's database number, REDIS_TLS_CA when secure */
  redisEnv: Record<string, string>
  /** whether the engines are the run's own secure ones (MERIDIAN_E2E_SECURE=true) */
  secureEngines: boolean
  /**
   * where the services send their traces (OTLP/HTTP), and the trace store's query API (Jaeger's, read by
   * test/tracing.test.ts; JAEGER_QUERY_URL when OTEL_EXPORTER_OTLP_ENDPOINT names a store of your own)
   */
  traces: { otlpEndpoint: string; queryUrl: string }
  /** name -> where its process runs and logs (the pid as at the start) */
  services: Record<
    string,
    { pid?: number; port: number; baseUrl: string; logFile: string; databaseUrl?: string }
  >
}

declare module 'vitest' {
  export interface ProvidedContext {
    system: E2eSystem
  }
}
