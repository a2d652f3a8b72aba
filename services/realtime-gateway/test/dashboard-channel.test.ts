// /dashboard against the real thing: the source of figures scraping real services found in Consul, and the namespace
// of a listening realtime-gateway (who may watch, the snapshot, the updates and the choice of metrics).
import { createServer, type Server } from 'node:net'
import { type DashboardMetrics, dashboardMetricNames } from '@meridian/contracts'
import { createServiceApp, type RunningService, type ServiceApp, startService } from '@meridian/service-kit'
import {
  accessToken,
  captureLogs,
  consulApi,
  eventually,
  infraEndpoints,
  scaledMs,
  uniqueName,
} from '@meridian/testkit'
import type { Socket } from 'socket.io-client'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import {
  clientFacing,
  createServiceMetricsSource,
  type ServiceMetricsSource,
} from '../src/clients/service-metrics.ts'
import { loadRealtimeGatewayConfig } from '../src/config.ts'
import { connect, nextEvent, type RealtimeInstance, startRealtime } from './support/realtime.ts'

const { stream: logStream, lines: logs } = captureLogs()
const log = {
  debug: () => {},
  info: () => {},
  warn: (obj: object, msg?: string) => logs.push({ ...obj, msg }),
  error: (obj: object, msg?: string) => logs.push({ ...obj, msg }),
}

/** A service on the kit, listening and registered in Consul as `name`, with a route that answers 200 and one 500. */
async function startWatchedService(name: string): Promise<RunningService & { app: ServiceApp }> {
  const app = await createServiceApp({
    name,
    version: '1.0.0',
    environment: 'test',
    logLevel: 'error',
    logStream,
    rateLimit: false,
  })
  app.get('/work', async () => ({ done: true }))
  app.get('/break', async () => {
    throw new Error('broken on purpose')
  })
  const running = await startService({
    app,
    config: loadRealtimeGatewayConfig({
      NODE_ENV: 'test',
      PORT: '0',
      HOST: '127.0.0.1',
      SERVICE_HOST: '127.0.0.1',
      CONSUL_HTTP_ADDR: infraEndpoints().consulHttpAddr,
      ...(infraEndpoints().consulToken ? { CONSUL_HTTP_TOKEN: infraEndpoints().consulToken as string } : {}),
      CONSUL_SERVICE_NAME: name,
    }),
    registrationTiming: { heartbeatIntervalMs: 300, ttl: '5s', httpCheckInterval: '1s' },
  })
  await eventually(`${name} passing in Consul`, async () => (await passingPorts(name)).includes(running.port))
  return Object.assign(running, { app })
}

async function passingPorts(name: string): Promise<number[]> {
  const { baseUrl, headers } = consulApi()
  const answer = await fetch(`${baseUrl}/v1/health/service/${name}?passing=true`, { headers })
  return ((await answer.json()) as { Service: { Port: number } }[]).map((entry) => entry.Service.Port)
}

async function requestTimes(port: number, path: string, times: number): Promise<void> {
  for (let i = 0; i < times; i++) {
    const response = await fetch(`http://127.0.0.1:${port}${path}`)
    await response.arrayBuffer()
  }
}

const consul = () => ({
  address: infraEndpoints().consulHttpAddr,
  ...(infraEndpoints().consulToken ? { token: infraEndpoints().consulToken as string } : {}),
})

