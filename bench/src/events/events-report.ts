// The events figures as a table, the maximum sustained rate of each mode and the verdicts against the issue's aims.
import type { PhaseFigures } from './figures.ts'

/** notify: the relay LISTENs and wakes on each commit; poll: it only polls */
export type Mode = 'notify' | 'poll'
/** paced: the offered rate of the latency phases; max: writers as fast as they go (within the backlog bound) */
export type Load = 'paced' | 'max'

export interface PhaseResult {
  mode: Mode
  load: Load
  /** the rate asked for (paced), or null (max) */
  targetRate: number | null
  /** max: the writers wait while this many events are appended and not yet handled; null: no bound */
  maxBacklog: number | null
  figures: PhaseFigures
  /** CPU time each process spent in the measured window, ms (NaN when it could not be read) */
  windowCpuMs: { writer: number; relay: number; consumer: number }
  /** share of the whole machine's CPU time that was busy in the measured window, 0 to 1 */
  machineBusy: number
}

/** The pipeline alone: relay and consumer emptying an outbox filled before they started, no writer running. */
export interface DrainResult {
  events: number
  /** rows Kafka acknowledged per second, between 10% and 90% of them */
  publishedPerSecond: number
  /** handler calls per second, between 10% and 90% of them */
  deliveredPerSecond: number
  /** events handled when the figures were taken (all of them, unless the drain timed out) */
  delivered: number
  /** share of the machine's CPU time that was busy from the relay's start to the end of the drain, 0 to 1 */
  machineBusy: number
}

/** The aims of the issue (events backbone, "Done when"). */
export const aims = { p99Ms: 25, atRate: 1000, sustainedPerSecond: 5000 } as const

export interface Sustained {
  mode: Mode
  eventsPerSecond: number
  /**
   * pipeline: relay and consumer were the limit, so this is what they deliver with work always waiting (the backlog
   * stayed near its bound, or, unbounded, grew); writers: the backlog stayed low, so the pipeline can do at least this
   * much and the writers were the limit
   */
  boundBy: 'pipeline' | 'writers'
  /** the backlog did not grow over the window (always, when the writers were bounded by it) */
  keptUp: boolean
  backlogGrowth: number
  meanBacklog: number
}

/** A bounded run saturated the pipeline when its backlog averaged at least half the bound. */
export function boundByOf(result: PhaseResult): Sustained['boundBy'] {
  if (result.maxBacklog === null) return result.figures.keepsUp ? 'writers' : 'pipeline'
  return result.figures.meanBacklog >= result.maxBacklog / 2 ? 'pipeline' : 'writers'
}

export function sustainedOf(results: PhaseResult[]): Sustained[] {
  return results
    .filter((result) => result.load === 'max')
    .map((result) => ({
      mode: result.mode,
      eventsPerSecond: result.figures.deliveredPerSecond,
      boundBy: boundByOf(result),
      keptUp: result.figures.keepsUp,
      backlogGrowth: result.figures.backlog.end - result.figures.backlog.start,
      meanBacklog: result.figures.meanBacklog,
    }))
}

const whole = (value: number) => Math.round(value).toLocaleString('en-US')
const ms = (value: number) => value.toFixed(1)

/** The latency figures mean something only when every event of the window reached the handler. */
const latencyCells = (figures: PhaseFigures) =>
  figures.undelivered === 0 && figures.latency.count > 0
    ? [ms(figures.latency.p50Ms), ms(figures.latency.p99Ms), ms(figures.latency.maxMs)]
    : ['-', '-', '-']

export function formatEventsTable(results: PhaseResult[]): string {
  const header = [
    'mode',
    'load',
    'offered/s',
    'published/s',
    'delivered/s',
    'p50 ms',
    'p99 ms',
    'max ms',
    'backlog start>end',
    'keeps up',
    'CPU busy',
  ]
  const rows = results.map((r) => [
    r.mode,
    r.load === 'paced' ? `${whole(r.targetRate ?? 0)}/s` : 'max',
    whole(r.figures.offeredPerSecond),
    whole(r.figures.publishedPerSecond),
    whole(r.figures.deliveredPerSecond),
    ...latencyCells(r.figures),
    `${whole(r.figures.backlog.start)}>${whole(r.figures.backlog.end)}`,
    r.figures.keepsUp ? 'yes' : 'no',
    `${Math.round(r.machineBusy * 100)}%`,
  ])
  const widths = header.map((title, column) =>
    Math.max(title.length, ...rows.map((row) => row[column]!.length)),
  )
  // text columns left-aligned, figures right-aligned
  const line = (cells: string[]) =>
    cells
      .map((cell, column) =>
        column < 2 || column === header.length - 2
          ? cell.padEnd(widths[column]!)
          : cell.padStart(widths[column]!),
      )
      .join('  ')
      .trimEnd()
  return [line(header), line(widths.map((width) => '-'.repeat(width))), ...rows.map(line)].join('\n')
}

