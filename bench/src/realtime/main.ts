// `pnpm --filter @meridian/bench bench:realtime`: the realtime-gateway side by side with a bare Socket.IO server, each
// in a process of its own, the clients in processes of their own. Phase `sockets`: memory per connected socket,
// connections per second, broadcast latency to many sockets and a chat round trip under that load, the same again on
// the gateway while one socket floods (BENCH_REALTIME_FLOOD_RATE events/s), then the gateway alone holding
// BENCH_REALTIME_HOLD sockets. Phase `orders`: the whole system (@meridian/infra/system), orders placed
// at a rate, order placed -> notification:new through the gateway. Prints the tables and verdicts, writes
// results/realtime-latest.json.
import { execFileSync } from 'node:child_process'
import { randomBytes, randomUUID } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { mkdir, writeFile } from 'node:fs/promises'
import { loadavg } from 'node:os'
import { dirname } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { fileURLToPath } from 'node:url'
import { type Endpoints, ensureInfra, freePort, kafkaClient } from '@meridian/infra'
import { benchLifecycle } from '../bench-lifecycle.ts'
import { createEventsTopics } from '../events/events-topics.ts'
import { benchRedisDatabase, redisUrlWithDatabase } from '../gateway/gateway-config.ts'
import { deleteKeys } from '../redis-keys.ts'
import { machineFigures, toMb } from '../report.ts'
import { createRunDatabase } from '../run-database.ts'
import { type ServerProcess, startProcessOverIpc } from '../server-process.ts'
import type {
  BroadcastReply,
  ChatStopReply,
  ConnectReply,
  FloodStopReply,
  JoinRoomReply,
  ReceiptsReply,
} from './client-ipc.ts'
import { type ClientProcess, startClientProcess } from './client-pool.ts'
import {
  aims,
  formatFloodTable,
  formatHold,
  formatOrders,
  formatSocketsTable,
  gatewayOwnDescriptors,
  type HoldResult,
  holdPassed,
  latencySummary,
  type OrdersResult,
  perSecond,
  perSocketMemory,
  type RealtimeServer,
  type SocketsResult,
} from './figures.ts'
import { runOrdersPhase } from './orders.ts'
import { loadRealtimeConfig, type RealtimeConfig, shares, sourceAddressesOf } from './realtime-config.ts'
import { mintToken, type TokenSettings } from './tokens.ts'

const say = (message: string) => process.stderr.write(`[bench:realtime] ${message}\n`)
const resultsFile = fileURLToPath(new URL('../../results/realtime-latest.json', import.meta.url))
const gatewayEntry = fileURLToPath(new URL('../../../services/realtime-gateway/src/main.ts', import.meta.url))
const gatewayHost = fileURLToPath(new URL('./gateway-host.ts', import.meta.url))
const bareServer = fileURLToPath(new URL('./bare-server.ts', import.meta.url))

const { undo, run } = benchLifecycle(
  say,
  'cleaned up: servers and clients stopped, Redis keys and database removed',
)

/** Raises this process's open-file limit (children inherit it): root may raise the hard limit with prlimit(1). */
function raiseFileLimit(limit: number): number {
  const current = () =>
    Number(/^Max open files\s+(\d+)/m.exec(readFileSync('/proc/self/limits', 'utf8'))?.[1] ?? 0)
  if (limit > 0 && current() < limit) {
    try {
      execFileSync('prlimit', ['--pid', String(process.pid), `--nofile=${limit}:${limit}`], { stdio: 'pipe' })
    } catch (error) {
      const reason = (error as { stderr?: Buffer }).stderr?.toString().trim() || String(error)
      say(`could not raise the open-file limit to ${limit}: ${reason}; it stays ${current()}`)
    }
  }
  return current()
}

async function startClients(count: number, label: string, env: NodeJS.ProcessEnv): Promise<ClientProcess[]> {
  const clients = await Promise.all(
    Array.from({ length: count }, (_, i) => startClientProcess(`${label} client ${i + 1}`, env)),
  )
  for (const client of clients)
    undo.push({ label: `stop client pid ${client.pid}`, run: () => client.stop() })
  return clients
}

const mergeErrors = (replies: { errors: Record<string, number> }[]) => {
  const merged: Record<string, number> = {}
  for (const reply of replies)
    for (const [message, n] of Object.entries(reply.errors)) merged[message] = (merged[message] ?? 0) + n
  return merged
}