describe('the figures of services found in Consul', () => {
  const name = uniqueName('dashboard-watched')
  let running: RunningService
  let silent: Server
  const silentId = uniqueName('dashboard-silent')
  const sources: ServiceMetricsSource[] = []
  const sourceOf = (options: Partial<Parameters<typeof createServiceMetricsSource>[0]> = {}) => {
    const source = createServiceMetricsSource({
      consul: consul(),
      services: () => [name],
      // a round that waits on the silent instance lasts its whole timeout: a round of a loaded machine has room, and a
      // baseline stays one for three rounds (staleAfterMs), as the defaults' ratio has it
      timeoutMs: scaledMs(2000),
      staleAfterMs: scaledMs(10_000),
      log,
      baselineWindowMs: 100,
      // no edge among these services, whatever else the shared Consul holds (a `gateway` of another run)
      edgeService: uniqueName('dashboard-no-edge'),
      ...options,
    })
    sources.push(source)
    return source
  }

  beforeAll(async () => {
    running = await startWatchedService(name)
  })
  afterAll(async () => {
    for (const source of sources) await source.close()
    const { baseUrl, headers } = consulApi()
    await fetch(`${baseUrl}/v1/agent/service/deregister/${silentId}`, { method: 'PUT', headers })
    silent?.close()
    await running?.stop()
  })

  it('when a service answered requests, some with 500, then the next sample has its requests per second, the share of 5xx and a p95', async () => {
    const source = sourceOf()
    await source.sample()
    await requestTimes(running.port, '/work', 8)
    await requestTimes(running.port, '/break', 2)
    const figures = await source.sample()
    // the scrapes themselves (/metrics) and Consul's checks (/health/ready) are not traffic
    expect(figures.errorRate).toBe(0.2)
    expect(figures.requestsPerSecond).toBeGreaterThan(0)
    expect(figures.p95Latency).toBeGreaterThan(0)

    const quiet = await source.sample()
    expect(quiet).toEqual({ requestsPerSecond: 0, errorRate: 0, p95Latency: 0 })
  })

  it('when one instance of the service never answers, then the sample gives up on it at its timeout and counts the others', async () => {
    // accepts connections, never answers a byte: a hung instance that Consul still believes healthy
    silent = createServer(() => {})
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve))
    const port = (silent.address() as { port: number }).port
    const { baseUrl, headers } = consulApi()
    const registered = await fetch(`${baseUrl}/v1/agent/service/register`, {
      method: 'PUT',
      headers,
      body: JSON.stringify({ ID: silentId, Name: name, Address: '127.0.0.1', Port: port }),
    })
    expect(registered.status).toBe(200)
    await expect.poll(() => passingPorts(name)).toContain(port)

    const source = sourceOf({ timeoutMs: 500 })
    await source.sample()
    await requestTimes(running.port, '/work', 5)
    // the silent instance never answers: a sample that comes back at all gave up on it at its timeout
    const figures = await source.sample()
    expect(figures.requestsPerSecond).toBeGreaterThan(0)
    expect(figures.errorRate).toBe(0)
  })

  it('when no services are named, then every service of the catalogue is watched, ours among them', async () => {
    const source = sourceOf({ services: undefined })
    await source.sample()
    await requestTimes(running.port, '/work', 5)
    expect((await source.sample()).requestsPerSecond).toBeGreaterThan(0)
  })

  it('when the public gateway (the edge) is among the watched, then only its traffic counts: a request it proxied is not counted again at the service', async () => {
    const edgeName = uniqueName('dashboard-edge')
    const edge = await startWatchedService(edgeName)
    try {
      const both = () => [name, edgeName]
      const counted = sourceOf({ services: both, edgeService: edgeName })
      const everyService = sourceOf({ services: both })
      await Promise.all([counted.sample(), everyService.sample()])
      // the edge answered 4 requests well; the service behind answered 4 with 500 (as if proxied, or reached directly)
      await requestTimes(edge.port, '/work', 4)
      await requestTimes(running.port, '/break', 4)
      const [edgeFigures, serviceFigures] = await Promise.all([counted.sample(), everyService.sample()])
      expect(edgeFigures.errorRate).toBe(0)
      expect(edgeFigures.requestsPerSecond).toBeGreaterThan(0)
      // counted at both, as before: half of the 8 answers were 5xx
      expect(serviceFigures.errorRate).toBe(0.5)
    } finally {
      await edge.stop()
    }
  })

  it('when the edge has no healthy instance, then every watched service counts', () => {
    const instances = [
      { service: 'order', key: 'a' },
      { service: 'payment', key: 'b' },
    ]
    expect(clientFacing(instances, 'gateway')).toEqual(instances)
    expect(clientFacing([...instances, { service: 'gateway', key: 'c' }], 'gateway')).toEqual([
      { service: 'gateway', key: 'c' },
    ])
  })

  it('when Consul cannot be reached, then the sample fails (the channel leaves the figures out)', async () => {
    const source = sourceOf({ consul: { address: 'http://127.0.0.1:1' }, services: undefined })
    await expect(source.sample()).rejects.toThrow(/Consul/)
  })
})

