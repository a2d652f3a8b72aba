// From raw times (writer, relay, consumer) to one phase's figures: rates, latency and its stages, backlog.
import { percentile } from '../load.ts'

/** Times are monotonicMs() of any process of the run. */
export interface PhaseTimes {
  /** the measured window; the warm-up lies before it */
  window: { from: number; to: number }
  /** per event, by sequence number: appendToOutbox called; NaN when its transaction failed */
  appendedAt: number[]
  /** per event, by sequence number: COMMIT returned; NaN when its transaction failed */
  committedAt: number[]
  /** per handler call: the event's sequence number, the append time its envelope carried, when the handler ran */
  received: { seqs: number[]; appendedAt: number[]; receivedAt: number[]; eventIds: string[] }
  /** per row the relay had acknowledged by Kafka (onPublished): the envelope id and when */
  published: { eventIds: string[]; publishedAt: number[] }
}

export interface LatencyFigures {
  /** events appended in the window whose handler ran */
  count: number
  p50Ms: number
  p99Ms: number
  maxMs: number
}

export interface StageFigures {
  p50Ms: number
  p99Ms: number
}

export interface PhaseFigures {
  seconds: number
  /** events appended in the window */
  appended: number
  offeredPerSecond: number
  /** rows the relay had acknowledged by Kafka in the window, per second */
  publishedPerSecond: number
  /** handler calls in the window, per second */
  deliveredPerSecond: number
  /** append time carried by the envelope (taken inside the transaction) to handler, for events appended in the window */
  latency: LatencyFigures
  /** the same events, from the moment COMMIT returned to the writer */
  latencyFromCommit: LatencyFigures
  /** where the time goes, for the same events; percentiles of each stage on its own (they do not add up) */
  stages: {
    /** append to COMMIT returned (the writer's transaction) */
    commit: StageFigures
    /** COMMIT returned to Kafka's acknowledgement reaching the relay (wake-up or poll, read, produce) */
    relay: StageFigures
    /** Kafka's acknowledgement to the handler (fetch, inbox transaction up to the handler) */
    consume: StageFigures
  }
  /** events appended in the window whose handler had not run when the figures were taken */
  undelivered: number
  /** events appended but not yet handled (end to end), and not yet published (outbox), at each end of the window */
  backlog: { start: number; end: number; outboxStart: number; outboxEnd: number }
  /** the end-to-end backlog averaged over the window, and over each half of it (sampled at 200 instants) */
  meanBacklog: number
  meanBacklogHalves: [number, number]
  /** the backlog did not grow: its mean over the second half exceeds the first half's by at most keepUpTolerance */
  keepsUp: boolean
  /** handler calls for an event already handled (the inbox should make it 0) */
  duplicates: number
}

/** How much the end-to-end backlog may grow over a window and still count as keeping up: a quarter second of load. */
export const keepUpTolerance = (offeredPerSecond: number): number =>
  Math.max(100, Math.ceil(offeredPerSecond * 0.25))

/** Number of values <= limit in an ascending array. */
export function countAtMost(ascending: number[], limit: number): number {
  let low = 0
  let high = ascending.length
  while (low < high) {
    const middle = (low + high) >>> 1
    if (ascending[middle]! <= limit) low = middle + 1
    else high = middle
  }
  return low
}

const inWindow = (time: number, window: PhaseTimes['window']) => time >= window.from && time < window.to
const ascending = (values: number[]) => [...values].sort((a, b) => a - b)

function latencyOf(values: number[]): LatencyFigures {
  const sorted = ascending(values)
  return {
    count: sorted.length,
    p50Ms: percentile(sorted, 0.5),
    p99Ms: percentile(sorted, 0.99),
    maxMs: sorted.length > 0 ? sorted[sorted.length - 1]! : 0,
  }
}

function stageOf(values: number[]): StageFigures {
  const sorted = ascending(values)
  return { p50Ms: percentile(sorted, 0.5), p99Ms: percentile(sorted, 0.99) }
}