/** Connects `count` sockets to `namespace` over the client processes at once; the wall time from first to last. */
async function connectAll(
  clients: ClientProcess[],
  config: RealtimeConfig,
  url: string,
  namespace: string,
  count: number,
  tokens: TokenSettings | null,
) {
  const split = shares(count, clients.length)
  const replies = await Promise.all(
    clients.map((client, i) =>
      client.ask<ConnectReply>({
        type: 'connect',
        url,
        namespace,
        count: split[i]!,
        concurrency: config.connectConcurrency,
        localAddresses: sourceAddressesOf(config.sourceAddresses),
        tokens,
      }),
    ),
  )
  const connected = replies.reduce((sum, reply) => sum + reply.connected, 0)
  const elapsedMs =
    Math.max(...replies.map((reply) => reply.endedAt)) - Math.min(...replies.map((reply) => reply.startedAt))
  return { connected, failed: count - connected, errors: mergeErrors(replies), elapsedMs }
}

interface Participants {
  /** every held socket's token settings (the gateway) or null (bare) */
  tokens: TokenSettings | null
  /** the broadcast room: its owner sends, one user (on every receiving socket) listens */
  broadcastRoomId: string
  ownerToken: string | null
  receiverToken: string | null
  chatRoomId: string
  chatterTokens: (string | null)[]
  /** the flooder's token and its own room (the gateway; null: no flood run) */
  flood: { token: string; roomId: string } | null
}

