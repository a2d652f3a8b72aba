// pino options shared by every service: request-id correlation and redaction of credentials and personal data.
import type { FastifyBaseLogger, FastifyServerOptions } from 'fastify'
import type { Bindings, ChildLoggerOptions, LoggerOptions } from 'pino'
import { activeTracing } from './tracing/active-tracing.ts'
import { activeSpanIds } from './tracing/spans.ts'

/**
 * A request's own log fields (its request id), kept on its child logger and written into each of its lines by the
 * mixin of `loggerOptions`. pino would serialize child bindings through the redaction as the child is made, every
 * request, logged or not (~2 µs, and 2-3% of the gateway's CPU in profiles); this way they cost nothing until a
 * line is written.
 */
const requestFields = Symbol('meridian.requestFields')

interface RequestLogger {
  [requestFields]?: Bindings
}

/**
 * Fastify's `childLoggerFactory`: a request's logger, its fields (request id) added as each line is written. A route
 * without a log level or serializers of its own (nearly all) gets an object whose prototype is the service's logger:
 * what pino's child() makes without bindings, without the options it would check and the formatters it would copy on
 * every request. Its level, methods and stream are the service's (a runtime level change reaches it); its own
 * children are pino's.
 */
export function requestLogger(
  logger: FastifyBaseLogger,
  bindings: Bindings,
  options: ChildLoggerOptions,
): FastifyBaseLogger {
  const child: FastifyBaseLogger & RequestLogger = hasOwnKeys(options)
    ? logger.child({}, options)
    : Object.create(logger)
  child[requestFields] = bindings
  return child
}

function hasOwnKeys(value: object): boolean {
  for (const key in value) if (Object.hasOwn(value, key)) return true
  return false
}

/**
 * The fields of the request a logger belongs to (inherited by its own children), on a fresh object each line, and,
 * inside a span, its `trace_id` and `span_id`: read as the line is written, so a request that logs nothing pays
 * nothing, and with tracing off not even the look-up of the active span.
 */
function requestFieldsOf(_line: object, _level: number, logger: object): object {
  const fields = (logger as RequestLogger)[requestFields]
  const ids = activeTracing() === undefined ? undefined : activeSpanIds()
  if (ids === undefined) return fields === undefined ? {} : { ...fields }
  return fields === undefined ? ids : { ...fields, ...ids }
}

/**
 * Paths pino replaces with [Redacted]: credentials in headers, passwords, tokens and card numbers anywhere
 * in a logged object one or two levels down (bodies are never logged whole).
 */
export const redactPaths = [
  'req.headers.authorization',
  'req.headers.cookie',
  'req.headers["x-api-key"]',
  'req.headers["x-carrier-key"]',
  'req.headers["x-service-credential"]',
  'req.headers["proxy-authorization"]',
  'res.headers["set-cookie"]',
  'headers.authorization',
  'headers.cookie',
  'headers["set-cookie"]',
  'headers["x-api-key"]',
  'headers["x-carrier-key"]',
  'headers["x-service-credential"]',
  '*.password',
  '*.*.password',
  '*.token',
  '*.accessToken',
  '*.refreshToken',
  '*.cardNumber',
  '*.*.cardNumber',
  '*.card_number',
  '*.cvv',
  'password',
  'token',
  'accessToken',
  'refreshToken',
  'cardNumber',
]

/**
 * Query parameters that carry an API key. Keys are accepted only in the X-API-Key header (the auth plugin refuses
 * these), but a refused URL is still logged, so their values are masked in the logged URL. Compared lower-case.
 */
export const apiKeyQueryParameters: ReadonlySet<string> = new Set([
  'api_key',
  'apikey',
  'api-key',
  'key',
  'x-api-key',
])

/** The query parameter's name as a client meant it: percent-decoded, `+` as space, lower case. */
export function queryParameterName(rawName: string): string {
  const spaced = rawName.replaceAll('+', ' ')
  try {
    return decodeURIComponent(spaced).toLowerCase()
  } catch {
    return spaced.toLowerCase()
  }
}

/**
 * Query parameters whose values are credentials or grant them: API keys, OAuth's tokens, codes and client secrets
 * (RFC 6749, 6750, 7636, 8628), passwords. Never logged: their values are masked in every logged URL.
 */
export const secretQueryParameters: ReadonlySet<string> = new Set([
  ...apiKeyQueryParameters,
  'access_token',
  'refresh_token',
  'id_token',
  'id_token_hint',
  'token',
  'code',
  'code_verifier',
  'device_code',
  'client_secret',
  'client_assertion',
  'assertion',
  'password',
  'secret',
])