export function phaseFigures(times: PhaseTimes): PhaseFigures {
  const { window, received, published } = times
  const seconds = (window.to - window.from) / 1000

  const appendedSorted = ascending(times.appendedAt.filter((at) => !Number.isNaN(at)))
  const windowSeqs = times.appendedAt.flatMap((at, seq) => (inWindow(at, window) ? [seq] : []))

  // first handler call of each event; later calls are duplicates
  const first = new Map<number, { appendedAt: number; receivedAt: number; eventId: string }>()
  let duplicates = 0
  for (let i = 0; i < received.seqs.length; i++) {
    const seq = received.seqs[i]!
    const call = {
      appendedAt: received.appendedAt[i]!,
      receivedAt: received.receivedAt[i]!,
      eventId: received.eventIds[i]!,
    }
    const earlier = first.get(seq)
    if (earlier !== undefined) duplicates += 1
    if (earlier === undefined || call.receivedAt < earlier.receivedAt) first.set(seq, call)
  }
  const receivedSorted = ascending(received.receivedAt)

  // a row published twice (a relay retry) counts once, at its first acknowledgement
  const publishedAtOf = new Map<string, number>()
  for (let i = 0; i < published.eventIds.length; i++) {
    const id = published.eventIds[i]!
    const at = published.publishedAt[i]!
    const earlier = publishedAtOf.get(id)
    if (earlier === undefined || at < earlier) publishedAtOf.set(id, at)
  }
  const publishedSorted = ascending([...publishedAtOf.values()])

  const fromAppend: number[] = []
  const fromCommit: number[] = []
  const commit: number[] = []
  const relay: number[] = []
  const consume: number[] = []
  let undelivered = 0
  for (const seq of windowSeqs) {
    const committedAt = times.committedAt[seq]!
    commit.push(committedAt - times.appendedAt[seq]!)
    const call = first.get(seq)
    if (call === undefined) {
      undelivered += 1
      continue
    }
    fromAppend.push(call.receivedAt - call.appendedAt)
    fromCommit.push(call.receivedAt - committedAt)
    const publishedAt = publishedAtOf.get(call.eventId)
    if (publishedAt !== undefined) {
      relay.push(publishedAt - committedAt)
      consume.push(call.receivedAt - publishedAt)
    }
  }

  const backlogAt = (time: number) => countAtMost(appendedSorted, time) - countAtMost(receivedSorted, time)
  const outboxAt = (time: number) =>
    Math.max(0, countAtMost(appendedSorted, time) - countAtMost(publishedSorted, time))
  const backlog = {
    start: backlogAt(window.from),
    end: backlogAt(window.to),
    outboxStart: outboxAt(window.from),
    outboxEnd: outboxAt(window.to),
  }
  const samples = 200
  const sums = [0, 0]
  for (let i = 0; i < samples; i++) {
    const half = i < samples / 2 ? 0 : 1
    sums[half]! += backlogAt(window.from + ((window.to - window.from) * (i + 0.5)) / samples)
  }
  const meanBacklogHalves: [number, number] = [sums[0]! / (samples / 2), sums[1]! / (samples / 2)]
  const offeredPerSecond = seconds > 0 ? windowSeqs.length / seconds : 0
  const perSecond = (count: number) => (seconds > 0 ? count / seconds : 0)

  return {
    seconds,
    appended: windowSeqs.length,
    offeredPerSecond,
    publishedPerSecond: perSecond(publishedSorted.filter((at) => inWindow(at, window)).length),
    deliveredPerSecond: perSecond(receivedSorted.filter((at) => inWindow(at, window)).length),
    latency: latencyOf(fromAppend),
    latencyFromCommit: latencyOf(fromCommit),
    stages: { commit: stageOf(commit), relay: stageOf(relay), consume: stageOf(consume) },
    undelivered,
    backlog,
    meanBacklog: (meanBacklogHalves[0] + meanBacklogHalves[1]) / 2,
    meanBacklogHalves,
    keepsUp: meanBacklogHalves[1] - meanBacklogHalves[0] <= keepUpTolerance(offeredPerSecond),
    duplicates,
  }
}

/**
 * Events per second between the moments the `low` and `high` shares of `total` events had passed (ascending times):
 * the steady rate of a drain, without its start (connections, group join) and its tail.
 */
export function steadyRate(ascendingTimes: number[], total: number, low = 0.1, high = 0.9): number {
  const from = Math.floor(total * low)
  const to = Math.min(ascendingTimes.length, Math.ceil(total * high)) - 1
  if (to <= from) return 0
  const elapsedMs = ascendingTimes[to]! - ascendingTimes[from]!
  return elapsedMs > 0 ? ((to - from) / elapsedMs) * 1000 : 0
}
