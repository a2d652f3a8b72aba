// Forwarded headers and the client's address: hop-by-hop headers dropped, X-Forwarded-* believed only from proxies.
import { describe, expect, it } from 'vitest'
import { clientAddress, forwardedForChain, trustedProxies } from '../src/edge/client-address.ts'
import {
  clientResponseHeaders,
  traceparentFor,
  upstreamRequestHeaders,
} from '../src/proxy/forwarded-headers.ts'

const context = {
  requestId: 'req-1',
  clientAddress: '198.51.100.7',
  peerAddress: '198.51.100.7',
  peerTrusted: false,
  protocol: 'http',
  host: 'api.example.com',
}

describe('client address', () => {
  const trusted = trustedProxies(['10.0.0.0/8', '::1'])

  it('when the peer is not a trusted proxy, then X-Forwarded-For is ignored', () => {
    expect(clientAddress('198.51.100.7', ['203.0.113.9'], trusted)).toBe('198.51.100.7')
    expect(clientAddress('198.51.100.7', ['203.0.113.9'], trustedProxies([]))).toBe('198.51.100.7')
  })

  it('when the peer is a trusted proxy, then the last untrusted hop is the client', () => {
    const chain = forwardedForChain('203.0.113.9, 198.51.100.1, 10.1.2.3')
    expect(clientAddress('10.0.0.5', chain, trusted)).toBe('198.51.100.1')
    expect(clientAddress('::ffff:10.0.0.5', ['203.0.113.9'], trusted)).toBe('203.0.113.9')
    expect(clientAddress('::1', [], trusted)).toBe('::1')
  })

  it('when TRUSTED_PROXIES holds something that is not an address, then it is refused', () => {
    expect(() => trustedProxies(['10.0.0.0/33'])).toThrow(/TRUSTED_PROXIES/)
    expect(() => trustedProxies(['proxy.local'])).toThrow(/TRUSTED_PROXIES/)
  })
})