async function socketsPhase(
  name: RealtimeServer,
  server: ServerProcess<RealtimeServer>,
  participants: Participants,
  config: RealtimeConfig,
  clientEnv: NodeJS.ProcessEnv,
): Promise<SocketsResult> {
  const url = server.baseUrl
  const clients = await startClients(config.clientProcesses, name, clientEnv)
  const [control] = await startClients(1, `${name} control`, clientEnv)
  if (!control) throw new Error('no control process')

  // warm-up (code compiled, pools opened, the first Redis scripts loaded): 100 sockets connected and closed
  await connectAll(clients.slice(0, 1), config, url, '/notifications', 100, participants.tokens)
  await clients[0]?.ask({ type: 'disconnect' })
  await sleep(2000)

  const idle = await server.settledSnapshot()
  say(
    `${name}: idle RSS ${toMb(idle.rss)} MB, heap ${toMb(idle.heapUsed)} MB; connecting ${config.sockets} sockets`,
  )
  const connection = await connectAll(
    clients,
    config,
    url,
    '/notifications',
    config.sockets,
    participants.tokens,
  )
  // let the handshakes' last promises and timers settle before the collection
  await sleep(2000)
  const loaded = await server.settledSnapshot()
  say(
    `${name}: ${connection.connected} connected in ${(connection.elapsedMs / 1000).toFixed(1)} s ` +
      `(${connection.failed} failed); RSS ${toMb(loaded.rss)} MB, heap ${toMb(loaded.heapUsed)} MB`,
  )
  for (const [message, n] of Object.entries(connection.errors)) say(`${name}: ${n} x ${message}`)

  // the broadcasts' receivers open /chat on their connection and join the broadcast room
  const joinSplit = shares(Math.min(config.broadcastSockets, connection.connected), clients.length)
  const joins = await Promise.all(
    clients.map((client, i) =>
      client.ask<JoinRoomReply>({
        type: 'join-room',
        count: joinSplit[i]!,
        roomId: participants.broadcastRoomId,
        token: participants.receiverToken,
      }),
    ),
  )
  const receivers = joins.reduce((sum, reply) => sum + reply.joined, 0)
  const joinMs = Math.max(...joins.map((reply) => reply.elapsedMs))
  say(`${name}: ${receivers} sockets joined the broadcast room in ${(joinMs / 1000).toFixed(1)} s`)
  for (const [message, n] of Object.entries(mergeErrors(joins))) say(`${name}: join: ${n} x ${message}`)

  // who must report each broadcast: the processes with receivers
  const listening = clients.filter((_, i) => (joins[i]?.joined ?? 0) > 0)
  const reported = new Map<number, number>()
  const waiters = new Map<number, () => void>()
  for (const client of listening) {
    client.onReceivedAll((seq) => {
      const count = (reported.get(seq) ?? 0) + 1
      reported.set(seq, count)
      if (count === listening.length) waiters.get(seq)?.()
    })
  }
  const allReceived = (seq: number) =>
    new Promise<void>((resolve) => {
      if ((reported.get(seq) ?? 0) >= listening.length) return resolve()
      const timer = setTimeout(resolve, 15_000)
      waiters.set(seq, () => {
        clearTimeout(timer)
        resolve()
      })
    })

  await control.ask({
    type: 'control-connect',
    url,
    token: participants.ownerToken,
    roomId: participants.broadcastRoomId,
  })

  /**
   * Warm-up and counted broadcasts from `firstSeq`, the chatters running meanwhile: when each was sent, and the
   * chatters' figures.
   */
  async function broadcastsWithChat(firstSeq: number, label: string) {
    await control!.ask({
      type: 'chat-start',
      url,
      roomId: participants.chatRoomId,
      tokens: participants.chatterTokens,
      intervalMs: config.chatIntervalMs,
    })
    const total = config.warmupBroadcasts + config.broadcasts
    const sentAt = new Map<number, number>()
    let refused = 0
    say(
      `${name}: ${total} broadcasts (${config.warmupBroadcasts} of warm-up) to ${receivers} sockets, chat running${label}`,
    )
    let nextAt = Date.now()
    for (let seq = firstSeq; seq < firstSeq + total; seq++) {
      // one per interval (the chatters meanwhile), never before the one before has reached every socket
      await sleep(Math.max(0, nextAt - Date.now()))
      nextAt = Date.now() + config.broadcastIntervalMs
      const received = allReceived(seq)
      const reply = await control!.ask<BroadcastReply>({
        type: 'broadcast',
        seq,
        textBytes: config.textBytes,
      })
      if (!reply.ok) refused += 1
      if (seq >= firstSeq + config.warmupBroadcasts) sentAt.set(seq, reply.sentAt)
      await received
      await sleep(100)
    }
    const chat = await control!.ask<ChatStopReply>({ type: 'chat-stop' })
    if (refused > 0) say(`${name}: ${refused} broadcasts refused by the server${label}`)
    for (const [message, n] of Object.entries(chat.errors)) say(`${name}: chat: ${n} x ${message}${label}`)
    return { sentAt, chat }
  }

  const quiet = await broadcastsWithChat(1, '')
  let floodRun: Awaited<ReturnType<typeof broadcastsWithChat>> | undefined
  let flooder: FloodStopReply | undefined
  if (participants.flood && config.floodRate > 0) {
    // the same again while one more socket floods, from a process of its own
    const [floodClient] = await startClients(1, `${name} flood`, clientEnv)
    if (!floodClient) throw new Error('no flood process')
    await floodClient.ask({
      type: 'flood-start',
      url,
      token: participants.flood.token,
      roomId: participants.flood.roomId,
      ratePerSecond: config.floodRate,
      textBytes: config.floodTextBytes,
    })
    floodRun = await broadcastsWithChat(
      1 + config.warmupBroadcasts + config.broadcasts,
      `, one socket flooding ${config.floodRate} events/s`,
    )
    flooder = await floodClient.ask<FloodStopReply>({ type: 'flood-stop' })
    await floodClient.stop()
    say(
      `${name}: the flooder sent ${flooder.sent} in ${flooder.seconds.toFixed(1)} s: ${flooder.accepted} accepted, ` +
        `${flooder.refused} refused, ${flooder.connections} connection(s)`,
    )
  }

  const receipts = await Promise.all(clients.map((client) => client.ask<ReceiptsReply>({ type: 'receipts' })))
  await Promise.all([...clients, control].map((client) => client.stop()))
  const broadcastOf = (sentAt: Map<number, number>): SocketsResult['broadcast'] => {
    const latencies: number[] = []
    const lastSocket: number[] = []
    for (const [seq, sent] of sentAt) {
      let last = 0
      for (const reply of receipts) {
        for (const at of reply.receipts[seq] ?? []) {
          latencies.push(at - sent)
          last = Math.max(last, at - sent)
        }
      }
      lastSocket.push(last)
    }
    return {
      receivers,
      joinMs,
      broadcasts: sentAt.size,
      payloadBytes: Math.max(0, ...receipts.map((reply) => reply.payloadBytes)),
      latency: latencySummary(latencies),
      lastSocket: latencySummary(lastSocket),
      missing: receivers * sentAt.size - latencies.length,
    }
  }
  const chatOf = (chat: ChatStopReply) => ({
    chatters: participants.chatterTokens.length,
    roundTrip: latencySummary(chat.roundTripsMs),
    failed: chat.failed,
  })
  return {
    server: name,
    sockets: config.sockets,
    connected: connection.connected,
    failed: connection.failed,
    errors: connection.errors,
    connectMs: connection.elapsedMs,
    connectionsPerSecond: perSecond(connection.connected, connection.elapsedMs),
    idle: { rss: idle.rss, heapUsed: idle.heapUsed, external: idle.external },
    loaded: { rss: loaded.rss, heapUsed: loaded.heapUsed, external: loaded.external },
    perSocket: perSocketMemory(idle, loaded, connection.connected),
    broadcast: broadcastOf(quiet.sentAt),
    chat: chatOf(quiet.chat),
    ...(floodRun && flooder
      ? {
          flood: {
            ratePerSecond: config.floodRate,
            textBytes: config.floodTextBytes,
            broadcast: broadcastOf(floodRun.sentAt),
            chat: chatOf(floodRun.chat),
            flooder,
          },
        }
      : {}),
  }
}

