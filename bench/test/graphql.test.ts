// bench:graphql's pure parts: the posts' sequence numbers, delivery figures, ratios, tables, verdicts and knobs.
import { describe, expect, it } from 'vitest'
import {
  type DeliveryResult,
  deliveryFigures,
  deliveryVerdict,
  formatDeliveryTable,
  formatDeliveryVerdict,
  formatThroughputTable,
  formatThroughputVerdict,
  keepsThroughput,
  postTitle,
  type SentPost,
  seqOfTitle,
  type ThroughputResult,
  throughputRatio,
} from '../src/graphql/figures.ts'
import { loadGraphqlConfig } from '../src/graphql/graphql-config.ts'
import { atFixedRate } from '../src/open-loop.ts'

describe('posts that carry their sequence number', () => {
  it("when a title is the bench's, then its number comes back, probes (negative) included", () => {
    for (const seq of [0, 1, 999, -1, -42]) expect(seqOfTitle(postTitle(seq))).toBe(seq)
  })

  it("when a title is anyone else's or malformed, then there is no number", () => {
    for (const title of ['Seed post 12', 'bench post ', 'bench post 1.5', 'bench post 12x', 'bench post'])
      expect(seqOfTitle(title)).toBeUndefined()
  })
})

describe('delivery figures', () => {
  const post = (seq: number, sentAt: number, accepted = true, answerMs: number | null = 5): SentPost => ({
    seq,
    sentAt,
    accepted,
    ...(answerMs === null ? {} : { answerMs }),
  })

  it('when every subscriber has every post, then latency is over every (post, subscriber) pair and nothing is lost', () => {
    const figures = deliveryFigures([post(0, 100), post(1, 110)], { 0: [101, 103], 1: [112, 120] }, 2)
    expect(figures).toMatchObject({ postsSent: 2, postsAccepted: 2, expected: 4, received: 4, lost: 0 })
    expect(figures.latency).toEqual({ count: 4, p50Ms: 2, p99Ms: 10, maxMs: 10 })
    expect(figures.mutation).toEqual({ count: 2, p50Ms: 5, p99Ms: 5, maxMs: 5 })
  })

  it('when a subscriber misses a post, then it is lost; refused posts are expected from nobody', () => {
    const figures = deliveryFigures(
      [post(0, 100), post(1, 110), post(2, 120, false, null)],
      { 0: [101, 102], 1: [115], 2: [121] },
      2,
    )
    expect(figures).toMatchObject({ postsSent: 3, postsAccepted: 2, expected: 4, received: 3, lost: 1 })
    expect(figures.mutation.count).toBe(2)
  })

  it('when receipts outnumber the subscribers, then only one per subscriber counts', () => {
    expect(deliveryFigures([post(0, 0)], { 0: [1, 2, 3] }, 2)).toMatchObject({ received: 2, lost: 0 })
  })
})

const throughput = (
  server: 'chassis' | 'bare',
  requestsPerSecond: number,
  cpu: number,
): ThroughputResult => ({
  server,
  requestsPerSecond,
  partRequestsPerSecond: [requestsPerSecond, requestsPerSecond],
  totalRequests: requestsPerSecond * 10,
  p50Ms: 2,
  p99Ms: 6,
  errors: 0,
  non2xx: 0,
  statusCodes: { 200: requestsPerSecond * 10 },
  rssMb: 200,
  peakRssMb: 210,
  cpuMsPerRequest: cpu,
})

describe('throughput against bare mercurius', () => {
  it('when the chassis keeps 90% of bare, then the aim of 85% is kept', () => {
    const ratio = throughputRatio(throughput('chassis', 900, 0.3), throughput('bare', 1000, 0.2))
    expect(ratio?.throughput).toBeCloseTo(0.9)
    expect(ratio?.cpuPerRequest).toBeCloseTo(1.5)
    expect(keepsThroughput(ratio)).toBe(true)
    expect(formatThroughputVerdict(ratio)).toContain('throughput 90.0%')
    expect(formatThroughputVerdict(ratio)).toContain('of bare throughput: yes')
  })

  it('when the chassis keeps 80%, or bare measured nothing, then the aim is not kept', () => {
    expect(
      keepsThroughput(throughputRatio(throughput('chassis', 800, 0.3), throughput('bare', 1000, 0.2))),
    ).toBe(false)
    const none = throughputRatio(throughput('chassis', 800, 0.3), throughput('bare', 0, 0))
    expect(none).toBeNull()
    expect(formatThroughputVerdict(none)).toContain('no complete pair')
  })

  it('prints one row per server under aligned headers', () => {
    const lines = formatThroughputTable([
      throughput('chassis', 900, 0.3),
      throughput('bare', 1000, 0.2),
    ]).split('\n')
    expect(lines).toHaveLength(4)
    expect(lines[2]).toMatch(
      /^POST \/graphql posts\(limit: 20\)\s+chassis\s+900\.0\s+2\.00\s+6\.00\s+0\/0\s+200\.0 \(210\.0\)\s+0\.300$/,
    )
  })
})

