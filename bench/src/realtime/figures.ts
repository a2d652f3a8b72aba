// bench:realtime's arithmetic and report, pure: memory per socket, latency summaries, ratios against bare Socket.IO
// with their aims, and the tables.
import { percentile } from '../load.ts'

export type RealtimeServer = 'gateway' | 'bare'

/** What a server process holds, bytes (a settled snapshot: after a full collection). */
export interface HeldMemory {
  rss: number
  heapUsed: number
  /** Buffers, ArrayBuffers, zlib's and the like (not in the heap) */
  external: number
}

export interface PerSocketMemory {
  /** (RSS with the sockets - RSS idle) / sockets, bytes */
  rssBytes: number
  heapBytes: number
  externalBytes: number
}

/** The memory `sockets` connected sockets add to a server: the growth over its idle figures, per socket. */
export function perSocketMemory(idle: HeldMemory, connected: HeldMemory, sockets: number): PerSocketMemory {
  if (!Number.isInteger(sockets) || sockets <= 0) return { rssBytes: 0, heapBytes: 0, externalBytes: 0 }
  return {
    rssBytes: (connected.rss - idle.rss) / sockets,
    heapBytes: (connected.heapUsed - idle.heapUsed) / sockets,
    externalBytes: (connected.external - idle.external) / sockets,
  }
}

export interface LatencySummary {
  count: number
  p50Ms: number
  p99Ms: number
  maxMs: number
}

export function latencySummary(values: readonly number[]): LatencySummary {
  const sorted = [...values].sort((a, b) => a - b)
  return {
    count: sorted.length,
    p50Ms: percentile(sorted, 0.5),
    p99Ms: percentile(sorted, 0.99),
    maxMs: sorted.at(-1) ?? 0,
  }
}

/** Sockets per second of a connection phase (0 when nothing connected or no time passed). */
export const perSecond = (count: number, elapsedMs: number): number =>
  count > 0 && elapsedMs > 0 ? count / (elapsedMs / 1000) : 0

/** The aims of the issue: gateway/bare at most `atMost` (memory per socket, broadcast p99), or a bound of its own. */
export const aims = Object.freeze({
  memoryPerSocket: 1.15,
  broadcastP99: 1.2,
  /** the others' broadcast p99 while one socket floods, against the quiet run's */
  floodBroadcastP99: 1.5,
  holdSockets: 20_000,
  ordersP99Ms: 150,
  ordersRate: 50,
})

export interface Comparison {
  /** gateway / bare; null when bare is 0 or either is missing */
  ratio: number | null
  /** met, not met, or null when the comparison has no aim or no ratio */
  met: boolean | null
}

export function compare(gateway: number | null, bare: number | null, atMost?: number): Comparison {
  const ratio = gateway !== null && bare !== null && bare > 0 ? gateway / bare : null
  return { ratio, met: atMost === undefined || ratio === null ? null : ratio <= atMost }
}

/** The figures of one server in the sockets phase. */
export interface SocketsResult {
  server: RealtimeServer
  /** sockets asked for */
  sockets: number
  connected: number
  failed: number
  /** a few of the connection errors' messages, with their counts */
  errors: Record<string, number>
  connectMs: number
  connectionsPerSecond: number
  idle: HeldMemory
  loaded: HeldMemory
  perSocket: PerSocketMemory
  broadcast: BroadcastResult
  chat: ChatResult
  /** the same broadcasts and chat again while one socket floods (the gateway only: bare has no limits) */
  flood?: FloodResult
}

/** What the flooder did (client-ipc.ts' FloodStopReply). */
export interface FlooderFigures {
  sent: number
  skipped: number
  accepted: number
  refused: number
  connections: number
  seconds: number
}

export interface FloodResult {
  /** chat:message per second the flooder sends */
  ratePerSecond: number
  /** its text, characters */
  textBytes: number
  broadcast: BroadcastResult
  chat: ChatResult
  flooder: FlooderFigures
}

export interface BroadcastResult {
  /** sockets that listened */
  receivers: number
  /** opening /chat on the receivers' connections and joining the broadcast room, ms */
  joinMs: number
  broadcasts: number
  /** a broadcast's JSON payload as the sockets received it */
  payloadBytes: number
  /** every (socket, broadcast) receive - send, ms */
  latency: LatencySummary
  /** per broadcast, its last socket's receive - send (the fan-out's end), ms */
  lastSocket: LatencySummary
  /** receptions that never came (receivers x broadcasts - received) */
  missing: number
}

export interface ChatResult {
  chatters: number
  /** chat:message -> the sender's own chat:message, ms */
  roundTrip: LatencySummary
  failed: number
}

