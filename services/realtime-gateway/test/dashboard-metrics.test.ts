// The dashboard's figures on their own (domain/dashboard-metrics.ts): reading Prometheus text (the kit's own, as
// prom-client writes it), requests per second, the share of 5xx, the 95th percentile across instances, restarts.
import { createServiceMetrics } from '@meridian/service-kit'
import { describe, expect, it } from 'vitest'
import {
  type Bucket,
  histogramQuantile,
  type InstanceTraffic,
  instanceTrafficOf,
  mergeBuckets,
  parsePrometheusText,
  restartedBetween,
  trafficBetween,
  trafficFigures,
  trafficMetricNames,
} from '../src/domain/dashboard-metrics.ts'

/** An instance's registry as the kit builds it, and what its /metrics?format=prometheus would say. */
function instance(service = 'orders') {
  const metrics = createServiceMetrics(service)
  return {
    observe(seconds: number, times = 1, { route = '/api/v1/orders', status = 200, method = 'GET' } = {}) {
      const series = metrics.requestDuration.labels({ method, route, status: String(status) })
      for (let i = 0; i < times; i++) series.observe(seconds)
    },
    async traffic(): Promise<InstanceTraffic> {
      return instanceTrafficOf(parsePrometheusText(await metrics.registry.metrics(), trafficMetricNames))
    },
  }
}

const inf = Number.POSITIVE_INFINITY
const buckets = (...pairs: [number, number][]): Bucket[] => pairs.map(([le, count]) => ({ le, count }))

describe('reading Prometheus text', () => {
  it('when a line has labels with escapes, +Inf and a timestamp, then the sample carries them; comments and bad lines are skipped', () => {
    const text = [
      '# HELP http_request_duration_seconds HTTP request duration',
      '# TYPE http_request_duration_seconds histogram',
      'http_request_duration_seconds_bucket{le="+Inf",route="/a \\"quoted\\" \\\\ b",status="200"} 7 1712345678000',
      'http_request_duration_seconds_count{route="/a",status="500"} 3',
      'process_start_time_seconds 1712345678',
      'broken line without value{',
      'http_requests_received_total{service="x",} 12',
      '',
    ].join('\n')
    expect(parsePrometheusText(text)).toEqual([
      {
        name: 'http_request_duration_seconds_bucket',
        labels: { le: '+Inf', route: '/a "quoted" \\ b', status: '200' },
        value: 7,
      },
      { name: 'http_request_duration_seconds_count', labels: { route: '/a', status: '500' }, value: 3 },
      { name: 'process_start_time_seconds', labels: {}, value: 1712345678 },
      { name: 'http_requests_received_total', labels: { service: 'x' }, value: 12 },
    ])
  })

  it('when names are given, then only their samples are read', () => {
    const text = 'a_total 1\nb_total{x="1"} 2\nc 3\n'
    expect(parsePrometheusText(text, new Set(['b_total', 'c'])).map((sample) => sample.name)).toEqual([
      'b_total',
      'c',
    ])
  })

  it("when the kit's registry is scraped, then its responses, 5xx and merged buckets are read, without the operations routes", async () => {
    const orders = instance()
    orders.observe(0.003, 4)
    orders.observe(0.2, 1, { status: 503, method: 'POST' })
    orders.observe(0.004, 2, { status: 404 })
    orders.observe(0.001, 50, { route: '/metrics' })
    orders.observe(0.001, 20, { route: '/health/ready' })
    const traffic = await orders.traffic()
    expect(traffic).toMatchObject({ responses: 7, errors: 1 })
    expect(traffic.startedAt).toBeGreaterThan(0)
    expect(traffic.buckets.at(-1)).toEqual({ le: inf, count: 7 })
    expect(traffic.buckets.find((bucket) => bucket.le === 0.005)?.count).toBe(6)
    expect(traffic.buckets.find((bucket) => bucket.le === 0.25)?.count).toBe(7)
  })
})

