// Unit tests of the events bench's harness (figures from raw times, machine CPU, table, verdicts, knobs); no load run.
import { describe, expect, it } from 'vitest'
import { loadEventsBenchConfig } from '../src/events/events-config.ts'
import {
  boundByOf,
  formatAims,
  formatEventsTable,
  formatStages,
  formatSustained,
  type PhaseResult,
  sustainedOf,
} from '../src/events/events-report.ts'
import { countAtMost, keepUpTolerance, type PhaseFigures, phaseFigures } from '../src/events/figures.ts'
import { busyShare, cpuTimesOf } from '../src/events/machine-cpu.ts'

/**
 * n events appended every `gapMs` from `start`, committed 1 ms later, published in batches of 10 (2 ms after the
 * batch's last append), each handled `latencyMs` after its append.
 */
function steadyTimes(n: number, gapMs: number, latencyMs: (seq: number) => number, start = 1000) {
  const appendedAt = Array.from({ length: n }, (_, seq) => start + seq * gapMs)
  const committedAt = appendedAt.map((at) => at + 1)
  const seqs = appendedAt.map((_, seq) => seq)
  const eventIds = seqs.map((seq) => `event-${seq}`)
  const received = {
    seqs,
    appendedAt,
    receivedAt: appendedAt.map((at, seq) => at + latencyMs(seq)),
    eventIds,
  }
  const published = {
    eventIds,
    publishedAt: seqs.map((seq) => appendedAt[Math.min(n - 1, Math.floor(seq / 10) * 10 + 9)]! + 2),
  }
  return { appendedAt, committedAt, received, published }
}

/** Keeps the first `count` handler calls, plus those given. */
function receivedOnly(
  received: ReturnType<typeof steadyTimes>['received'],
  count: number,
  extra: { seq: number; appendedAt: number; receivedAt: number; eventId: string }[] = [],
) {
  return {
    seqs: [...received.seqs.slice(0, count), ...extra.map((call) => call.seq)],
    appendedAt: [...received.appendedAt.slice(0, count), ...extra.map((call) => call.appendedAt)],
    receivedAt: [...received.receivedAt.slice(0, count), ...extra.map((call) => call.receivedAt)],
    eventIds: [...received.eventIds.slice(0, count), ...extra.map((call) => call.eventId)],
  }
}

