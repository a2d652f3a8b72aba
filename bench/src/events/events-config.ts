// The events benchmark's knobs, from the environment (all optional): the only reader of process.env on its parent side.
import { integerKnob, positiveIntegerKnob } from '../knobs.ts'
export interface EventsBenchConfig {
  /** seconds of load before each measured window (the same load, not measured) */
  warmupSeconds: number
  /** seconds of each measured window */
  measureSeconds: number
  /** offered rate of the latency phases, events/s */
  rate: number
  /** writer connections (one transaction in flight on each) in every phase */
  connections: number
  /** partitions of each bench topic (the catalogue's topics have 3) */
  partitions: number
  /** partitions the consumer handles at once */
  concurrency: number
  /** the relay's poll interval, ms (the spec's 100) */
  pollIntervalMs: number
  /** distinct aggregate ids (message keys) the events are spread over */
  aggregates: number
  /**
   * max phases: the writers wait while this many events are appended and not yet handled, so they append only as fast
   * as the pipeline delivers and its backlog cannot grow; null (BENCH_EVENTS_MAX_BACKLOG=0): flat out, no bound
   */
  maxBacklog: number | null
  /** events put in the outbox before relay and consumer start, for the pipeline's own rate; 0 skips that phase */
  drainEvents: number
  /** PATH and the like, handed on to the child processes */
  inheritedEnv: NodeJS.ProcessEnv
}

export function loadEventsBenchConfig(env: NodeJS.ProcessEnv = process.env): EventsBenchConfig {
  const partitions = positiveIntegerKnob(env, 'BENCH_EVENTS_PARTITIONS', 3)
  return {
    warmupSeconds: positiveIntegerKnob(env, 'BENCH_EVENTS_WARMUP_SECONDS', 3),
    measureSeconds: positiveIntegerKnob(env, 'BENCH_EVENTS_SECONDS', 10),
    rate: positiveIntegerKnob(env, 'BENCH_EVENTS_RATE', 1000),
    connections: positiveIntegerKnob(env, 'BENCH_EVENTS_CONNECTIONS', 8),
    partitions,
    concurrency: positiveIntegerKnob(env, 'BENCH_EVENTS_CONCURRENCY', partitions),
    pollIntervalMs: 100,
    aggregates: 100,
    maxBacklog: integerKnob(env, 'BENCH_EVENTS_MAX_BACKLOG', 2000, 0) || null,
    drainEvents: integerKnob(env, 'BENCH_EVENTS_DRAIN_EVENTS', 20_000, 0),
    inheritedEnv: env,
  }
}