describe('the figures between two scrapes', () => {
  it('when an instance answered 20 more requests in 2 s, then requests per second is 10; two instances add up', async () => {
    const orders = instance()
    const payments = instance('payments')
    orders.observe(0.01, 10)
    payments.observe(0.01, 5)
    const [ordersBefore, paymentsBefore] = [await orders.traffic(), await payments.traffic()]
    orders.observe(0.01, 20)
    payments.observe(0.01, 3)
    const ordersDelta = trafficBetween(ordersBefore, await orders.traffic(), 2)
    expect(trafficFigures([ordersDelta]).requestsPerSecond).toBe(10)
    const paymentsDelta = trafficBetween(paymentsBefore, await payments.traffic(), 1)
    expect(trafficFigures([ordersDelta, paymentsDelta]).requestsPerSecond).toBe(13)
  })

  it('when some answers were 5xx, then the error rate is their share of all answers; 4xx are not errors', async () => {
    const orders = instance()
    const before = await orders.traffic()
    orders.observe(0.01, 6)
    orders.observe(0.01, 2, { status: 404 })
    orders.observe(0.01, 1, { status: 500 })
    orders.observe(0.01, 1, { status: 502 })
    const figures = trafficFigures([trafficBetween(before, await orders.traffic(), 1)])
    expect(figures.errorRate).toBe(0.2)
  })

  it('when only old answers were 5xx, then they are not counted again', async () => {
    const orders = instance()
    orders.observe(0.01, 5, { status: 500 })
    const before = await orders.traffic()
    orders.observe(0.01, 5)
    expect(trafficFigures([trafficBetween(before, await orders.traffic(), 1)]).errorRate).toBe(0)
  })

  it("when two instances' latencies differ, then p95 comes from their buckets merged, interpolated inside the bucket", async () => {
    const fast = instance()
    const slow = instance()
    const [fastBefore, slowBefore] = [await fast.traffic(), await slow.traffic()]
    fast.observe(0.003, 50)
    fast.observe(0.008, 50)
    slow.observe(0.07, 100)
    const figures = trafficFigures([
      trafficBetween(fastBefore, await fast.traffic(), 1),
      trafficBetween(slowBefore, await slow.traffic(), 1),
    ])
    // 200 answers; the 190th is in (0.05, 0.1], which holds answers 101..200: 0.05 + 0.05 * 90/100 s
    expect(figures.p95Latency).toBeCloseTo(95, 6)
    expect(figures.requestsPerSecond).toBe(200)
  })

  it('when nothing was answered, then every figure is 0', async () => {
    const idle = instance()
    const before = await idle.traffic()
    expect(trafficFigures([trafficBetween(before, await idle.traffic(), 1)])).toEqual({
      requestsPerSecond: 0,
      errorRate: 0,
      p95Latency: 0,
    })
    expect(trafficFigures([])).toEqual({ requestsPerSecond: 0, errorRate: 0, p95Latency: 0 })
  })

  it('when the instance restarted (counts went down), then its traffic is what it counted since the restart', () => {
    const before: InstanceTraffic = { responses: 100, errors: 10, buckets: buckets([0.1, 90], [inf, 100]) }
    const after: InstanceTraffic = { responses: 4, errors: 1, buckets: buckets([0.1, 4], [inf, 4]) }
    expect(restartedBetween(before, after)).toBe(true)
    expect(trafficBetween(before, after, 2)).toEqual({ ...after, seconds: 2 })
    expect(trafficFigures([trafficBetween(before, after, 2)])).toMatchObject({
      requestsPerSecond: 2,
      errorRate: 0.25,
    })
  })

  it('when the start time changed though the counts grew past the old ones, then it is a restart too', () => {
    const before: InstanceTraffic = { responses: 3, errors: 0, buckets: buckets([inf, 3]), startedAt: 1000 }
    const after: InstanceTraffic = { responses: 8, errors: 0, buckets: buckets([inf, 8]), startedAt: 2000 }
    expect(trafficBetween(before, after, 1).responses).toBe(8)
    expect(trafficBetween(before, { ...after, startedAt: 1000 }, 1).responses).toBe(5)
  })
})

describe('the quantile of a histogram', () => {
  it("when the rank falls in the first bucket, then it is interpolated from 0; in +Inf, it is the largest finite bound (as Prometheus' histogram_quantile)", () => {
    expect(histogramQuantile(0.95, buckets([0.01, 100], [0.1, 100], [inf, 100]))).toBeCloseTo(0.0095, 10)
    expect(histogramQuantile(0.95, buckets([0.01, 10], [0.1, 50], [inf, 100]))).toBe(0.1)
    expect(histogramQuantile(0.5, buckets([0.1, 0], [0.2, 10], [inf, 10]))).toBeCloseTo(0.15, 10)
    expect(histogramQuantile(0.95, buckets([0.1, 0], [inf, 0]))).toBeNaN()
  })

  it('when histograms have different bounds, then merging never invents observations below a bound', () => {
    expect(mergeBuckets([buckets([0.1, 4], [inf, 5]), buckets([0.05, 1], [0.5, 3], [inf, 3])])).toEqual(
      buckets([0.05, 1], [0.1, 5], [0.5, 7], [inf, 8]),
    )
  })
})