/** The gateway's /metrics JSON counter `activeConnections` (realtime connections open), or null. */
async function activeConnectionsOf(baseUrl: string): Promise<number | null> {
  try {
    const response = await fetch(`${baseUrl}/metrics`, { headers: { accept: 'application/json' } })
    const body = (await response.json()) as Record<string, unknown>
    const find = (value: unknown): number | null => {
      if (!value || typeof value !== 'object') return null
      const record = value as Record<string, unknown>
      if (typeof record.activeConnections === 'number') return record.activeConnections
      for (const inner of Object.values(record)) {
        const found = find(inner)
        if (found !== null) return found
      }
      return null
    }
    return find(body)
  } catch {
    return null
  }
}

async function holdPhase(
  server: ServerProcess<RealtimeServer>,
  tokens: TokenSettings,
  config: RealtimeConfig,
  clientEnv: NodeJS.ProcessEnv,
  fileLimit: number,
): Promise<HoldResult> {
  const clients = await startClients(config.clientProcesses, 'hold', clientEnv)
  // past its open-file limit the gateway's accept() fails (EMFILE) and its own clients (PostgreSQL, Redis, Kafka)
  // could not reconnect: it is asked for no more than fits, and the verdict says the target was not reached
  const attempted = Math.min(config.holdSockets, fileLimit - 2 * gatewayOwnDescriptors)
  if (attempted < config.holdSockets)
    say(
      `hold: the open-file limit (${fileLimit}) leaves room for ${attempted} sockets, not ${config.holdSockets}`,
    )
  say(`hold: connecting ${attempted} authenticated sockets to the gateway`)
  const connection = await connectAll(clients, config, server.baseUrl, '/notifications', attempted, tokens)
  await sleep(2000)
  const activeConnections = await activeConnectionsOf(server.baseUrl)
  const held = await server.settledSnapshot()
  for (const [message, n] of Object.entries(connection.errors)) say(`hold: ${n} x ${message}`)
  await Promise.all(clients.map((client) => client.stop()))
  return {
    target: config.holdSockets,
    connected: connection.connected,
    failed: connection.failed + (config.holdSockets - attempted),
    errors: connection.errors,
    activeConnections,
    connectMs: connection.elapsedMs,
    rssMb: toMb(held.rss),
    heapUsedMb: toMb(held.heapUsed),
    fileLimit,
  }
}

async function restJson<Body>(url: string, token: string, body: unknown): Promise<Body> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
    body: JSON.stringify(body),
  })
  const text = await response.text()
  if (response.status >= 300) throw new Error(`POST ${url}: ${response.status} ${text}`)
  return JSON.parse(text) as Body
}

