// Event metrics, registered on the service's own prom-client registry (the chassis' /metrics shows them).
import { Counter, Gauge, Registry } from 'prom-client'

export interface EventMetrics {
  published: Counter<'topic'>
  consumed: Counter<'topic' | 'group'>
  retried: Counter<'topic' | 'group' | 'attempt'>
  deadLettered: Counter<'topic' | 'group'>
  /** unpublished outbox rows */
  outboxPending: Gauge
  /** age of the oldest unpublished outbox row, seconds (0 when empty) */
  outboxLagSeconds: Gauge
}

/** One set per registry: a second call with the same registry returns the metrics already there. */
const byRegistry = new WeakMap<Registry, EventMetrics>()

export function createEventMetrics(registry: Registry = new Registry()): EventMetrics {
  const existing = byRegistry.get(registry)
  if (existing) return existing
  const registers = [registry]
  const metrics: EventMetrics = {
    published: new Counter({
      name: 'events_published_total',
      help: 'events published to Kafka',
      labelNames: ['topic'],
      registers,
    }),
    consumed: new Counter({
      name: 'events_consumed_total',
      help: 'events whose handler committed',
      labelNames: ['topic', 'group'],
      registers,
    }),
    retried: new Counter({
      name: 'events_retried_total',
      help: 'events sent to a retry topic',
      labelNames: ['topic', 'group', 'attempt'],
      registers,
    }),
    deadLettered: new Counter({
      name: 'events_dead_lettered_total',
      help: 'events sent to a dead-letter topic (each raises an alert)',
      labelNames: ['topic', 'group'],
      registers,
    }),
    outboxPending: new Gauge({ name: 'outbox_pending_rows', help: 'unpublished outbox rows', registers }),
    outboxLagSeconds: new Gauge({
      name: 'outbox_lag_seconds',
      help: 'age of the oldest unpublished outbox row',
      registers,
    }),
  }
  byRegistry.set(registry, metrics)
  return metrics
}