describe('phase figures', () => {
  it('when 1,000 events/s are each handled 5 ms after their append, then the window shows 1,000/s and 5 ms', () => {
    // an event every ms from 1 s to 14 s; the window is 3 s to 13 s
    const times = steadyTimes(13_000, 1, () => 5)
    const figures = phaseFigures({ window: { from: 3000, to: 13_000 }, ...times })
    expect(figures.seconds).toBe(10)
    expect(figures.appended).toBe(10_000)
    expect(figures.offeredPerSecond).toBe(1000)
    expect(figures.deliveredPerSecond).toBe(1000)
    expect(figures.publishedPerSecond).toBe(1000)
    expect(figures.latency).toEqual({ count: 10_000, p50Ms: 5, p99Ms: 5, maxMs: 5 })
    expect(figures.latencyFromCommit.p99Ms).toBe(4)
    expect(figures.stages.commit).toEqual({ p50Ms: 1, p99Ms: 1 })
    // published 1 to 10 ms after commit (batches of 10), so handled 6 ms before to 3 ms after the acknowledgement
    expect(figures.stages.relay).toEqual({ p50Ms: 5, p99Ms: 10 })
    expect(figures.stages.consume).toEqual({ p50Ms: -2, p99Ms: 3 })
    expect(figures.undelivered).toBe(0)
    expect(figures.duplicates).toBe(0)
    // 5 ms of events in flight at any instant
    expect(figures.backlog.start).toBe(5)
    expect(figures.backlog.end).toBe(5)
    expect(figures.meanBacklog).toBeCloseTo(5, 0)
    // at most a batch of 10 and what came in the 2 ms before its acknowledgement
    expect(figures.backlog.outboxEnd).toBeLessThanOrEqual(12)
    expect(figures.keepsUp).toBe(true)
  })

  it('when one event in a hundred is slow, then p99 and max show it and p50 does not', () => {
    const times = steadyTimes(2000, 1, (seq) => (seq % 100 === 0 ? 40 : seq % 100 === 1 ? 30 : 3))
    const figures = phaseFigures({ window: { from: 1000, to: 3000 }, ...times })
    expect(figures.latency.p50Ms).toBe(3)
    expect(figures.latency.p99Ms).toBe(30)
    expect(figures.latency.maxMs).toBe(40)
  })

  it('when the handler falls further behind every second, then the backlog grows and it does not keep up', () => {
    // 2,000 appended per second, handled at 1,000 per second: event n reaches the handler at n ms
    const appendedAt = Array.from({ length: 20_000 }, (_, seq) => seq / 2)
    const seqs = appendedAt.map((_, seq) => seq)
    const times = {
      appendedAt,
      committedAt: appendedAt,
      received: { seqs, appendedAt, receivedAt: seqs, eventIds: seqs.map(String) },
      published: { eventIds: [], publishedAt: [] },
    }
    const figures = phaseFigures({ window: { from: 2000, to: 8000 }, ...times })
    expect(figures.offeredPerSecond).toBe(2000)
    expect(figures.deliveredPerSecond).toBe(1000)
    expect(figures.backlog.end - figures.backlog.start).toBe(6000)
    // 1,000 more events waiting each second: the second half's mean is 3,000 above the first's
    expect(figures.meanBacklogHalves[1] - figures.meanBacklogHalves[0]).toBeCloseTo(3000, -1)
    expect(figures.keepsUp).toBe(false)
    // no batch was published: every row appended so far is still in the outbox
    expect(figures.backlog.outboxEnd).toBe(16_001)
    expect(figures.publishedPerSecond).toBe(0)
  })

  it('when events are never handled or handled twice, then they count as undelivered or duplicates, not latency', () => {
    const times = steadyTimes(100, 10, () => 2)
    const received = receivedOnly(times.received, 90, [
      { seq: 5, appendedAt: times.appendedAt[5]!, receivedAt: 2000, eventId: 'event-5' },
    ])
    const failed = { ...times, appendedAt: [...times.appendedAt], committedAt: [...times.committedAt] }
    failed.appendedAt[99] = Number.NaN
    failed.committedAt[99] = Number.NaN
    const figures = phaseFigures({ window: { from: 0, to: 5000 }, ...failed, received })
    expect(figures.appended).toBe(99)
    expect(figures.undelivered).toBe(9)
    expect(figures.latency.count).toBe(90)
    expect(figures.latency.maxMs).toBe(2)
    expect(figures.duplicates).toBe(1)
  })

  it('counts values at most a limit in an ascending list', () => {
    expect(countAtMost([1, 2, 2, 3], 2)).toBe(3)
    expect(countAtMost([1, 2, 2, 3], 0.5)).toBe(0)
    expect(countAtMost([1, 2, 2, 3], 9)).toBe(4)
    expect(countAtMost([], 1)).toBe(0)
  })

  it('when the backlog swings between 0 and a bound without growing, then it keeps up', () => {
    // bursts: 2,000 appended at the start of every second, handled evenly over the next 800 ms
    const appendedAt: number[] = []
    const receivedAt: number[] = []
    for (let second = 0; second < 12; second++) {
      for (let i = 0; i < 2000; i++) {
        appendedAt.push(second * 1000)
        receivedAt.push(second * 1000 + (i + 1) * 0.4)
      }
    }
    const seqs = appendedAt.map((_, seq) => seq)
    const figures = phaseFigures({
      window: { from: 2000, to: 12_000 },
      appendedAt,
      committedAt: appendedAt,
      received: { seqs, appendedAt, receivedAt, eventIds: seqs.map(String) },
      published: { eventIds: [], publishedAt: [] },
    })
    expect(figures.backlog.start).toBe(2000)
    expect(figures.meanBacklog).toBeGreaterThan(500)
    expect(figures.keepsUp).toBe(true)
  })

  it('tolerates a quarter second of load, and never less than 100 events, before calling a backlog growing', () => {
    expect(keepUpTolerance(1000)).toBe(250)
    expect(keepUpTolerance(100)).toBe(100)
  })
})

