// bench:graphql's arithmetic and report, pure: the posts' titles that carry their sequence numbers, delivery latency
// over every (post, subscriber) pair, the chassis/bare ratios, the two tables and the verdicts against the aims.
import type { ServerName } from '../ipc.ts'
import { formatRows, type LatencySummary, latencySummary } from '../realtime/figures.ts'
import { type RunResult, type ScenarioRatio, throughputBar } from '../report.ts'

export const aims = Object.freeze({
  /** the chassis keeps at least this share of bare mercurius's requests/s */
  throughput: throughputBar,
  /** postCreated from a mutation on instance 1 to a subscriber of instance 2, p99, at `deliveryRate` */
  deliveryP99Ms: 50,
  deliveryRate: 100,
})

export const throughputLabel = 'POST /graphql posts(limit: 20)'

const titlePrefix = 'bench post '

/** The title of the run's post `seq` (probes are negative). */
export const postTitle = (seq: number): string => `${titlePrefix}${seq}`

/** The sequence number a post's title carries, or undefined when it is not one of the bench's. */
export function seqOfTitle(title: string): number | undefined {
  if (!title.startsWith(titlePrefix)) return undefined
  const digits = title.slice(titlePrefix.length)
  if (!/^-?\d+$/.test(digits)) return undefined
  return Number(digits)
}

/** One server's throughput: the users bench's figures without its scenario. */
export type ThroughputResult = Omit<RunResult, 'scenario'>
export type ThroughputRatio = Omit<ScenarioRatio, 'scenario'>

/** chassis / bare, or null without a complete pair. */
export function throughputRatio(chassis: ThroughputResult, bare: ThroughputResult): ThroughputRatio | null {
  if (bare.requestsPerSecond === 0 || bare.p50Ms === 0 || bare.cpuMsPerRequest === 0) return null
  return {
    throughput: chassis.requestsPerSecond / bare.requestsPerSecond,
    p50Latency: chassis.p50Ms / bare.p50Ms,
    cpuPerRequest: chassis.cpuMsPerRequest / bare.cpuMsPerRequest,
  }
}

/** A createPost mutation of the measured window, as the load generator saw it. */
export interface SentPost {
  seq: number
  /** monotonicMs() when the request left */
  sentAt: number
  /** request -> answer, ms (undefined when no answer came) */
  answerMs?: number
  /** 200 with the post's id and no errors */
  accepted: boolean
}

export interface DeliveryFigures {
  postsSent: number
  postsAccepted: number
  /** accepted posts x subscribers */
  expected: number
  received: number
  lost: number
  /** every (accepted post, subscriber) receive - send, ms */
  latency: LatencySummary
  /** the createPost mutation's own answer, ms */
  mutation: LatencySummary
}

/** Pairs each accepted post with its receipts (`receipts[seq]`, one time per subscriber that had it). */
export function deliveryFigures(
  posts: readonly SentPost[],
  receipts: Readonly<Record<number, readonly number[]>>,
  subscribers: number,
): DeliveryFigures {
  const accepted = posts.filter((post) => post.accepted)
  const latencies: number[] = []
  for (const post of accepted) {
    // a subscriber hears a post once: more receipts than subscribers would be someone else's post
    for (const at of (receipts[post.seq] ?? []).slice(0, subscribers)) latencies.push(at - post.sentAt)
  }
  const expected = accepted.length * subscribers
  return {
    postsSent: posts.length,
    postsAccepted: accepted.length,
    expected,
    received: latencies.length,
    lost: expected - latencies.length,
    latency: latencySummary(latencies),
    mutation: latencySummary(posts.flatMap((post) => (post.answerMs === undefined ? [] : [post.answerMs]))),
  }
}

export interface DeliveryResult extends DeliveryFigures {
  server: ServerName
  ratePerSecond: number
  seconds: number
  /** subscribers connected to instance 2 */
  subscribers: number
  /** measured mutations not accepted, by status or error */
  refused: Record<string, number>
  /** errors the subscribers received instead of a post (probes and warm-up included), by message */
  subscriptionErrors: Record<string, number>
  /** the most a mutation left behind its schedule, ms */
  lagMs: number
  payloadBytes: number
}

