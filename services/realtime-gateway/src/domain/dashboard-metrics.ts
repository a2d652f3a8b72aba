// The live dashboard's figures (spec: Real-time records, metrics), as pure rules: what an instance's Prometheus text
// says about its HTTP traffic, and the figures two successive scrapes of every instance give — requests per second,
// the share of 5xx answers and the 95th percentile latency, all services together.
//
// Every figure comes from the kit's `http_request_duration_seconds` histogram (labels method, route, status): its
// `_count` is the responses (by status, which the plain counters lack), its buckets the latencies. The operations
// routes (/metrics, /health...) are left out: the dashboard's own scrapes and Consul's checks would otherwise show
// as traffic on an idle system.

/** One sample line of the Prometheus text format: `name{label="value",...} value`. */
export interface PromSample {
  name: string
  labels: Record<string, string>
  value: number
}

/** What one scrape of an instance says about its HTTP traffic since it started. */
export interface InstanceTraffic {
  /** responses sent (the histogram's count) */
  responses: number
  /** of which 5xx */
  errors: number
  /** cumulative count of responses at each bucket's upper bound (seconds), +Inf included; ascending */
  buckets: Bucket[]
  /** process_start_time_seconds, when exposed: a new value means the instance restarted */
  startedAt?: number
}

/** A cumulative histogram bucket: how many observations were <= `le` seconds. */
export interface Bucket {
  le: number
  count: number
}

/** An instance's traffic between two scrapes, and how long apart they were. */
export interface TrafficDelta {
  responses: number
  errors: number
  buckets: Bucket[]
  seconds: number
}

export interface TrafficFigures {
  requestsPerSecond: number
  /** 0..1; 0 when there were no responses */
  errorRate: number
  /** milliseconds; 0 when there were no responses */
  p95Latency: number
}

export const durationHistogram = 'http_request_duration_seconds'
const startTimeMetric = 'process_start_time_seconds'

/** What the traffic figures read of a scrape; everything else is skipped while parsing. */
export const trafficMetricNames: ReadonlySet<string> = new Set([
  `${durationHistogram}_bucket`,
  `${durationHistogram}_count`,
  startTimeMetric,
])

/** The chassis' operations routes (service-kit's plugin keeps them answering in maintenance): not user traffic. */
const operationsRoutes: ReadonlySet<string> = new Set([
  '/health',
  '/healthz',
  '/health/live',
  '/health/ready',
  '/metrics',
])

export const isUserTraffic = (route: string | undefined): boolean =>
  route === undefined || !operationsRoutes.has(route)

const sampleLine = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)(?:\s+-?\d+)?\s*$/
const labelPair = /\s*([a-zA-Z_][a-zA-Z0-9_]*)\s*=\s*"((?:[^"\\]|\\.)*)"\s*,?/gy

const unescapeLabel = (value: string) =>
  value.replace(/\\(.)/g, (_match, char: string) => (char === 'n' ? '\n' : char))

function numberOf(text: string): number {
  if (text === '+Inf' || text === 'Inf') return Number.POSITIVE_INFINITY
  if (text === '-Inf') return Number.NEGATIVE_INFINITY
  return Number(text) // 'NaN' is NaN, as meant
}

function labelsOf(text: string | undefined): Record<string, string> | undefined {
  const labels: Record<string, string> = {}
  if (text === undefined || text.trim() === '') return labels
  labelPair.lastIndex = 0
  let consumed = 0
  for (let match = labelPair.exec(text); match; match = labelPair.exec(text)) {
    labels[match[1] as string] = unescapeLabel(match[2] as string)
    consumed = labelPair.lastIndex
  }
  return text.slice(consumed).trim() === '' ? labels : undefined
}

/**
 * The samples of a Prometheus text exposition (format 0.0.4), in order; comments, blank and malformed lines are
 * skipped. `names`, when given, keeps only the samples of those metric names (the others are not even split).
 */