/** Every `event` on `socket` from now on. */
function record<T>(socket: Socket, event: string) {
  const heard: { payload: T }[] = []
  socket.on(event, (payload: T) => heard.push({ payload }))
  return heard
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** How many times the watched service's /metrics was asked for (its own histogram says). */
async function scrapesOf(app: ServiceApp): Promise<number> {
  const { values } = await app.metrics.requestDuration.get()
  return values
    .filter((value) => value.metricName?.endsWith('_count') && value.labels.route === '/metrics')
    .reduce((sum, value) => sum + value.value, 0)
}

describe('/dashboard', () => {
  const name = uniqueName('dashboard-watched')
  let watched: RunningService & { app: ServiceApp }
  let realtime: RealtimeInstance
  const sockets: Socket[] = []
  const admin = async () => {
    const socket = await connect(realtime.url, '/dashboard', { token: accessToken('admin') })
    sockets.push(socket)
    return socket
  }

  beforeAll(async () => {
    watched = await startWatchedService(name)
    realtime = await startRealtime({ DASHBOARD_INTERVAL_MS: '200', DASHBOARD_SERVICES: name })
  })
  afterEach(() => {
    for (const socket of sockets.splice(0)) socket.close()
  })
  afterAll(async () => {
    await realtime?.close()
    await watched?.stop()
  })

  it('when a user who is not an admin connects, then the connection is refused with Unauthorized', async () => {
    await expect(connect(realtime.url, '/dashboard', { token: accessToken('user') })).rejects.toThrow(
      'Unauthorized',
    )
  })

  it("when an admin connects, then a snapshot comes, then updates every interval with the watched services' real figures", async () => {
    const connectedFrom = Date.now()
    const socket = await admin()
    const updates = record<DashboardMetrics>(socket, 'metrics:update')
    const snapshot = await nextEvent<DashboardMetrics>(socket, 'metrics:snapshot')
    expect(Object.keys(snapshot).sort()).toEqual([...dashboardMetricNames, 'timestamp'].sort())
    expect(snapshot.activeUsers).toBeGreaterThanOrEqual(1)
    // sampled for this connection (nobody watched before it): between the moments before and after
    expect(snapshot.timestamp).toBeGreaterThanOrEqual(connectedFrom)
    expect(snapshot.timestamp).toBeLessThanOrEqual(Date.now())

    // real traffic on the watched service: 8 answers 200, 2 answers 500
    const from = updates.length
    await Promise.all([
      ...Array.from({ length: 8 }, () =>
        fetch(`http://127.0.0.1:${watched.port}/work`).then((r) => r.text()),
      ),
      ...Array.from({ length: 2 }, () =>
        fetch(`http://127.0.0.1:${watched.port}/break`).then((r) => r.text()),
      ),
    ])
    // "every interval" by its mechanism: the instance's own loop of DASHBOARD_INTERVAL_MS pushes update after update
    // with no request of the client, each a sample of its own (no stopwatch on the gaps: a loaded machine stretches)
    expect(realtime.config.DASHBOARD_INTERVAL_MS).toBe(200)
    await eventually('three updates after the traffic', () => updates.length - from >= 3)
    const window = updates.slice(from)
    const stamps = window.map(({ payload }) => payload.timestamp)
    expect(stamps).toEqual([...new Set(stamps)].sort((a, b) => a - b))
    for (const { payload } of window) {
      expect(Object.keys(payload).sort()).toEqual([...dashboardMetricNames, 'timestamp'].sort())
    }
    const busy = window
      .map(({ payload }) => payload)
      .filter((figures) => (figures.requestsPerSecond ?? 0) > 0)
    expect(busy.length).toBeGreaterThan(0)
    expect(busy.some((figures) => (figures.errorRate ?? 0) > 0 && (figures.errorRate ?? 0) < 1)).toBe(true)
    expect(busy.every((figures) => (figures.p95Latency ?? 0) > 0)).toBe(true)
  })

  it('when an admin subscribes to activeUsers only, then the updates after the ack carry only activeUsers and the timestamp', async () => {
    const socket = await admin()
    await nextEvent(socket, 'metrics:snapshot')
    const answer = await socket.emitWithAck('dashboard:subscribe', { metrics: ['activeUsers'] })
    expect(answer).toEqual({ ok: true, metrics: ['activeUsers'] })
    const updates = record<DashboardMetrics>(socket, 'metrics:update')
    await eventually('two updates after the subscription', async () => updates.length >= 2)
    for (const { payload } of updates)
      expect(Object.keys(payload).sort()).toEqual(['activeUsers', 'timestamp'])

    // a socket that chose nothing still gets all four
    const other = await admin()
    await nextEvent(other, 'metrics:snapshot')
    const full = await nextEvent<DashboardMetrics>(other, 'metrics:update')
    expect(Object.keys(full).sort()).toEqual([...dashboardMetricNames, 'timestamp'].sort())
  })

  it('when a subscription names an unknown metric, none, or more than metrics, then it is refused with VALIDATION_ERROR', async () => {
    const socket = await admin()
    for (const invalid of [
      { metrics: ['cpu'] },
      { metrics: [] },
      { metrics: ['errorRate'], extra: 1 },
      'errorRate',
    ]) {
      const error = nextEvent<{ code: string; message: string }>(socket, 'error')
      const answer = await socket.emitWithAck('dashboard:subscribe', invalid)
      expect(answer).toMatchObject({ ok: false, error: { code: 'VALIDATION_ERROR' } })
      expect(await error).toMatchObject({ code: 'VALIDATION_ERROR', message: 'Invalid message format' })
    }
  })

  it('when the last dashboard socket leaves, then the instance stops scraping; when one comes back, it starts again', async () => {
    const socket = await admin()
    await nextEvent(socket, 'metrics:update')
    socket.close()
    // the instance has seen it go (its loop stops then); a sample in flight may still finish
    await eventually(
      'the instance has no dashboard socket',
      () => realtime.app.realtime.namespace('/dashboard').sockets.size === 0,
    )
    await sleep(scaledMs(500))
    const afterLeaving = await scrapesOf(watched.app)
    // five intervals and more (scaled): a running loop would have scraped about five times; a stopped one at most
    // once more, for the sample that was in flight when the socket left (on a loaded machine it can outlast the pause
    // above). Nothing can be waited for that does not come.
    await sleep(scaledMs(1000))
    expect(await scrapesOf(watched.app)).toBeLessThanOrEqual(afterLeaving + 1)

    const back = await admin()
    await nextEvent(back, 'metrics:update')
    expect(await scrapesOf(watched.app)).toBeGreaterThan(afterLeaving)
  })
})
