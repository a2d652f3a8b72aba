import { describe, expect, it } from 'vitest'
import { type LoadSample, percentile, summarise } from '../src/load.ts'
import { formatTable, formatVerdict, keepsThroughput, type RunResult, ratiosOf } from '../src/report.ts'

const run = (overrides: Partial<RunResult>): RunResult => ({
  scenario: 'list',
  server: 'bare',
  requestsPerSecond: 1000,
  partRequestsPerSecond: [1000, 1000],
  totalRequests: 10_000,
  p50Ms: 2,
  p99Ms: 8,
  errors: 0,
  non2xx: 0,
  statusCodes: { 200: 10_000 },
  rssMb: 150,
  peakRssMb: 160,
  cpuMsPerRequest: 0.3,
  ...overrides,
})

describe('ratios and verdict', () => {
  it('when the chassis serves 90% of bare throughput in every scenario, then the verdict says it keeps 85%', () => {
    const ratios = ratiosOf([
      run({ server: 'chassis', requestsPerSecond: 900, p50Ms: 3, cpuMsPerRequest: 0.45 }),
      run({ server: 'bare' }),
      run({ scenario: 'create', server: 'chassis', requestsPerSecond: 95 }),
      run({ scenario: 'create', server: 'bare', requestsPerSecond: 100 }),
    ])
    expect(ratios[0]).toEqual({ scenario: 'list', throughput: 0.9, p50Latency: 1.5, cpuPerRequest: 1.5 })
    expect(ratios[1]?.throughput).toBeCloseTo(0.95)
    expect(keepsThroughput(ratios)).toBe(true)
    expect(formatVerdict(ratios)).toContain('keeps >= 85.0% of bare throughput in every scenario: yes')
  })

  it('when one scenario falls below 85%, then the verdict says no and names it', () => {
    const ratios = ratiosOf([run({ server: 'chassis', requestsPerSecond: 600 }), run({ server: 'bare' })])
    expect(keepsThroughput(ratios)).toBe(false)
    expect(formatVerdict(ratios)).toContain('no (GET /api/v1/users?limit=20 at 60.0%)')
  })

  it('when a scenario lacks one of the servers, then it has no ratio and the verdict is not a pass', () => {
    const ratios = ratiosOf([run({ server: 'chassis' })])
    expect(ratios).toEqual([])
    expect(keepsThroughput(ratios)).toBe(false)
  })
})

describe('summarising parts of a measurement', () => {
  const part = (seconds: number, latenciesMs: number[], statusCodes: Record<string, number>): LoadSample => ({
    seconds,
    latenciesMs,
    statusCodes,
    errors: 1,
  })

  it('when two parts are merged, then throughput is over their total time and percentiles over every latency', () => {
    const figures = summarise([
      part(1, [1, 2, 3, 4], { 200: 3, 500: 1 }),
      part(1, [5, 6, 7, 8, 9, 10], { 200: 5, 429: 1 }),
    ])
    expect(figures.requestsPerSecond).toBe(5)
    expect(figures.partRequestsPerSecond).toEqual([4, 6])
    expect(figures.p50Ms).toBe(5)
    expect(figures.p99Ms).toBe(10)
    expect(figures.errors).toBe(2)
    expect(figures.non2xx).toBe(2)
    expect(figures.statusCodes).toEqual({ 200: 8, 429: 1, 500: 1 })
  })

  it('when there are no latencies, then the percentile is 0', () => {
    expect(percentile([], 0.5)).toBe(0)
  })
})

describe('the table', () => {
  it('when printed, then every run has a row with its figures under the headers', () => {
    const table = formatTable([run({ server: 'chassis', requestsPerSecond: 812.345 }), run({})]).split('\n')
    expect(table[0]).toMatch(/^scenario\s+server\s+requests\/s\s+p50 ms\s+p99 ms\s+errors\/non-2xx/)
    expect(table).toHaveLength(4)
    expect(table[2]).toContain('812.3')
    expect(table[3]).toContain('1000.0')
    expect(table[3]).toContain('150.0 (160.0)')
  })
})
