import { createHmac } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import {
  compare,
  formatFloodTable,
  formatHold,
  formatOrders,
  formatSocketsTable,
  type HoldResult,
  holdPassed,
  latencySummary,
  perSecond,
  perSocketMemory,
  type SocketsResult,
} from '../src/realtime/figures.ts'
import { loadRealtimeConfig, shares, sourceAddressesOf } from '../src/realtime/realtime-config.ts'
import { mintToken } from '../src/realtime/tokens.ts'

const MB = 1024 * 1024

describe('memory per socket', () => {
  it('is the growth over the idle figures divided by the sockets', () => {
    const idle = { rss: 200 * MB, heapUsed: 40 * MB, external: 4 * MB }
    const connected = { rss: 300 * MB, heapUsed: 90 * MB, external: 14 * MB }
    expect(perSocketMemory(idle, connected, 10_000)).toEqual({
      rssBytes: (100 * MB) / 10_000,
      heapBytes: (50 * MB) / 10_000,
      externalBytes: (10 * MB) / 10_000,
    })
  })

  it('is zero without sockets, and negative when the process shrank', () => {
    const idle = { rss: 100, heapUsed: 100, external: 100 }
    expect(perSocketMemory(idle, idle, 0)).toEqual({ rssBytes: 0, heapBytes: 0, externalBytes: 0 })
    expect(perSocketMemory(idle, { rss: 50, heapUsed: 100, external: 100 }, 10).rssBytes).toBe(-5)
  })
})

describe('latency, rates and ratios', () => {
  it('summarises latencies by nearest rank, in any order', () => {
    const values = Array.from({ length: 100 }, (_, i) => 100 - i)
    expect(latencySummary(values)).toEqual({ count: 100, p50Ms: 50, p99Ms: 99, maxMs: 100 })
    expect(latencySummary([])).toEqual({ count: 0, p50Ms: 0, p99Ms: 0, maxMs: 0 })
  })

  it('counts per second over the elapsed milliseconds', () => {
    expect(perSecond(10_000, 4000)).toBe(2500)
    expect(perSecond(0, 4000)).toBe(0)
    expect(perSecond(10, 0)).toBe(0)
  })

  it('compares the gateway with bare against an aim', () => {
    expect(compare(11.5, 10, 1.15)).toEqual({ ratio: 1.15, met: true })
    expect(compare(12, 10, 1.15).met).toBe(false)
    expect(compare(12, 10)).toEqual({ ratio: 1.2, met: null })
    expect(compare(12, 0, 1.15)).toEqual({ ratio: null, met: null })
  })
})

const latency = (p50Ms: number, p99Ms: number) => ({ count: 100, p50Ms, p99Ms, maxMs: p99Ms })
const socketsResult = (server: 'gateway' | 'bare', rssPerSocket: number, p99: number): SocketsResult => ({
  server,
  sockets: 10_000,
  connected: 10_000,
  failed: 0,
  errors: {},
  connectMs: 5000,
  connectionsPerSecond: 2000,
  idle: { rss: 0, heapUsed: 0, external: 0 },
  loaded: { rss: 0, heapUsed: 0, external: 0 },
  perSocket: { rssBytes: rssPerSocket, heapBytes: 10_240, externalBytes: 0 },
  broadcast: {
    receivers: 5000,
    joinMs: 1000,
    broadcasts: 20,
    payloadBytes: 100,
    latency: latency(5, p99),
    lastSocket: latency(8, 9),
    missing: 0,
  },
  chat: { chatters: 4, roundTrip: latency(2, 4), failed: 0 },
})