/** The URL with the value of every secret query parameter replaced by [Redacted]; the rest is left as sent. */
export function maskSecretsInUrl(url: string): string {
  const queryStart = url.indexOf('?')
  if (queryStart === -1) return url
  const query = url
    .slice(queryStart + 1)
    .split('&')
    .map((pair) => {
      const separator = pair.indexOf('=')
      const rawName = separator === -1 ? pair : pair.slice(0, separator)
      return secretQueryParameters.has(queryParameterName(rawName)) ? `${rawName}=[Redacted]` : pair
    })
    .join('&')
  return `${url.slice(0, queryStart)}?${query}`
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /**
     * Path parameters whose values are secrets (a single-use token in the path, as a password reset's link has):
     * wherever the kit writes the request's URL (the request log lines, the request span's `url.path`) their segments
     * read `[redacted]`. `*` names a wildcard's whole rest (the gateway's routes of such paths).
     */
    secretPathParameters?: readonly string[]
  }
}

/** What stands in a logged URL for a secret path segment. */
export const redactedSegment = '[redacted]'

/**
 * The path with the segments of the route's secret parameters replaced by [redacted] (the query is kept as sent).
 * The route's pattern and the path are compared segment by segment: a pattern segment naming a secret parameter
 * (`:token`) hides the path's segment there; a secret `*` hides everything from there on.
 */
export function redactSecretPathSegments(
  url: string,
  routePattern: string | undefined,
  secretParameters: readonly string[] | undefined,
): string {
  if (routePattern === undefined || secretParameters === undefined || secretParameters.length === 0)
    return url
  const queryStart = url.indexOf('?')
  const path = queryStart === -1 ? url : url.slice(0, queryStart)
  const query = queryStart === -1 ? '' : url.slice(queryStart)
  const pattern = routePattern.split('/')
  const segments = path.split('/')
  // `:name`, or `:name(regex)`: the whole segment is the parameter's
  const secret = (patternSegment: string) =>
    secretParameters.some((name) =>
      name === '*'
        ? patternSegment === '*'
        : patternSegment === `:${name}` || patternSegment.startsWith(`:${name}(`),
    )
  const redacted: string[] = []
  for (const [index, segment] of segments.entries()) {
    const patternSegment = pattern[index] ?? ''
    if (patternSegment === '*' && secret('*')) {
      redacted.push(redactedSegment)
      break
    }
    redacted.push(secret(patternSegment) ? redactedSegment : segment)
  }
  return `${redacted.join('/')}${query}`
}

/** A request as the kit's logs and spans see it: its route's pattern and options once routed. */
export interface LoggableRequest {
  url: string
  routeOptions?: { url?: string | undefined; config?: { secretPathParameters?: readonly string[] } }
}

/**
 * The URL as the kit writes it anywhere (request logs, the request span): secret path segments and secret query
 * parameters' values replaced.
 */
export function loggableUrl(request: LoggableRequest): string {
  const options = request.routeOptions
  return maskSecretsInUrl(
    redactSecretPathSegments(request.url, options?.url, options?.config?.secretPathParameters),
  )
}

/** The routes of this process with secret path parameters (the kit's onRoute hook adds them): outgoing calls to such
 * paths (the gateway's, forwarding them) are traced without those segments too. */
const secretRoutes: { pattern: string[]; source: string; parameters: readonly string[] }[] = []

/** Remembers a route whose path parameters are secret (`config.secretPathParameters`). */
export function rememberSecretRoute(routePattern: string, parameters: readonly string[]): void {
  if (parameters.length === 0 || secretRoutes.some((route) => route.source === routePattern)) return
  secretRoutes.push({ pattern: routePattern.split('/'), source: routePattern, parameters })
}

function matchesPattern(pattern: readonly string[], segments: readonly string[]): boolean {
  for (const [index, part] of pattern.entries()) {
    if (part === '*') return true
    const segment = segments[index]
    if (segment === undefined) return false
    if (part.startsWith(':') ? segment === '' : part !== segment) return false
  }
  return pattern.length === segments.length
}

/**
 * An outgoing call's path and query as traced: the segments of a remembered secret route's parameters replaced (the
 * gateway forwards /api/v1/password-resets/<token> as it came) and secret query parameters' values masked.
 */
export function loggableOutgoingPath(pathAndQuery: string): string {
  const queryStart = pathAndQuery.indexOf('?')
  const segments = (queryStart === -1 ? pathAndQuery : pathAndQuery.slice(0, queryStart)).split('/')
  const route = secretRoutes.find((each) => matchesPattern(each.pattern, segments))
  const redacted = route
    ? redactSecretPathSegments(pathAndQuery, route.source, route.parameters)
    : pathAndQuery
  return maskSecretsInUrl(redacted)
}

interface SerializableRequest extends LoggableRequest {
  id: string
  method: string
  headers: Record<string, unknown>
  socket?: { remoteAddress?: string }
  ip?: string
}

export function loggerOptions(
  service: string,
  level: string,
): LoggerOptions & FastifyServerOptions['logger'] {
  return {
    level,
    base: { service },
    mixin: requestFieldsOf,
    redact: { paths: redactPaths, censor: '[Redacted]' },
    serializers: {
      req(request: SerializableRequest) {
        return {
          requestId: request.id,
          method: request.method,
          url: loggableUrl(request),
          remoteAddress: request.ip ?? request.socket?.remoteAddress,
          headers: request.headers,
        }
      },
      res(reply: { statusCode: number }) {
        return { statusCode: reply.statusCode }
      },
    },
  }
}
