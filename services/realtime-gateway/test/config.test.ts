// The realtime-gateway's configuration: exact origins only (credentials are allowed, so never a wildcard).
import { describe, expect, it } from 'vitest'
import { allowedOriginsOf, loadRealtimeGatewayConfig } from '../src/config.ts'

// its public development defaults are accepted here (production's refusal of them is the kit's, tested there)
const inTest = { NODE_ENV: 'test' }

describe('configuration', () => {
  it('when origins are exact, then they are the allow-list (lower-cased)', () => {
    expect(
      allowedOriginsOf({ REALTIME_ALLOWED_ORIGINS: 'https://Console.example.com, http://127.0.0.1:8080' }),
    ).toEqual(['https://console.example.com', 'http://127.0.0.1:8080'])
  })

  it('when an origin is a wildcard or not an origin, then the start is refused naming it', () => {
    expect(() => loadRealtimeGatewayConfig({ ...inTest, REALTIME_ALLOWED_ORIGINS: '*' })).toThrow(
      /wildcards are refused/,
    )
    expect(() =>
      loadRealtimeGatewayConfig({ ...inTest, REALTIME_ALLOWED_ORIGINS: 'https://*.example.com' }),
    ).toThrow(/wildcards are refused/)
    expect(() =>
      loadRealtimeGatewayConfig({ ...inTest, REALTIME_ALLOWED_ORIGINS: 'https://example.com/app' }),
    ).toThrow(/is not an origin/)
  })

  it('when nothing is set, then the spec limits are the defaults', () => {
    const config = loadRealtimeGatewayConfig(inTest)
    expect(config).toMatchObject({
      REALTIME_CONNECTION_ATTEMPTS: 10,
      REALTIME_ATTEMPTS_WINDOW_MS: 60_000,
      REALTIME_MAX_CONNECTIONS_PER_ADDRESS: 5,
      REALTIME_PING_INTERVAL_MS: 25_000,
      REALTIME_PING_TIMEOUT_MS: 20_000,
      REALTIME_CONNECT_TIMEOUT_MS: 45_000,
      RAW_WS_PING_INTERVAL_MS: 30_000,
      REALTIME_TOKEN_NOTICE_MS: 60_000,
      REALTIME_OFFLINE_GRACE_MS: 300_000,
    })
  })
})