async function runSocketPhases(config: RealtimeConfig, endpoints: Endpoints, fileLimit: number) {
  const database = await createRunDatabase(endpoints.databaseUrl, 'bench_realtime')
  undo.push({ label: `drop database ${database.name}`, run: () => database.drop() })
  const run = randomBytes(4).toString('hex')
  const redisPrefix = `bench-realtime-${run}:`
  const redisUrl = redisUrlWithDatabase(endpoints.redisUrl, benchRedisDatabase)
  undo.push({ label: 'delete Redis keys', run: () => deleteKeys(redisUrl, redisPrefix) })
  const tokens: TokenSettings = {
    secret: randomBytes(32).toString('base64url'),
    issuer: `http://bench-realtime-${run}.invalid`,
    audience: 'meridian',
  }
  // the gateway's consumer reads notification.created of a namespace of the run's own (no event comes in this phase)
  const kafkaNamespace = `bench-realtime-${run}.`
  const topics = await createEventsTopics(
    endpoints.kafkaBrokers,
    [`${kafkaNamespace}notification.created`],
    3,
  )
  undo.push({
    label: 'delete the Kafka topics and consumer groups',
    run: async () => {
      const admin = kafkaClient(endpoints.kafkaBrokers, 'bench-realtime-admin').admin()
      await admin.connect()
      const { groups } = await admin.listGroups().finally(() => admin.disconnect())
      await topics.delete(groups.map((group) => group.groupId).filter((id) => id.includes(kafkaNamespace)))
    },
  })
  const port = await freePort()
  const ping = {
    BENCH_REALTIME_PING_INTERVAL_MS: String(config.pingIntervalMs),
    BENCH_REALTIME_PING_TIMEOUT_MS: String(config.pingTimeoutMs),
  }
  const gatewayEnv: NodeJS.ProcessEnv = {
    ...config.inheritedEnv,
    NODE_ENV: 'production',
    // the bench's engines are the development ones, plaintext on this machine's loopback
    ENGINES_PLAINTEXT_ALLOWED: 'true',
    LOG_LEVEL: 'warn',
    HOST: '127.0.0.1',
    PORT: String(port),
    SERVICE_HOST: '127.0.0.1',
    DATABASE_URL: database.url,
    REDIS_URL: redisUrl,
    KAFKA_BROKERS: endpoints.kafkaBrokers,
    KAFKA_NAMESPACE: kafkaNamespace,
    CONSUL_HTTP_ADDR: endpoints.consulHttpAddr,
    ...(endpoints.consulToken ? { CONSUL_HTTP_TOKEN: endpoints.consulToken } : {}),
    CONSUL_REGISTER: 'false',
    NOTIFICATION_SERVICE_NAME: `notification-bench-${run}`,
    JWT_ALGORITHM: 'HS256',
    JWT_SECRET: tokens.secret,
    JWT_ISSUER: tokens.issuer,
    JWT_AUDIENCE: tokens.audience,
    // production refuses the public development credential; this is the run's own
    SERVICE_CREDENTIAL: randomBytes(32).toString('base64url'),
    RATE_LIMIT_MAX: '1000000000',
    REALTIME_REDIS_PREFIX: redisPrefix,
    // the highest the configuration accepts: the limits are counted (a Redis round trip per connection), never hit
    REALTIME_CONNECTION_ATTEMPTS: '10000',
    REALTIME_ATTEMPTS_WINDOW_MS: '1000',
    REALTIME_MAX_CONNECTIONS_PER_ADDRESS: '100000',
    // the event limits stay at their defaults for one connection (the flooder's bucket: 20 events/s, 40 at once); the
    // per-user ones are lifted, since the 5,000 receiving sockets are one user joining at once and the chatters send
    // 10 messages a second each; and the flooder is never closed, so that the whole flood run bears its rate
    REALTIME_USER_EVENTS_PER_WINDOW: '1000000',
    REALTIME_CHAT_MESSAGES_PER_WINDOW: '1000000',
    REALTIME_REFUSALS_BEFORE_DISCONNECT: '1000000',
    REALTIME_PING_INTERVAL_MS: String(config.pingIntervalMs),
    REALTIME_PING_TIMEOUT_MS: String(config.pingTimeoutMs),
    BENCH_REALTIME_GATEWAY_ENTRY: gatewayEntry,
    ...ping,
  }
  const servers = {} as Record<RealtimeServer, ServerProcess<RealtimeServer>>
  servers.gateway = await startProcessOverIpc<RealtimeServer>('gateway', gatewayHost, gatewayEnv, {
    execArgv: ['--expose-gc'],
    readyTimeoutMs: 90_000,
  })
  undo.push({ label: `stop the gateway (pid ${servers.gateway.pid})`, run: () => servers.gateway.stop() })
  servers.bare = await startProcessOverIpc<RealtimeServer>(
    'bare',
    bareServer,
    {
      ...config.inheritedEnv,
      NODE_ENV: 'production',
      ...ping,
      BENCH_REALTIME_BARE_DEFLATE: config.bareDeflate,
    },
    { execArgv: ['--expose-gc'] },
  )
  undo.push({ label: `stop the bare server (pid ${servers.bare.pid})`, run: () => servers.bare.stop() })
  say(
    `gateway pid ${servers.gateway.pid} on ${servers.gateway.baseUrl}, bare pid ${servers.bare.pid} on ${servers.bare.baseUrl}`,
  )

  // two chat rooms, created through REST as a client would: the chatters' (its first chatter owns it, the others are
  // added as members) and the broadcast room (its owner sends; one user, on every receiving socket, listens)
  const newRoom = async (ownerToken: string, name: string, members: string[]) => {
    const room = await restJson<{ id: string }>(`${servers.gateway.baseUrl}/api/v1/chat/rooms`, ownerToken, {
      name,
    })
    for (const userId of members) {
      await restJson(`${servers.gateway.baseUrl}/api/v1/chat/rooms/${room.id}/members`, ownerToken, {
        userId,
      })
    }
    return room.id
  }
  const chatterIds = Array.from({ length: config.chatters }, () => randomUUID())
  const chatterTokens = chatterIds.map((subject) => mintToken(tokens, { subject }))
  const chatRoomId = await newRoom(chatterTokens[0]!, `bench chat ${run}`, chatterIds.slice(1))
  const ownerToken = mintToken(tokens)
  const receiverId = randomUUID()
  const broadcastRoomId = await newRoom(ownerToken, `bench broadcast ${run}`, [receiverId])
  // the flooder is a user of its own with a room of its own: what it gets through reaches nobody else
  const flooderToken = mintToken(tokens)
  const floodRoomId = await newRoom(flooderToken, `bench flood ${run}`, [])
  const clientEnv = { ...config.inheritedEnv, NODE_ENV: 'production' }

  const gateway = await socketsPhase(
    'gateway',
    servers.gateway,
    {
      tokens,
      broadcastRoomId,
      ownerToken,
      receiverToken: mintToken(tokens, { subject: receiverId }),
      chatRoomId,
      chatterTokens,
      flood: { token: flooderToken, roomId: floodRoomId },
    },
    config,
    clientEnv,
  )
  await sleep(3000)
  const bare = await socketsPhase(
    'bare',
    servers.bare,
    {
      tokens: null,
      broadcastRoomId: randomUUID(),
      ownerToken: null,
      receiverToken: null,
      chatRoomId: randomUUID(),
      chatterTokens: chatterIds.map(() => null),
      // bare has no limits: a flood there measures only the flood
      flood: null,
    },
    config,
    clientEnv,
  )
  await servers.bare.stop()
  let hold: HoldResult | undefined
  if (config.holdSockets > 0) {
    await sleep(3000)
    hold = await holdPhase(servers.gateway, tokens, config, clientEnv, fileLimit)
  }
  // nothing of this phase keeps running into the next one
  await servers.gateway.stop()
  return { gateway, bare, hold }
}

