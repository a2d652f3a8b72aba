// The route table: every public path reaches its service, on segment boundaries, longest prefix first, /api aliased;
// only the WebSocket routes take an upgrade.
import type { IncomingMessage } from 'node:http'
import { describe, expect, it } from 'vitest'
import {
  createRouteMatcher,
  defaultRoutes,
  upstreamUrl,
  withVersionAliases,
} from '../src/proxy/route-table.ts'
import { acceptsWebSocketUpgrade } from '../src/proxy/websocket-proxy.ts'

const table = withVersionAliases(defaultRoutes)
const matcher = createRouteMatcher(table)
const serviceOf = (path: string) => matcher.match(path)?.service

describe('route table', () => {
  it.each([
    ['/login', 'auth'],
    ['/refresh', 'auth'],
    ['/logout', 'auth'],
    ['/api/auth/refresh', 'auth'],
    // every path of auth's OpenID provider: its endpoints, the resume of an authorization, the login and consent
    // pages and their form posts, so the whole code flow runs on the gateway (the provider's public address)
    ['/authorize', 'auth'],
    ['/authorize/uid-1', 'auth'],
    ['/token', 'auth'],
    ['/token/revocation', 'auth'],
    ['/token/introspection', 'auth'],
    ['/userinfo', 'auth'],
    ['/device', 'auth'],
    ['/device/auth', 'auth'],
    ['/device/uid-1', 'auth'],
    ['/interaction/abc', 'auth'],
    ['/interaction/abc/login', 'auth'],
    ['/interaction/abc/confirm', 'auth'],
    ['/interaction/abc/abort', 'auth'],
    ['/session/end', 'auth'],
    ['/session/end/confirm', 'auth'],
    ['/session/end/success', 'auth'],
    ['/oidc/jwks', 'auth'],
    ['/.well-known/jwks.json', 'auth'],
    ['/.well-known/openid-configuration', 'auth'],
    ['/api/v1/users', 'auth'],
    ['/api/users/42', 'auth'],
    ['/api/v1/api-keys', 'auth'],
    ['/api/v1/password-resets', 'auth'],
    ['/api/password-resets/a-token', 'auth'],
    ['/api/v1/email-verifications', 'auth'],
    ['/api/email-verifications', 'auth'],
    ['/api/v1/email-verifications/a-token', 'auth'],
    ['/api/v1/orders', 'order'],
    ['/api/orders', 'order'],
    ['/orders/o-1', 'order'],
    ['/orders/o-1/cancel', 'order'],
    ['/users/u-1/orders', 'order'],
    ['/users/u-1/orders/o-1', 'order'],
    ['/api/v1/users/u-1/orders', 'order'],
    ['/api/v1/users/u-1/orders/o-1', 'order'],
    ['/api/users/u-1/orders', 'order'],
    ['/api/v1/users/u-1', 'auth'],
    ['/api/v1/users/u-1/password', 'auth'],
    ['/api/v1/users/u-1/notification-preferences', 'notification'],
    ['/api/users/u-1/notification-preferences', 'notification'],
    ['/api/v1/users/u-1/notification-preferencesx', 'auth'],
    ['/api/v1/notifications/unsubscribe', 'notification'],
    ['/api/notifications/unsubscribe', 'notification'],
    ['/api/v1/admin/sagas', 'order'],
    ['/api/admin/sagas/s-1/retry', 'order'],
    ['/api/v1/admin/processes', 'order'],
    ['/api/admin/processes/return/r-1/retry', 'order'],
    ['/api/v1/returns/r-1/receive', 'order'],
    ['/api/returns/r-1', 'order'],
    ['/api/v1/orders/o-1/returns', 'order'],
    ['/payments', 'payment'],
    ['/api/v1/payments/p-1', 'payment'],
    ['/api/v1/products', 'inventory'],
    ['/api/inventory/sku-1', 'inventory'],
    ['/api/v1/shipments', 'shipping'],
    ['/api/v1/notifications', 'notification'],
    ['/graphql', 'content'],
    ['/socket.io/', 'realtime-gateway'],
    ['/ws', 'realtime-gateway'],
    ['/realtime/chat', 'realtime-gateway'],
    ['/api/v1/chat/rooms', 'realtime-gateway'],
    ['/api/v1/chat', 'realtime-gateway'],
    ['/api/chat/rooms', 'realtime-gateway'],
    ['/api/chat/rooms/r-1/members', 'realtime-gateway'],
    ['/api/v1/documents/d-1', 'realtime-gateway'],
  ])('when the path is %s, then it is routed to %s', (path, service) => {
    expect(serviceOf(path)).toBe(service)
  })

  it.each([
    '/tokenx',
    '/loginx',
    '/api/v1/ordersx',
    '/api/ordersx',
    '/users/u-1/ordersx',
    '/users/u-1',
    '/users',
    '/graphqlx',
    '/wss',
    '/',
    '/api',
    '/api/v1',
    '/health-of-something',
  ])('when the path is %s, then no route matches (not a segment boundary)', (path) => {
    expect(matcher.match(path)).toBeUndefined()
  })

  it('when a path is under /api, then it is forwarded as /api/v1 with its query', () => {
    const route = matcher.match('/api/orders/o-1')!
    expect(upstreamUrl(route, '/api/orders/o-1?expand=items')).toBe('/api/v1/orders/o-1?expand=items')
    expect(upstreamUrl(route, '/api/orders')).toBe('/api/v1/orders')
  })

  it('when an alias prefix has a parameter, then the segment the client sent is carried into the canonical path', () => {
    const route = matcher.match('/api/users/u-1/orders')!
    expect(route.rewriteTo).toBe('/api/v1/users/:userId/orders')
    expect(upstreamUrl(route, '/api/users/u-1/orders?page=2')).toBe('/api/v1/users/u-1/orders?page=2')
    expect(upstreamUrl(route, '/api/users/u-1/orders/o-1')).toBe('/api/v1/users/u-1/orders/o-1')
    expect(upstreamUrl(route, '/api/users//orders')).toBeUndefined()
    expect(upstreamUrl(route, '/api/users/u-1/ordersx')).toBeUndefined()
  })

  it('when the path is /api/auth/refresh, then it is forwarded unchanged (auth serves it there)', () => {
    const route = matcher.match('/api/auth/refresh')!
    expect(route.rewriteTo).toBeUndefined()
    expect(upstreamUrl(route, '/api/auth/refresh')).toBe('/api/auth/refresh')
  })

  it('when a canonical /api/v1 path is requested, then it is forwarded unchanged', () => {
    const route = matcher.match('/api/v1/orders/o-1')!
    expect(upstreamUrl(route, '/api/v1/orders/o-1?x=1')).toBe('/api/v1/orders/o-1?x=1')
  })

  it('when an alias prefix arrives percent-encoded, then no upstream URL is guessed', () => {
    const route = matcher.match('/api/orders')!
    expect(upstreamUrl(route, '/api/%6Frders')).toBeUndefined()
  })

  it('when two prefixes match, then the longest wins', () => {
    const longest = createRouteMatcher([
      { prefix: '/a', service: 'short' },
      { prefix: '/a/b', service: 'long' },
    ])
    expect(longest.match('/a/b/c')?.service).toBe('long')
    expect(longest.match('/a/bc')?.service).toBe('short')
    expect(longest.match('/a')?.service).toBe('short')
  })
})