describe('machine CPU', () => {
  const cpu = (user: number, idle: number) => ({ times: { user, nice: 0, sys: 0, idle, irq: 0 } })

  it('when two CPUs were busy half the time between readings, then the share is one half', () => {
    const before = cpuTimesOf([cpu(100, 100), cpu(100, 100)])
    const after = cpuTimesOf([cpu(150, 150), cpu(200, 200)])
    expect(before).toEqual({ idle: 200, total: 400 })
    expect(busyShare(before, after)).toBe(0.5)
  })

  it('when no time passed, then the share is 0', () => {
    const same = cpuTimesOf([cpu(1, 1)])
    expect(busyShare(same, same)).toBe(0)
  })
})

const figures = (overrides: Partial<PhaseFigures>): PhaseFigures => ({
  seconds: 10,
  appended: 10_000,
  offeredPerSecond: 1000,
  publishedPerSecond: 1000,
  deliveredPerSecond: 1000,
  latency: { count: 10_000, p50Ms: 6, p99Ms: 20, maxMs: 40 },
  latencyFromCommit: { count: 10_000, p50Ms: 5, p99Ms: 19, maxMs: 39 },
  stages: {
    commit: { p50Ms: 1, p99Ms: 3 },
    relay: { p50Ms: 2, p99Ms: 8 },
    consume: { p50Ms: 3, p99Ms: 12 },
  },
  undelivered: 0,
  backlog: { start: 8, end: 9, outboxStart: 2, outboxEnd: 3 },
  meanBacklog: 8,
  meanBacklogHalves: [8, 8],
  keepsUp: true,
  duplicates: 0,
  ...overrides,
})

const result = (overrides: Partial<PhaseResult>): PhaseResult => ({
  mode: 'notify',
  load: 'paced',
  targetRate: 1000,
  maxBacklog: null,
  figures: figures({}),
  windowCpuMs: { writer: 2000, relay: 3000, consumer: 3000 },
  machineBusy: 0.9,
  ...overrides,
})

describe('sustained rate and verdicts', () => {
  it('when a bounded run kept its backlog near the bound, then the pipeline was the limit', () => {
    const saturated = result({
      load: 'max',
      targetRate: null,
      maxBacklog: 2000,
      figures: figures({ deliveredPerSecond: 6000, meanBacklog: 1800 }),
    })
    expect(boundByOf(saturated)).toBe('pipeline')
    expect(boundByOf({ ...saturated, figures: figures({ meanBacklog: 300 }) })).toBe('writers')
  })

  it('when an unbounded run let the backlog grow, then the pipeline was the limit', () => {
    const flatOut = result({ load: 'max', targetRate: null, figures: figures({ keepsUp: false }) })
    expect(boundByOf(flatOut)).toBe('pipeline')
    expect(boundByOf({ ...flatOut, figures: figures({ keepsUp: true }) })).toBe('writers')
  })

  it('when both aims are met, then both verdicts say yes with the figures', () => {
    const results = [
      result({ figures: figures({ latency: { count: 10_000, p50Ms: 5, p99Ms: 18.04, maxMs: 30 } }) }),
      result({
        load: 'max',
        targetRate: null,
        maxBacklog: 2000,
        figures: figures({ deliveredPerSecond: 6123.4, meanBacklog: 1900 }),
      }),
      result({
        mode: 'poll',
        load: 'max',
        targetRate: null,
        maxBacklog: 2000,
        figures: figures({ deliveredPerSecond: 7000, meanBacklog: 1900 }),
      }),
    ]
    const aims = formatAims(results)
    expect(aims).toContain(
      '"p99 under 25 ms at 1,000 events/s with the wake-up": yes (p99 18.0 ms at 1,000 events/s)',
    )
    expect(aims).toContain('"at least 5,000 events/s sustained": notify yes (6,123), poll yes (7,000)')
    expect(formatSustained(sustainedOf(results), 2000)).toBe(
      'max sustained events/s: notify 6,123 (backlog ~1,900 of at most 2,000: work always waiting); ' +
        'poll 7,000 (backlog ~1,900 of at most 2,000: work always waiting)',
    )
  })

  it('when p99 is too high, the paced run fell behind, or the writers were the limit, then the verdicts say so', () => {
    const slow = formatAims([
      result({ figures: figures({ latency: { count: 1, p50Ms: 9, p99Ms: 31, maxMs: 50 } }) }),
    ])
    expect(slow).toContain('with the wake-up": no (p99 31.0 ms at 1,000 events/s)')
    expect(slow).toContain('sustained": not measured')
    const behind = formatAims([result({ figures: figures({ keepsUp: false }) })])
    expect(behind).toContain('with the wake-up": no (the pipeline did not keep up at 1,000/s)')
    const writerBound = formatAims([
      result({
        load: 'max',
        maxBacklog: 2000,
        figures: figures({ deliveredPerSecond: 3000, meanBacklog: 10 }),
      }),
    ])
    expect(writerBound).toContain('notify not shown (writers reached only 3,000)')
  })

  it('when an unbounded run overloads the pipeline, or a bounded one never fills, then the sustained line says so', () => {
    const overloaded = result({
      load: 'max',
      targetRate: null,
      figures: figures({
        deliveredPerSecond: 2500,
        keepsUp: false,
        backlog: { start: 100, end: 9100, outboxStart: 0, outboxEnd: 0 },
      }),
    })
    expect(formatSustained(sustainedOf([overloaded]), null)).toBe(
      'max sustained events/s: notify 2,500 (backlog grew by 9,000: overloaded)',
    )
    const idle = result({
      load: 'max',
      targetRate: null,
      maxBacklog: 2000,
      figures: figures({ meanBacklog: 12 }),
    })
    expect(formatSustained(sustainedOf([idle]), 2000)).toBe(
      'max sustained events/s: notify >= 1,000 (backlog ~12 of at most 2,000: the writers were the limit)',
    )
  })
})