export function formatDrain(drain: DrainResult | undefined): string {
  if (!drain) return 'pipeline alone: not measured'
  const incomplete = drain.delivered < drain.events ? ` (only ${whole(drain.delivered)} handled in time)` : ''
  return (
    `pipeline alone (${whole(drain.events)} events in the outbox before relay and consumer start, no writers): ` +
    `published ${whole(drain.publishedPerSecond)}/s, delivered ${whole(drain.deliveredPerSecond)}/s, ` +
    `CPU busy ${Math.round(drain.machineBusy * 100)}%${incomplete}`
  )
}

export function formatSustained(sustained: Sustained[], maxBacklog: number | null): string {
  const parts = sustained.map((s) => {
    const held = `backlog ~${whole(s.meanBacklog)}${maxBacklog === null ? '' : ` of at most ${whole(maxBacklog)}`}`
    if (s.boundBy === 'writers')
      return `${s.mode} >= ${whole(s.eventsPerSecond)} (${held}: the writers were the limit)`
    return s.keptUp
      ? `${s.mode} ${whole(s.eventsPerSecond)} (${held}: work always waiting)`
      : `${s.mode} ${whole(s.eventsPerSecond)} (backlog grew by ${whole(s.backlogGrowth)}: overloaded)`
  })
  return `max sustained events/s: ${parts.length > 0 ? parts.join('; ') : 'not measured'}`
}

/** For the paced phases: the p50/p99 of each stage on its own. */
export function formatStages(results: PhaseResult[]): string {
  const pair = (stage: { p50Ms: number; p99Ms: number }) => `${ms(stage.p50Ms)}/${ms(stage.p99Ms)}`
  return results
    .filter((r) => r.load === 'paced')
    .map(
      (r) =>
        `stages of ${r.mode} at ${whole(r.targetRate ?? 0)}/s, p50/p99 ms: append>commit ${pair(r.figures.stages.commit)}, ` +
        `commit>Kafka ack (relay) ${pair(r.figures.stages.relay)}, ack>handler (consumer) ${pair(r.figures.stages.consume)}`,
    )
    .join('\n')
}

export function formatAims(results: PhaseResult[], drain?: DrainResult): string {
  const paced = results.find((r) => r.mode === 'notify' && r.load === 'paced')
  const latencyAim = `aim "p99 under ${aims.p99Ms} ms at ${whole(aims.atRate)} events/s with the wake-up": `
  let latencyVerdict: string
  if (!paced) latencyVerdict = 'not measured'
  else if (paced.figures.undelivered > 0 || !paced.figures.keepsUp)
    latencyVerdict = `no (the pipeline did not keep up at ${whole(paced.figures.offeredPerSecond)}/s)`
  else {
    const p99 = paced.figures.latency.p99Ms
    const offered = paced.figures.offeredPerSecond
    const atRate = offered >= aims.atRate * 0.98
    latencyVerdict = `${p99 < aims.p99Ms && atRate ? 'yes' : 'no'} (p99 ${ms(p99)} ms at ${whole(offered)} events/s)`
  }

  const sustained = sustainedOf(results)
  const sustainedAim = `aim "at least ${whole(aims.sustainedPerSecond)} events/s sustained": `
  const verdicts = sustained.map((s) => {
    const rate = whole(s.eventsPerSecond)
    if (s.eventsPerSecond >= aims.sustainedPerSecond) return `${s.mode} yes (${rate})`
    if (s.boundBy === 'writers') return `${s.mode} not shown (writers reached only ${rate})`
    return `${s.mode} no (${rate})`
  })
  const alone = drain ? `; the pipeline alone delivers ${whole(drain.deliveredPerSecond)}/s` : ''
  return [
    latencyAim + latencyVerdict,
    sustainedAim + (verdicts.length > 0 ? verdicts.join(', ') : 'not measured') + alone,
  ].join('\n')
}
