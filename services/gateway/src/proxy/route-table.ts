// The gateway's route table as data: which public path prefix belongs to which service (spec: Endpoints).
import FindMyWay, { type HTTPVersion } from 'find-my-way'

export interface GatewayRoute {
  /**
   * A path prefix. It matches the path itself and everything below it on a segment boundary (`/token` matches
   * `/token` and `/token/revocation`, never `/tokenx`); a `:name` segment matches any one segment.
   */
  prefix: string
  /** the logical service name (docs/explanation/architecture.md, "The processes"); GATEWAY_SERVICE_NAMES may map it to another Consul name */
  service: string
  /** forward with this prefix instead of `prefix` (the /api alias of /api/v1) */
  rewriteTo?: string
  /**
   * WebSocket upgrades (GET with `Upgrade: websocket`) are passed through to the service here. On any other route an
   * Upgrade header is ignored (RFC 9110 §7.8): the request is served as plain HTTP, its Upgrade and Connection not
   * forwarded.
   */
  websocket?: true
  /**
   * What follows the prefix is a secret (a password reset link's token): the gateway's request log lines and spans
   * show `[redacted]` in its place (service-kit's secretPathParameters).
   */
  secretBelow?: true
}

/** Every public path of the spec, canonical form. /api/* aliases of /api/v1/* are derived (withVersionAliases). */
export const defaultRoutes: readonly GatewayRoute[] = Object.freeze([
  // authentication and identity
  { prefix: '/login', service: 'auth' },
  { prefix: '/refresh', service: 'auth' },
  { prefix: '/logout', service: 'auth' },
  // served by auth exactly here (cookie refresh): not an alias of a /api/v1 path
  { prefix: '/api/auth', service: 'auth' },
  { prefix: '/authorize', service: 'auth' },
  { prefix: '/token', service: 'auth' },
  { prefix: '/userinfo', service: 'auth' },
  { prefix: '/device', service: 'auth' },
  { prefix: '/interaction', service: 'auth' },
  { prefix: '/session/end', service: 'auth' },
  { prefix: '/oidc', service: 'auth' },
  { prefix: '/.well-known', service: 'auth' },
  { prefix: '/api/v1/users', service: 'auth' },
  { prefix: '/api/v1/api-keys', service: 'auth' },
  // a mailed link's token is the segment below: never logged here either
  { prefix: '/api/v1/password-resets', service: 'auth', secretBelow: true },
  { prefix: '/api/v1/email-verifications', service: 'auth', secretBelow: true },
  // orders
  { prefix: '/api/v1/orders', service: 'order' },
  { prefix: '/orders', service: 'order' },
  { prefix: '/users/:userId/orders', service: 'order' },
  // a user's orders belong to order, not to auth's /api/v1/users (the longer, more specific route wins)
  { prefix: '/api/v1/users/:userId/orders', service: 'order' },
  // and a user's notification preferences to notification (its one-click unsubscribe is under /api/v1/notifications)
  { prefix: '/api/v1/users/:userId/notification-preferences', service: 'notification' },
  // returns (POST /api/v1/orders/{id}/returns is under the orders' prefix)
  { prefix: '/api/v1/returns', service: 'order' },
  // exchanges (POST /api/v1/orders/{id}/exchanges is under the orders' prefix)
  { prefix: '/api/v1/exchanges', service: 'order' },
  // operators' view of the order sagas, and of every process the order service runs (the saga, returns, exchanges)
  { prefix: '/api/v1/admin/sagas', service: 'order' },
  { prefix: '/api/v1/admin/processes', service: 'order' },
  // each service's audit trail (admins); the gateway's own /api/v1/admin/audit reads them all and merges them
  { prefix: '/api/v1/admin/audit/auth', service: 'auth' },
  { prefix: '/api/v1/admin/audit/order', service: 'order' },
  { prefix: '/api/v1/admin/audit/payment', service: 'payment' },
  { prefix: '/api/v1/admin/audit/inventory', service: 'inventory' },
  { prefix: '/api/v1/admin/audit/shipping', service: 'shipping' },
  { prefix: '/api/v1/admin/audit/notification', service: 'notification' },
  { prefix: '/api/v1/admin/audit/realtime-gateway', service: 'realtime-gateway' },
  { prefix: '/api/v1/admin/audit/content', service: 'content' },
  // payments
  { prefix: '/payments', service: 'payment' },
  { prefix: '/api/v1/payments', service: 'payment' },
  // inventory
  { prefix: '/api/v1/products', service: 'inventory' },
  { prefix: '/api/v1/inventory', service: 'inventory' },
  // shipping, notifications
  { prefix: '/api/v1/shipments', service: 'shipping' },
  { prefix: '/api/v1/notifications', service: 'notification' },
  // GraphQL over HTTP, and subscriptions over WebSocket (graphql-transport-ws)
  { prefix: '/graphql', service: 'content', websocket: true },
  // the realtime channel: Socket.IO (long-polling is plain HTTP, its WebSocket transport an upgrade) and raw RFC 6455
  { prefix: '/socket.io', service: 'realtime-gateway', websocket: true },
  { prefix: '/ws', service: 'realtime-gateway', websocket: true },
  { prefix: '/realtime', service: 'realtime-gateway' },
  { prefix: '/api/v1/chat', service: 'realtime-gateway' },
  { prefix: '/api/v1/documents', service: 'realtime-gateway' },
])