export function formatRows(header: string[], rows: string[][], leftColumns = 1): string {
  const widths = header.map((title, column) =>
    Math.max(title.length, ...rows.map((row) => (row[column] ?? '').length)),
  )
  const line = (cells: string[]) =>
    cells
      .map((cell, column) =>
        column < leftColumns ? cell.padEnd(widths[column]!) : cell.padStart(widths[column]!),
      )
      .join('  ')
      .trimEnd()
  return [line(header), line(widths.map((width) => '-'.repeat(width))), ...rows.map(line)].join('\n')
}

const kb = (bytes: number) => (bytes / 1024).toFixed(2)
const msFigure = (value: number) => value.toFixed(2)
const count = (value: number) => value.toLocaleString('en-US')
const verdictOf = ({ met }: Comparison) => (met === null ? '-' : met ? 'met' : 'not met')
const ratioOf = ({ ratio }: Comparison) => (ratio === null ? '-' : `x${ratio.toFixed(2)}`)

/** The table of the sockets phase: one row per measure, gateway and bare side by side. */
export function formatSocketsTable(gateway: SocketsResult, bare: SocketsResult): string {
  const sockets = count(gateway.sockets)
  const receivers = `${count(gateway.broadcast.receivers)} sockets, ${gateway.broadcast.payloadBytes} B`
  const row = (
    measure: string,
    figure: (result: SocketsResult) => number,
    format: (value: number) => string,
    atMost?: number,
  ): string[] => {
    const comparison = compare(figure(gateway), figure(bare), atMost)
    return [
      measure,
      format(figure(gateway)),
      format(figure(bare)),
      ratioOf(comparison),
      atMost === undefined ? '-' : `<= x${atMost.toFixed(2)}`,
      verdictOf(comparison),
    ]
  }
  return formatRows(
    ['measure', 'gateway', 'bare', 'gateway/bare', 'aim', 'verdict'],
    [
      row(`connected sockets (of ${sockets})`, (r) => r.connected, count),
      row(`RSS per socket KB (${sockets})`, (r) => r.perSocket.rssBytes, kb, aims.memoryPerSocket),
      row(`heap per socket KB (${sockets})`, (r) => r.perSocket.heapBytes, kb, aims.memoryPerSocket),
      row(`external per socket KB (${sockets})`, (r) => r.perSocket.externalBytes, kb),
      row(
        `connections/s (${sockets})`,
        (r) => r.connectionsPerSecond,
        (v) => v.toFixed(0),
      ),
      row(
        `join the room s (${count(gateway.broadcast.receivers)} sockets)`,
        (r) => r.broadcast.joinMs / 1000,
        (v) => v.toFixed(1),
      ),
      row(`broadcast p50 ms (${receivers})`, (r) => r.broadcast.latency.p50Ms, msFigure),
      row(`broadcast p99 ms (${receivers})`, (r) => r.broadcast.latency.p99Ms, msFigure, aims.broadcastP99),
      row('broadcast to the last socket p50 ms', (r) => r.broadcast.lastSocket.p50Ms, msFigure),
      row('broadcast receptions missing', (r) => r.broadcast.missing, count),
      row('chat round trip p50 ms', (r) => r.chat.roundTrip.p50Ms, msFigure),
      row('chat round trip p99 ms', (r) => r.chat.roundTrip.p99Ms, msFigure),
    ],
  )
}

/**
 * The flood table: the gateway's broadcasts and chat quiet and while one socket floods, side by side, with bare's quiet
 * figures for reference; then what the flooder did.
 */
export function formatFloodTable(gateway: SocketsResult, bare: SocketsResult): string {
  const flood = gateway.flood
  if (!flood) return ''
  const quietRun = { broadcast: gateway.broadcast, chat: gateway.chat }
  const row = (
    measure: string,
    figure: (run: { broadcast: BroadcastResult; chat: ChatResult }) => number,
    format: (value: number) => string,
    atMost?: number,
  ): string[] => {
    const comparison = compare(figure(flood), figure(quietRun), atMost)
    return [
      measure,
      format(figure(quietRun)),
      format(figure(flood)),
      ratioOf(comparison),
      atMost === undefined ? '-' : `<= x${atMost.toFixed(2)}`,
      verdictOf(comparison),
      format(figure(bare)),
    ]
  }
  const { flooder } = flood
  const connectedSeconds = flooder.seconds > 0 ? flooder.seconds : 1
  return [
    `one socket floods: chat:message of ${count(flood.textBytes)} characters at ${count(flood.ratePerSecond)}/s ` +
      'into a room of its own, while the same broadcasts and chat run again',
    formatRows(
      ['measure', 'quiet', 'flood', 'flood/quiet', 'aim', 'verdict', 'bare (quiet)'],
      [
        row('broadcast p50 ms', (r) => r.broadcast.latency.p50Ms, msFigure),
        row('broadcast p99 ms', (r) => r.broadcast.latency.p99Ms, msFigure, aims.floodBroadcastP99),
        row('broadcast to the last socket p50 ms', (r) => r.broadcast.lastSocket.p50Ms, msFigure),
        row('broadcast receptions missing', (r) => r.broadcast.missing, count),
        row('chat round trip p50 ms', (r) => r.chat.roundTrip.p50Ms, msFigure),
        row('chat round trip p99 ms', (r) => r.chat.roundTrip.p99Ms, msFigure),
      ],
    ),
    `flooder: sent ${count(flooder.sent)} in ${flooder.seconds.toFixed(1)} s ` +
      `(${count(Math.round(flooder.sent / connectedSeconds))}/s; ${count(flooder.skipped)} due while not connected), ` +
      `accepted ${count(flooder.accepted)}, refused ${count(flooder.refused)} (RATE_LIMITED), ` +
      `connections ${count(flooder.connections)}`,
  ].join('\n')
}