describe('forwarded headers', () => {
  it('when a request carries hop-by-hop headers, then none of them reaches the upstream', () => {
    const headers = upstreamRequestHeaders(
      {
        connection: 'keep-alive, x-hop',
        'x-hop': 'secret',
        'keep-alive': 'timeout=5',
        te: 'trailers',
        trailer: 'x-checksum',
        'transfer-encoding': 'chunked',
        upgrade: 'h2c',
        'proxy-authorization': 'Basic eA==',
        'proxy-connection': 'keep-alive',
        accept: 'application/json',
      },
      context,
    )
    for (const name of [
      'connection',
      'x-hop',
      'keep-alive',
      'te',
      'trailer',
      'transfer-encoding',
      'upgrade',
      'proxy-authorization',
      'proxy-connection',
    ]) {
      expect(headers).not.toHaveProperty(name)
    }
    expect(headers.accept).toBe('application/json')
    expect(headers['x-request-id']).toBe('req-1')
  })

  it('when the peer is untrusted, then its X-Forwarded-* are replaced, not extended', () => {
    const headers = upstreamRequestHeaders(
      {
        'x-forwarded-for': '203.0.113.9',
        'x-forwarded-proto': 'https',
        'x-forwarded-host': 'evil.example',
        'x-real-ip': '203.0.113.9',
        forwarded: 'for=203.0.113.9',
      },
      context,
    )
    expect(headers['x-forwarded-for']).toBe('198.51.100.7')
    expect(headers['x-forwarded-proto']).toBe('http')
    expect(headers['x-forwarded-host']).toBe('api.example.com')
    expect(headers['x-real-ip']).toBe('198.51.100.7')
    expect(headers).not.toHaveProperty('forwarded')
  })

  it('when the peer is a trusted proxy, then the chain is extended with it', () => {
    const headers = upstreamRequestHeaders(
      { 'x-forwarded-for': '203.0.113.9', 'x-forwarded-proto': 'https', 'x-forwarded-host': 'shop.example' },
      { ...context, peerAddress: '10.0.0.5', peerTrusted: true, clientAddress: '203.0.113.9' },
    )
    expect(headers['x-forwarded-for']).toBe('203.0.113.9, 10.0.0.5')
    expect(headers['x-forwarded-proto']).toBe('https')
    expect(headers['x-forwarded-host']).toBe('shop.example')
  })

  it('when a WebSocket upgrade is passed through, then Connection and Upgrade are kept', () => {
    const headers = upstreamRequestHeaders(
      { connection: 'Upgrade', upgrade: 'websocket', 'sec-websocket-key': 'k' },
      { ...context, upgrade: 'websocket' },
    )
    expect(headers.connection).toBe('Upgrade')
    expect(headers.upgrade).toBe('websocket')
    expect(headers['sec-websocket-key']).toBe('k')
  })

  it('when traceparent is valid, then it is passed on; when absent or malformed, then a new one is made', () => {
    const valid = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01'
    expect(traceparentFor(valid)).toEqual({ value: valid, created: false })
    for (const incoming of [
      undefined,
      'garbage',
      '00-00000000000000000000000000000000-00f067aa0ba902b7-01',
    ]) {
      const made = traceparentFor(incoming)
      expect(made.created).toBe(true)
      expect(made.value).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/)
    }
  })

  it('when an upstream answers with hop-by-hop, CORS or rate-limit headers, then the client does not get them', () => {
    const headers = clientResponseHeaders({
      connection: 'close, x-internal',
      'x-internal': '1',
      'keep-alive': 'timeout=5',
      'transfer-encoding': 'chunked',
      'access-control-allow-origin': '*',
      'x-ratelimit-remaining': '3',
      'content-type': 'application/json',
      'retry-after': '30',
    })
    expect(headers).toEqual({ 'content-type': 'application/json', 'retry-after': '30' })
  })

  it('when the edge and the upstream both answer headers, then the edge keeps its own and Vary lists both', () => {
    const headers = clientResponseHeaders(
      {
        vary: 'Accept-Encoding, origin',
        'x-request-id': 'upstream-id',
        'access-control-allow-origin': 'https://evil.example',
        'content-type': 'application/json',
        etag: '"u1.3"',
      },
      {
        'x-request-id': 'edge-id',
        'x-ratelimit-remaining': 99,
        vary: 'Origin, Access-Control-Request-Headers',
        'access-control-allow-origin': 'https://shop.example',
      },
    )
    expect(headers).toEqual({
      'x-request-id': 'edge-id',
      'x-ratelimit-remaining': 99,
      vary: 'Accept-Encoding, origin, Access-Control-Request-Headers',
      'access-control-allow-origin': 'https://shop.example',
      'content-type': 'application/json',
      etag: '"u1.3"',
    })
  })

  it('when a trace continues, then its tracestate goes with it; when a new trace starts, then it does not', () => {
    const valid = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01'
    const continued = upstreamRequestHeaders({ traceparent: valid, tracestate: 'vendor=1' }, context)
    expect(continued.traceparent).toBe(valid)
    expect(continued.tracestate).toBe('vendor=1')
    const started = upstreamRequestHeaders({ traceparent: 'garbage', tracestate: 'vendor=1' }, context)
    expect(started.traceparent).not.toBe('garbage')
    expect(started).not.toHaveProperty('tracestate')
  })

  it('when a client sends X-Service-Credential (on a request or a WebSocket upgrade), then no service gets it', () => {
    for (const forwarding of [context, { ...context, upgrade: 'websocket' }]) {
      const headers = upstreamRequestHeaders(
        { 'x-service-credential': 'a-credential-guessed-or-stolen-0123456789', 'x-kept': 'yes' },
        forwarding,
      )
      expect(headers).not.toHaveProperty('x-service-credential')
      expect(headers['x-kept']).toBe('yes')
    }
  })

  it('when a client sends Expect, then it does not reach the upstream (the gateway has met it)', () => {
    const headers = upstreamRequestHeaders({ expect: '100-continue', 'content-length': '2048' }, context)
    expect(headers).not.toHaveProperty('expect')
    expect(headers['content-length']).toBe('2048')
  })
})