describe('the report', () => {
  it('sets the gateway beside bare with ratios and verdicts', () => {
    const table = formatSocketsTable(socketsResult('gateway', 20_480, 12), socketsResult('bare', 10_240, 10))
    const row = (start: string) => table.split('\n').find((line) => line.startsWith(start)) ?? ''
    expect(row('RSS per socket KB')).toMatch(/20\.00\s+10\.00\s+x2\.00\s+<= x1\.15\s+not met$/)
    expect(row('heap per socket KB')).toMatch(/x1\.00\s+<= x1\.15\s+met$/)
    expect(row('broadcast p99 ms')).toMatch(/12\.00\s+10\.00\s+x1\.20\s+<= x1\.20\s+met$/)
    expect(row('connections/s')).toMatch(/-\s+-$/)
  })

  it('sets the flood run beside the quiet one, with the aim x1.5 on the broadcast p99, and bare quiet for reference', () => {
    const quiet = socketsResult('gateway', 20_480, 100)
    const gateway: SocketsResult = {
      ...quiet,
      flood: {
        ratePerSecond: 1000,
        textBytes: 5000,
        broadcast: { ...quiet.broadcast, latency: latency(6, 140) },
        chat: { chatters: 4, roundTrip: latency(3, 6), failed: 0 },
        flooder: { sent: 20_000, skipped: 0, accepted: 400, refused: 19_600, connections: 1, seconds: 20 },
      },
    }
    const table = formatFloodTable(gateway, socketsResult('bare', 10_240, 90))
    const row = (start: string) => table.split('\n').find((line) => line.startsWith(start)) ?? ''
    expect(row('broadcast p99 ms')).toMatch(/100\.00\s+140\.00\s+x1\.40\s+<= x1\.50\s+met\s+90\.00$/)
    expect(row('chat round trip p99 ms')).toMatch(/4\.00\s+6\.00\s+x1\.50\s+-\s+-\s+4\.00$/)
    expect(row('flooder:')).toBe(
      'flooder: sent 20,000 in 20.0 s (1,000/s; 0 due while not connected), accepted 400, refused 19,600 (RATE_LIMITED), connections 1',
    )
    const slower = {
      ...gateway,
      flood: { ...gateway.flood!, broadcast: { ...quiet.broadcast, latency: latency(6, 151) } },
    }
    expect(formatFloodTable(slower, socketsResult('bare', 10_240, 90))).toMatch(
      /x1\.51\s+<= x1\.50\s+not met/,
    )
    expect(formatFloodTable(quiet, socketsResult('bare', 10_240, 90))).toBe('')
  })

  it('passes the hold only when the sockets connected and the gateway counts them', () => {
    const hold: HoldResult = {
      target: 20_000,
      connected: 20_000,
      failed: 0,
      errors: {},
      activeConnections: 20_000,
      connectMs: 10_000,
      rssMb: 900,
      heapUsedMb: 300,
      fileLimit: 200_000,
    }
    expect(holdPassed(hold)).toBe(true)
    expect(formatHold(hold)).toMatch(/^20,000 authenticated sockets .*: pass \(connected 20,000/)
    expect(holdPassed({ ...hold, activeConnections: null })).toBe(false)
    const limited = { ...hold, connected: 19_950, fileLimit: 20_000 }
    expect(holdPassed(limited)).toBe(false)
    expect(formatHold(limited)).toMatch(/fail .*the open-file limit is 20,000/)
  })
})

describe('configuration', () => {
  it('defaults to the issue sizes, broadcasts to half the sockets up to 5,000', () => {
    const config = loadRealtimeConfig({})
    expect(config).toMatchObject({
      phases: ['sockets', 'orders'],
      sockets: 10_000,
      broadcastSockets: 5000,
      holdSockets: 20_000,
      broadcasts: 20,
      textBytes: 8,
      ordersRate: 50,
    })
    expect(loadRealtimeConfig({ BENCH_REALTIME_SOCKETS: '500' }).broadcastSockets).toBe(250)
    expect(loadRealtimeConfig({ BENCH_REALTIME_PHASES: 'orders' }).phases).toEqual(['orders'])
    expect(() => loadRealtimeConfig({ BENCH_REALTIME_PHASES: 'socket' })).toThrow(/unknown socket/)
  })

  it('splits sockets over processes and picks loopback source addresses', () => {
    expect(shares(10, 4)).toEqual([3, 3, 2, 2])
    expect(shares(3, 4)).toEqual([1, 1, 1, 0])
    expect(sourceAddressesOf(3)).toEqual(['127.0.0.1', '127.0.0.2', '127.0.0.3'])
  })
})

describe('tokens', () => {
  it('are HS256 JWTs with the claims auth issues, signed with the secret', () => {
    const settings = { secret: 's'.repeat(32), issuer: 'http://issuer', audience: 'meridian' }
    const token = mintToken(settings, {
      subject: 'a1b2c3d4-0000-4000-8000-000000000000',
      role: 'admin',
      now: 1000,
    })
    const [header, payload, signature] = token.split('.')
    expect(JSON.parse(Buffer.from(header!, 'base64url').toString())).toEqual({ alg: 'HS256', typ: 'JWT' })
    expect(JSON.parse(Buffer.from(payload!, 'base64url').toString())).toMatchObject({
      sub: 'a1b2c3d4-0000-4000-8000-000000000000',
      role: 'admin',
      iss: 'http://issuer',
      aud: 'meridian',
      iat: 1000,
      exp: 4600,
    })
    const expected = createHmac('sha256', settings.secret).update(`${header}.${payload}`).digest('base64url')
    expect(signature).toBe(expected)
  })
})

describe('the orders verdict', () => {
  const orders = {
    ratePerSecond: 50,
    seconds: 30,
    customers: 100,
    sent: 1500,
    accepted: 1500,
    refused: {},
    latency: latency(60, 140),
    answer: latency(20, 80),
    lost: 0,
    lagMs: 0,
    socketsFailed: 0,
  }

  it('is met with p99 under 150 ms and nothing lost', () => {
    expect(formatOrders(orders)).toMatch(/aim "p99 < 150 ms at 50 orders\/s, nothing lost": met$/)
    expect(formatOrders({ ...orders, lost: 1 })).toMatch(/: not met$/)
    expect(formatOrders({ ...orders, latency: latency(60, 150) })).toMatch(/: not met$/)
    // fast at a lower rate is not the aim met
    expect(formatOrders({ ...orders, ratePerSecond: 10 })).toMatch(
      /: not shown \(p99 within it at a lower rate\) \(measured at 10 orders\/s\)$/,
    )
  })
})