async function main(): Promise<void> {
  const config = loadRealtimeConfig()
  const started = Date.now()
  const loadBefore = loadavg()[0] ?? 0
  const fileLimit = raiseFileLimit(config.fileLimit)
  const most = Math.max(config.sockets, config.holdSockets)
  if (config.phases.includes('sockets') && fileLimit < most + gatewayOwnDescriptors)
    say(
      `WARNING: open-file limit ${fileLimit}: the gateway needs one descriptor per socket (${most}) and ~${gatewayOwnDescriptors} of its own`,
    )
  const endpoints = await ensureInfra()
  say(`phases ${config.phases.join(', ')}; open-file limit ${fileLimit}`)

  const sockets = config.phases.includes('sockets')
    ? await runSocketPhases(config, endpoints, fileLimit)
    : undefined
  let orders: OrdersResult | undefined
  if (config.phases.includes('orders')) orders = await runOrdersPhase(config, endpoints.redisUrl, undo, say)

  const lines: string[] = []
  if (sockets) {
    lines.push(formatSocketsTable(sockets.gateway, sockets.bare))
    if (sockets.gateway.flood) lines.push('', formatFloodTable(sockets.gateway, sockets.bare))
    if (sockets.hold) lines.push('', formatHold(sockets.hold))
  }
  if (orders) lines.push('', formatOrders(orders))
  process.stdout.write(`\n${lines.join('\n')}\n`)

  await mkdir(dirname(resultsFile), { recursive: true })
  const report = {
    measuredAt: new Date(started).toISOString(),
    durationSeconds: Math.round((Date.now() - started) / 1000),
    machine: machineFigures(loadBefore, loadavg()[0]),
    settings: { ...config, inheritedEnv: undefined, fileLimit },
    aims,
    sockets,
    holdPassed: sockets?.hold ? holdPassed(sockets.hold) : undefined,
    orders,
  }
  await writeFile(resultsFile, `${JSON.stringify(report, null, 2)}\n`)
  say(`wrote ${resultsFile}`)
}

await run(main)