describe('the table', () => {
  it('when printed, then every phase has a row, and latency only where every event of the window arrived', () => {
    const table = formatEventsTable([
      result({}),
      result({
        mode: 'poll',
        load: 'max',
        targetRate: null,
        figures: figures({ undelivered: 12, deliveredPerSecond: 2345.6 }),
        machineBusy: 0.974,
      }),
    ]).split('\n')
    expect(table[0]).toMatch(
      /^mode\s+load\s+offered\/s\s+published\/s\s+delivered\/s\s+p50 ms\s+p99 ms\s+max ms/,
    )
    expect(table).toHaveLength(4)
    expect(table[2]).toMatch(
      /^notify\s+1,000\/s\s+1,000\s+1,000\s+1,000\s+6\.0\s+20\.0\s+40\.0\s+8>9\s+yes\s+90%$/,
    )
    expect(table[3]).toMatch(/^poll\s+max\s+.*2,346\s+-\s+-\s+-\s+8>9\s+yes\s+97%$/)
  })
})

describe('stages', () => {
  it('when printed, then each paced phase has a line with the p50/p99 of each stage, and the max phases none', () => {
    const lines = formatStages([result({}), result({ load: 'max', targetRate: null })]).split('\n')
    expect(lines).toEqual([
      'stages of notify at 1,000/s, p50/p99 ms: append>commit 1.0/3.0, commit>Kafka ack (relay) 2.0/8.0, ' +
        'ack>handler (consumer) 3.0/12.0',
    ])
  })
})

describe('knobs', () => {
  it('when nothing is set, then the defaults are the issue’s: 1,000 events/s, 10 s, poll every 100 ms', () => {
    const config = loadEventsBenchConfig({})
    expect(config).toMatchObject({
      warmupSeconds: 3,
      measureSeconds: 10,
      rate: 1000,
      partitions: 3,
      concurrency: 3,
      pollIntervalMs: 100,
      maxBacklog: 2000,
      drainEvents: 20_000,
    })
  })

  it('when the backlog bound is 0, then the writers run unbounded; a bad value is refused', () => {
    expect(loadEventsBenchConfig({ BENCH_EVENTS_MAX_BACKLOG: '0' }).maxBacklog).toBeNull()
    expect(() => loadEventsBenchConfig({ BENCH_EVENTS_SECONDS: '0' })).toThrow(/BENCH_EVENTS_SECONDS/)
    expect(() => loadEventsBenchConfig({ BENCH_EVENTS_RATE: 'fast' })).toThrow(/BENCH_EVENTS_RATE/)
  })
})