describe('upgrades in the route table', () => {
  const accepts = acceptsWebSocketUpgrade(matcher)
  const asked = (method: string, url: string, headers: Record<string, string> = {}) =>
    accepts({
      method,
      url,
      headers: { connection: 'Upgrade', upgrade: 'websocket', ...headers },
    } as unknown as IncomingMessage)

  it('when the table is read, then /graphql, /socket.io and /ws accept WebSocket upgrades, and no other route', () => {
    const prefixes = table.filter((route) => route.websocket).map((route) => route.prefix)
    expect(prefixes.sort()).toEqual(['/graphql', '/socket.io', '/ws'])
  })

  it.each(['/socket.io/?EIO=4&transport=websocket', '/ws', '/ws/room?x=1', '/graphql'])(
    'when a WebSocket handshake asks for %s, then it is an upgrade',
    (url) => {
      expect(asked('GET', url)).toBe(true)
    },
  )

  it.each([
    ['a plain route', 'GET', '/login', {}],
    ['a REST route of the realtime service', 'GET', '/api/v1/chat/rooms', {}],
    ['/realtime, which is plain HTTP', 'GET', '/realtime', {}],
    ['a path that only shares characters with /ws', 'GET', '/wsx', {}],
    ['a path no route knows', 'GET', '/internal/api-keys/introspect', {}],
    ['a POST', 'POST', '/ws', {}],
    ['an h2c upgrade', 'GET', '/graphql', { upgrade: 'h2c' }],
    ['a handshake declaring a body', 'GET', '/ws', { 'content-length': '5' }],
    ['a handshake with a chunked body', 'GET', '/ws', { 'transfer-encoding': 'chunked' }],
  ])('when %s asks for an upgrade, then it is served as plain HTTP', (_what, method, url, headers) => {
    expect(asked(method, url, headers)).toBe(false)
  })
})