/**
 * Paths routed only when the gateway runs in development, as their service serves them only then: content's GraphiQL
 * (the page at /graphiql, its scripts below it; the page queries /graphql, routed always).
 */
export const developmentRoutes: readonly GatewayRoute[] = Object.freeze([
  { prefix: '/graphiql', service: 'content' },
])

/** The public routes of an environment: every path of the spec, and in development the development routes too. */
export const publicRoutes = (environment: string): readonly GatewayRoute[] =>
  environment === 'development' ? [...defaultRoutes, ...developmentRoutes] : defaultRoutes

const canonicalPrefix = '/api/v1/'
const aliasPrefix = '/api/'

/**
 * Adds `/api/x -> /api/v1/x` for every `/api/v1/x` route (spec Versioning: /api is the alias of v1), unless the
 * table already routes `/api/x` itself (e.g. /api/auth).
 */
export function withVersionAliases(routes: readonly GatewayRoute[]): GatewayRoute[] {
  const known = new Set(routes.map((route) => route.prefix))
  const aliases: GatewayRoute[] = []
  for (const route of routes) {
    if (!route.prefix.startsWith(canonicalPrefix)) continue
    const alias = aliasPrefix + route.prefix.slice(canonicalPrefix.length)
    if (known.has(alias)) continue
    known.add(alias)
    aliases.push({ ...route, prefix: alias, rewriteTo: route.prefix })
  }
  return [...routes, ...aliases]
}

/** The router patterns one route answers: the prefix itself and everything below it. */
export function routePatterns(route: GatewayRoute): string[] {
  const prefix = route.prefix.replace(/(^|[^/])\/+$/, '$1')
  return [prefix, `${prefix}/*`]
}

/**
 * The path (and query) sent upstream for a request's raw URL: unchanged, or with an alias prefix replaced by its
 * canonical one. Undefined when the raw URL does not literally start with the alias (a percent-encoded prefix),
 * which the caller answers with 404 rather than guess.
 */
export function upstreamUrl(route: GatewayRoute, rawUrl: string): string | undefined {
  if (route.rewriteTo === undefined) return rawUrl
  // the prefix's segments, literally, a `:name` segment taking whatever one segment the URL has there
  const prefixSegments = route.prefix.split('/')
  const rewriteSegments = route.rewriteTo.split('/')
  let at = 0
  const values = new Map<string, string>()
  for (const [index, segment] of prefixSegments.entries()) {
    if (index > 0) {
      if (rawUrl[at] !== '/') return undefined
      at += 1
    }
    if (segment.startsWith(':')) {
      const end = rawUrl.slice(at).search(/[/?]/)
      const value = end === -1 ? rawUrl.slice(at) : rawUrl.slice(at, at + end)
      if (value === '') return undefined
      values.set(segment, value)
      at += value.length
    } else {
      if (!rawUrl.startsWith(segment, at)) return undefined
      at += segment.length
    }
  }
  const rest = rawUrl.slice(at)
  if (rest !== '' && rest[0] !== '/' && rest[0] !== '?') return undefined
  return rewriteSegments.map((segment) => values.get(segment) ?? segment).join('/') + rest
}

/**
 * Whether a path has a dot segment (RFC 3986 §5.2.4), plain or percent-encoded, or an escape that does not decode:
 * a server that normalises it would serve another path than the one the route table matched.
 */
export function hasDotSegment(pathAndQuery: string): boolean {
  const queryAt = pathAndQuery.indexOf('?')
  let path = queryAt === -1 ? pathAndQuery : pathAndQuery.slice(0, queryAt)
  if (path.includes('%')) {
    try {
      path = decodeURIComponent(path)
    } catch {
      return true
    }
  }
  if (!path.includes('.')) return false
  // (a backslash too: some servers take it for a slash)
  return path.split(/[/\\]/).some((segment) => segment === '.' || segment === '..')
}

/**
 * Whether a segment of the path (as sent, before decoding) is longer than `limit`: the routers match a parameter only
 * up to their limit, so such a path would fall through to a shorter prefix (another service) instead of its own
 * route, whose service answers 414.
 */
export function hasOverlongSegment(pathAndQuery: string, limit: number): boolean {
  const query = pathAndQuery.indexOf('?')
  const path = query === -1 ? pathAndQuery : pathAndQuery.slice(0, query)
  return path.length > limit && path.split('/').some((segment) => segment.length > limit)
}

export interface RouteMatcher {
  /** the route serving this path (no query), longest prefix first; undefined when none does */
  match(path: string): GatewayRoute | undefined
}

/**
 * Matches paths with the same router Fastify uses (find-my-way), so that what the upgrade handler and /docs decide
 * agrees with what the HTTP routes registered from the same table serve: static segments win over parameters and
 * the longest prefix wins over a shorter one.
 */
export function createRouteMatcher(routes: readonly GatewayRoute[]): RouteMatcher {
  const router = FindMyWay<HTTPVersion.V1>({ ignoreTrailingSlash: false, caseSensitive: true })
  for (const route of routes) {
    for (const pattern of routePatterns(route)) {
      router.on('GET', pattern, () => {}, { route })
    }
  }
  return {
    match(path) {
      const found = router.find('GET', path)
      return (found?.store as { route: GatewayRoute } | undefined)?.route
    },
  }
}