export interface HoldResult {
  target: number
  connected: number
  failed: number
  errors: Record<string, number>
  /** the gateway's /metrics activeConnections while they were held (null when it could not be read) */
  activeConnections: number | null
  connectMs: number
  rssMb: number
  heapUsedMb: number
  /** the open-file limit of the processes (one descriptor per socket, plus the gateway's own ~50) */
  fileLimit: number
}

/** Descriptors a gateway process uses besides its sockets (database pool, Redis, Kafka, Consul, stdio, epoll). */
export const gatewayOwnDescriptors = 50

export const holdPassed = (hold: HoldResult): boolean =>
  hold.connected >= hold.target && (hold.activeConnections ?? 0) >= hold.target

export function formatHold(hold: HoldResult): string {
  return (
    `${count(hold.target)} authenticated sockets held by one realtime-gateway process: ` +
    `${holdPassed(hold) ? 'pass' : 'fail'} (connected ${count(hold.connected)}, failed ${count(hold.failed)}, ` +
    `/metrics activeConnections ${hold.activeConnections === null ? '-' : count(hold.activeConnections)}, ` +
    `RSS ${hold.rssMb.toFixed(1)} MB, heap ${hold.heapUsedMb.toFixed(1)} MB, ` +
    `connected in ${(hold.connectMs / 1000).toFixed(1)} s)` +
    (hold.fileLimit < hold.target + gatewayOwnDescriptors
      ? `; the open-file limit is ${count(hold.fileLimit)}, so one process cannot hold ${count(hold.target)} sockets: raise it (prlimit --nofile, as root with CAP_SYS_RESOURCE) or set BENCH_REALTIME_HOLD below it`
      : '')
  )
}

export interface OrdersResult {
  ratePerSecond: number
  seconds: number
  customers: number
  sent: number
  accepted: number
  refused: Record<string, number>
  /** POST /api/v1/orders sent -> the customer's notification:new (order_placed), ms */
  latency: LatencySummary
  /** POST /api/v1/orders sent -> its answer, ms */
  answer: LatencySummary
  /** accepted orders whose notification never came within the wait */
  lost: number
  /** how far behind its schedule the last order went out, ms */
  lagMs: number
  /** customers whose socket did not connect */
  socketsFailed: number
}

export function formatOrders(orders: OrdersResult): string {
  // the aim is at its rate: a lower rate shows the latency there, it does not meet the aim
  const atRate = orders.ratePerSecond >= aims.ordersRate
  const fast = orders.lost === 0 && orders.latency.count > 0 && orders.latency.p99Ms < aims.ordersP99Ms
  return (
    `order placed -> notification:new at ${orders.ratePerSecond} orders/s for ${orders.seconds} s ` +
    `(${orders.customers} customers): sent ${count(orders.sent)}, accepted ${count(orders.accepted)}, ` +
    `delivered ${count(orders.latency.count)}, lost ${count(orders.lost)}; ` +
    `p50 ${msFigure(orders.latency.p50Ms)} ms, p99 ${msFigure(orders.latency.p99Ms)} ms, max ${msFigure(orders.latency.maxMs)} ms ` +
    `(the POST's own answer: p50 ${msFigure(orders.answer.p50Ms)} ms, p99 ${msFigure(orders.answer.p99Ms)} ms)\n` +
    `aim "p99 < ${aims.ordersP99Ms} ms at ${aims.ordersRate} orders/s, nothing lost": ${fast ? (atRate ? 'met' : 'not shown (p99 within it at a lower rate)') : 'not met'}` +
    (orders.ratePerSecond === aims.ordersRate ? '' : ` (measured at ${orders.ratePerSecond} orders/s)`)
  )
}