const delivery = (overrides: Partial<DeliveryResult> = {}): DeliveryResult => ({
  server: 'chassis',
  ratePerSecond: 100,
  seconds: 10,
  subscribers: 10,
  refused: {},
  subscriptionErrors: {},
  lagMs: 0,
  payloadBytes: 120,
  postsSent: 1000,
  postsAccepted: 1000,
  expected: 10_000,
  received: 10_000,
  lost: 0,
  latency: { count: 10_000, p50Ms: 4, p99Ms: 20, maxMs: 40 },
  mutation: { count: 1000, p50Ms: 5, p99Ms: 15, maxMs: 30 },
  ...overrides,
})

describe('postCreated delivery verdict', () => {
  it('when p99 is under 50 ms at 100 posts/s and nothing is lost, then the aim is met', () => {
    expect(deliveryVerdict(delivery())).toBe('met')
    expect(
      formatDeliveryVerdict(
        delivery(),
        delivery({ server: 'bare', latency: { count: 1, p50Ms: 2, p99Ms: 10, maxMs: 10 } }),
      ),
    ).toContain('chassis p99 20.00 ms (bare 10.00 ms, x2.00)')
  })

  it('when p99 reaches 50 ms or a delivery is lost, then it is not met', () => {
    expect(deliveryVerdict(delivery({ latency: { count: 1, p50Ms: 4, p99Ms: 50, maxMs: 60 } }))).toBe(
      'not met',
    )
    const lossy = delivery({ received: 9_999, lost: 1 })
    expect(deliveryVerdict(lossy)).toBe('not met')
    expect(formatDeliveryVerdict(lossy, undefined)).toContain('1 of 10000 deliveries lost')
  })

  it('when measured below 100 posts/s, then the aim is not shown', () => {
    expect(deliveryVerdict(delivery({ ratePerSecond: 20 }))).toBe('not shown')
  })

  it('prints posts accepted/sent, deliveries and percentiles per server', () => {
    const table = formatDeliveryTable([delivery(), delivery({ server: 'bare' })])
    expect(table.split('\n')[2]).toContain('postCreated, 2 instances, 10 subscribers  chassis')
    expect(table.split('\n')[2]).toContain('1000/1000')
  })
})

describe('knobs', () => {
  it('when nothing is set, then the defaults of the issue', () => {
    expect(loadGraphqlConfig({})).toMatchObject({
      warmupSeconds: 3,
      measureSeconds: 10,
      connections: 10,
      ratePerSecond: 100,
      subscribers: 10,
      seedUsers: 50,
      seedPosts: 2000,
      poolMax: 10,
    })
  })

  it('when a knob is set, then it counts; when it is not a positive integer, then the run refuses to start', () => {
    expect(loadGraphqlConfig({ BENCH_GRAPHQL_SUBSCRIBERS: '50' }).subscribers).toBe(50)
    expect(() => loadGraphqlConfig({ BENCH_GRAPHQL_RATE: '0' })).toThrow(/BENCH_GRAPHQL_RATE/)
  })
})

describe('open loop', () => {
  it('when items are started at a rate, then each starts on its schedule, not after the one before ends', async () => {
    let inFlight = 0
    let most = 0
    let started = 0
    await atFixedRate(5, 100, async () => {
      started += 1
      inFlight += 1
      most = Math.max(most, inFlight)
      await new Promise((resolve) => setTimeout(resolve, 100))
      inFlight -= 1
    })
    // five items 10 ms apart, each lasting 100 ms: they overlap
    expect(started).toBe(5)
    expect(most).toBeGreaterThan(1)
  })
})
