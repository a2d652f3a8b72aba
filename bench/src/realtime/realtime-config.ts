// bench:realtime's knobs, from the environment (all optional): the only reader of process.env on the parent side.
import { integerKnob, positiveIntegerKnob } from '../knobs.ts'

export type RealtimePhase = 'sockets' | 'orders'
const knownPhases: readonly RealtimePhase[] = ['sockets', 'orders']

export interface RealtimeConfig {
  phases: RealtimePhase[]
  /** sockets held on each server for memory, connection rate, broadcasts and chat (BENCH_REALTIME_SOCKETS) */
  sockets: number
  /** of them, how many also open `/` and receive the broadcasts */
  broadcastSockets: number
  broadcasts: number
  /** a broadcast starts at most this often (and only once the one before has reached every socket) */
  broadcastIntervalMs: number
  /** broadcasts sent first and not counted */
  warmupBroadcasts: number
  /** the broadcast chat message's text; the payload the sockets receive is its envelope around it (~200 bytes) */
  textBytes: number
  /** sockets held by the gateway alone at the end; 0 skips it */
  holdSockets: number
  /** processes the held sockets are spread over (each also needs one descriptor per socket) */
  clientProcesses: number
  /** connections in flight at once, per client process */
  connectConcurrency: number
  /** 127.0.0.1, 127.0.0.2, … as the clients' source addresses, round-robin */
  sourceAddresses: number
  chatters: number
  chatIntervalMs: number
  /** the flood run on the gateway: one socket's chat:message per second (0 skips it) */
  floodRate: number
  /** the flood's message text, characters (the chat maximum by default) */
  floodTextBytes: number
  /** both servers' Engine.IO heartbeat (the gateway's REALTIME_PING_* defaults) */
  pingIntervalMs: number
  pingTimeoutMs: number
  /** bare's permessage-deflate: off (Socket.IO's default), `gateway` (the gateway's settings), `no-context-takeover` */
  bareDeflate: BareDeflate
  /** the open-file limit the bench raises itself (and so its children) to; 0 leaves it */
  fileLimit: number
  ordersRate: number
  ordersSeconds: number
  ordersCustomers: number
  inheritedEnv: NodeJS.ProcessEnv
}

function phaseList(env: NodeJS.ProcessEnv): RealtimePhase[] {
  const raw = env.BENCH_REALTIME_PHASES
  if (raw === undefined || raw.trim() === '') return [...knownPhases]
  const names = raw.split(',').map((name) => name.trim())
  const unknown = names.filter((name) => !knownPhases.includes(name as RealtimePhase))
  if (unknown.length > 0)
    throw new Error(`BENCH_REALTIME_PHASES: unknown ${unknown.join(', ')} (known: ${knownPhases.join(', ')})`)
  return names as RealtimePhase[]
}

export type BareDeflate = 'off' | 'gateway' | 'no-context-takeover'
const bareDeflates: readonly BareDeflate[] = ['off', 'gateway', 'no-context-takeover']

function bareDeflateOf(raw: string | undefined): BareDeflate {
  if (raw === undefined || raw === '') return 'off'
  if (!bareDeflates.includes(raw as BareDeflate))
    throw new Error(`BENCH_REALTIME_BARE_DEFLATE: '${raw}' is not one of ${bareDeflates.join(', ')}`)
  return raw as BareDeflate
}

export function loadRealtimeConfig(env: NodeJS.ProcessEnv = process.env): RealtimeConfig {
  const sockets = positiveIntegerKnob(env, 'BENCH_REALTIME_SOCKETS', 10_000)
  const broadcastSockets = Math.min(
    sockets,
    positiveIntegerKnob(env, 'BENCH_REALTIME_BROADCAST_SOCKETS', Math.min(5000, Math.ceil(sockets / 2))),
  )
  return {
    phases: phaseList(env),
    sockets,
    broadcastSockets,
    broadcasts: positiveIntegerKnob(env, 'BENCH_REALTIME_BROADCASTS', 20),
    broadcastIntervalMs: positiveIntegerKnob(env, 'BENCH_REALTIME_BROADCAST_INTERVAL_MS', 1000),
    warmupBroadcasts: integerKnob(env, 'BENCH_REALTIME_WARMUP_BROADCASTS', 2, 0),
    textBytes: integerKnob(env, 'BENCH_REALTIME_TEXT_BYTES', 8, 4),
    holdSockets: integerKnob(env, 'BENCH_REALTIME_HOLD', 20_000, 0),
    clientProcesses: positiveIntegerKnob(env, 'BENCH_REALTIME_CLIENT_PROCESSES', 4),
    connectConcurrency: positiveIntegerKnob(env, 'BENCH_REALTIME_CONNECT_CONCURRENCY', 50),
    sourceAddresses: Math.min(254, positiveIntegerKnob(env, 'BENCH_REALTIME_SOURCE_ADDRESSES', 8)),
    chatters: positiveIntegerKnob(env, 'BENCH_REALTIME_CHATTERS', 4),
    chatIntervalMs: positiveIntegerKnob(env, 'BENCH_REALTIME_CHAT_INTERVAL_MS', 100),
    floodRate: integerKnob(env, 'BENCH_REALTIME_FLOOD_RATE', 1000, 0),
    floodTextBytes: Math.min(5000, positiveIntegerKnob(env, 'BENCH_REALTIME_FLOOD_TEXT_BYTES', 5000)),
    pingIntervalMs: positiveIntegerKnob(env, 'BENCH_REALTIME_PING_INTERVAL_MS', 25_000),
    pingTimeoutMs: positiveIntegerKnob(env, 'BENCH_REALTIME_PING_TIMEOUT_MS', 20_000),
    bareDeflate: bareDeflateOf(env.BENCH_REALTIME_BARE_DEFLATE),
    fileLimit: integerKnob(env, 'BENCH_REALTIME_FILE_LIMIT', 200_000, 0),
    ordersRate: positiveIntegerKnob(env, 'BENCH_REALTIME_ORDERS_RATE', 50),
    ordersSeconds: positiveIntegerKnob(env, 'BENCH_REALTIME_ORDERS_SECONDS', 30),
    ordersCustomers: positiveIntegerKnob(env, 'BENCH_REALTIME_ORDERS_CUSTOMERS', 100),
    inheritedEnv: env,
  }
}

/** `count` split over `parts` as evenly as possible, the larger shares first. */
export function shares(count: number, parts: number): number[] {
  const base = Math.floor(count / parts)
  return Array.from({ length: parts }, (_, i) => base + (i < count % parts ? 1 : 0))
}

/** 127.0.0.1 … 127.0.0.<count>: every address of 127.0.0.0/8 is the loopback on Linux. */
export const sourceAddressesOf = (count: number): string[] =>
  Array.from({ length: count }, (_, i) => `127.0.0.${i + 1}`)