export function parsePrometheusText(text: string, names?: ReadonlySet<string>): PromSample[] {
  const samples: PromSample[] = []
  for (const raw of text.split('\n')) {
    const line = raw.trim()
    if (line === '' || line.startsWith('#')) continue
    if (names) {
      const end = line.search(/[\s{]/)
      if (!names.has(end === -1 ? line : line.slice(0, end))) continue
    }
    const match = sampleLine.exec(line)
    if (!match) continue
    const labels = labelsOf(match[2])
    if (!labels) continue
    samples.push({ name: match[1] as string, labels, value: numberOf(match[3] as string) })
  }
  return samples
}

/**
 * The cumulative count at bound `le` of a histogram known only at `buckets` (ascending): the count at the largest
 * bound <= `le`, so histograms with different bounds can be added without inventing observations.
 */
function countAt(buckets: readonly Bucket[], le: number): number {
  let count = 0
  for (const bucket of buckets) {
    if (bucket.le > le) break
    count = bucket.count
  }
  return count
}

/** Adds cumulative histograms bound by bound, over the union of their bounds (+Inf always present). */
export function mergeBuckets(histograms: readonly (readonly Bucket[])[]): Bucket[] {
  const bounds = new Set<number>([Number.POSITIVE_INFINITY])
  for (const buckets of histograms) for (const { le } of buckets) bounds.add(le)
  return [...bounds]
    .sort((a, b) => a - b)
    .map((le) => ({ le, count: histograms.reduce((sum, buckets) => sum + countAt(buckets, le), 0) }))
}

/** An instance's traffic from its scrape's samples (the duration histogram's series of user routes, added up). */
export function instanceTrafficOf(samples: readonly PromSample[]): InstanceTraffic {
  let responses = 0
  let errors = 0
  let startedAt: number | undefined
  const series = new Map<string, Bucket[]>()
  for (const { name, labels, value } of samples) {
    if (name === startTimeMetric) {
      startedAt = value
      continue
    }
    if (!isUserTraffic(labels.route) || !Number.isFinite(value)) continue
    if (name === `${durationHistogram}_count`) {
      responses += value
      if (/^5\d\d$/.test(labels.status ?? '')) errors += value
    } else if (name === `${durationHistogram}_bucket` && labels.le !== undefined) {
      const { le, ...rest } = labels
      const key = JSON.stringify(Object.entries(rest).sort(([a], [b]) => a.localeCompare(b)))
      const buckets = series.get(key) ?? []
      buckets.push({ le: numberOf(le), count: value })
      series.set(key, buckets)
    }
  }
  const histograms = [...series.values()].map((buckets) => buckets.sort((a, b) => a.le - b.le))
  return {
    responses,
    errors,
    buckets: mergeBuckets(histograms),
    ...(startedAt !== undefined ? { startedAt } : {}),
  }
}

/**
 * Whether the instance restarted between the scrapes: another start time, or any count gone down (its counters
 * started again from 0).
 */
export function restartedBetween(previous: InstanceTraffic, current: InstanceTraffic): boolean {
  if (
    previous.startedAt !== undefined &&
    current.startedAt !== undefined &&
    previous.startedAt !== current.startedAt
  )
    return true
  if (current.responses < previous.responses || current.errors < previous.errors) return true
  return current.buckets.some((bucket) => bucket.count < countAt(previous.buckets, bucket.le))
}

/**
 * The traffic between two scrapes of one instance `seconds` apart. After a restart the counters began again from
 * 0 in between, so the current values are the traffic (as Prometheus' rate() treats a counter reset).
 */
export function trafficBetween(
  previous: InstanceTraffic,
  current: InstanceTraffic,
  seconds: number,
): TrafficDelta {
  if (restartedBetween(previous, current)) return { ...current, buckets: [...current.buckets], seconds }
  return {
    responses: current.responses - previous.responses,
    errors: current.errors - previous.errors,
    buckets: current.buckets.map(({ le, count }) => ({ le, count: count - countAt(previous.buckets, le) })),
    seconds,
  }
}

/**
 * The q-quantile of a cumulative histogram, as Prometheus' histogram_quantile computes it: the bucket holding the
 * q·total-th observation, linearly interpolated inside it (the first bucket starts at 0); in the +Inf bucket, the
 * largest finite bound. NaN when the histogram is empty.
 */
export function histogramQuantile(q: number, buckets: readonly Bucket[]): number {
  const sorted = [...buckets].sort((a, b) => a.le - b.le)
  const total = sorted.at(-1)?.count ?? 0
  if (sorted.length === 0 || total <= 0 || sorted.at(-1)?.le !== Number.POSITIVE_INFINITY) return Number.NaN
  const rank = q * total
  let lowerBound = 0
  let countBelow = 0
  for (const [index, { le, count }] of sorted.entries()) {
    if (count >= rank) {
      if (le === Number.POSITIVE_INFINITY) return index > 0 ? (sorted[index - 1] as Bucket).le : 0
      if (index === 0 && le <= 0) return le
      const inBucket = count - countBelow
      if (inBucket <= 0) return le
      return lowerBound + (le - lowerBound) * ((rank - countBelow) / inBucket)
    }
    lowerBound = le
    countBelow = count
  }
  return Number.NaN
}

const round = (value: number, digits: number) => {
  const factor = 10 ** digits
  return Math.round(value * factor) / factor
}

/**
 * The dashboard's figures from every instance's traffic since its previous scrape: requests per second added up
 * over the instances (each over its own interval), the share of 5xx among all responses, and the 95th percentile of
 * the latencies of all responses (the instances' buckets merged), in ms. No traffic: every figure is 0.
 */
export function trafficFigures(deltas: readonly TrafficDelta[]): TrafficFigures {
  const counted = deltas.filter((delta) => delta.seconds > 0)
  const requestsPerSecond = counted.reduce((sum, delta) => sum + delta.responses / delta.seconds, 0)
  const responses = counted.reduce((sum, delta) => sum + delta.responses, 0)
  const errors = counted.reduce((sum, delta) => sum + delta.errors, 0)
  const p95Seconds = histogramQuantile(0.95, mergeBuckets(counted.map((delta) => delta.buckets)))
  return {
    requestsPerSecond: round(Math.max(0, requestsPerSecond), 3),
    errorRate: responses > 0 ? round(Math.min(1, Math.max(0, errors / responses)), 4) : 0,
    p95Latency: Number.isFinite(p95Seconds) ? round(Math.max(0, p95Seconds * 1000), 3) : 0,
  }
}