const ms = (value: number) => value.toFixed(2)
const percent = (ratio: number) => `${(ratio * 100).toFixed(1)}%`

export function formatThroughputTable(results: readonly ThroughputResult[]): string {
  return formatRows(
    ['scenario', 'server', 'requests/s', 'p50 ms', 'p99 ms', 'errors/non-2xx', 'RSS MB (peak)', 'CPU ms/req'],
    results.map((r) => [
      throughputLabel,
      r.server,
      r.requestsPerSecond.toFixed(1),
      ms(r.p50Ms),
      ms(r.p99Ms),
      `${r.errors}/${r.non2xx}`,
      `${r.rssMb.toFixed(1)} (${r.peakRssMb.toFixed(1)})`,
      r.cpuMsPerRequest.toFixed(3),
    ]),
    2,
  )
}

export function formatDeliveryTable(results: readonly DeliveryResult[]): string {
  return formatRows(
    [
      'scenario',
      'server',
      'posts/s',
      'posts',
      'expected',
      'received',
      'lost',
      'p50 ms',
      'p99 ms',
      'max ms',
      'mutation p50 ms',
      'mutation p99 ms',
    ],
    results.map((r) => [
      `postCreated, 2 instances, ${r.subscribers} subscribers`,
      r.server,
      String(r.ratePerSecond),
      `${r.postsAccepted}/${r.postsSent}`,
      String(r.expected),
      String(r.received),
      String(r.lost),
      ms(r.latency.p50Ms),
      ms(r.latency.p99Ms),
      ms(r.latency.maxMs),
      ms(r.mutation.p50Ms),
      ms(r.mutation.p99Ms),
    ]),
    2,
  )
}

export const keepsThroughput = (ratio: ThroughputRatio | null): boolean =>
  ratio !== null && ratio.throughput >= aims.throughput

export function formatThroughputVerdict(ratio: ThroughputRatio | null): string {
  if (ratio === null)
    return `the chassis keeps >= ${percent(aims.throughput)} of bare throughput: no (no complete pair of runs)`
  return [
    `chassis/bare ${throughputLabel}: throughput ${percent(ratio.throughput)}, ` +
      `p50 latency x${ratio.p50Latency.toFixed(2)}, CPU per request x${ratio.cpuPerRequest.toFixed(2)}`,
    `the chassis keeps >= ${percent(aims.throughput)} of bare throughput: ${keepsThroughput(ratio) ? 'yes' : 'no'}`,
  ].join('\n')
}

/** The aim holds when every delivery came and p99 is under the bound, at the aim's rate. */
export function deliveryVerdict(result: DeliveryResult): 'met' | 'not met' | 'not shown' {
  const fast = result.lost === 0 && result.received > 0 && result.latency.p99Ms < aims.deliveryP99Ms
  if (!fast) return 'not met'
  return result.ratePerSecond >= aims.deliveryRate ? 'met' : 'not shown'
}

export function formatDeliveryVerdict(chassis: DeliveryResult, bare: DeliveryResult | undefined): string {
  const verdict = deliveryVerdict(chassis)
  const against =
    bare && bare.latency.p99Ms > 0
      ? ` (bare ${ms(bare.latency.p99Ms)} ms, x${(chassis.latency.p99Ms / bare.latency.p99Ms).toFixed(2)})`
      : ''
  const why =
    verdict === 'not shown'
      ? ` (p99 within it at ${chassis.ratePerSecond} posts/s, below the aim's rate)`
      : chassis.lost > 0
        ? ` (${chassis.lost} of ${chassis.expected} deliveries lost)`
        : ''
  return (
    `postCreated across two instances, chassis p99 ${ms(chassis.latency.p99Ms)} ms${against}\n` +
    `aim "p99 < ${aims.deliveryP99Ms} ms at ${aims.deliveryRate} posts/s, nothing lost" (chassis): ${verdict}${why}`
  )
}
