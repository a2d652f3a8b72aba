// The headers a proxied request and its response carry across the gateway (RFC 9110 §7.6.1, W3C Trace Context).
import { randomFillSync } from 'node:crypto'
import type { IncomingHttpHeaders } from 'node:http'
import { requestIdHeader, serviceCredentialHeader, undiciCarriesTraceContext } from '@meridian/service-kit'

/** Hop-by-hop headers: meaningful for one connection only, never forwarded (either direction). */
export const hopByHopHeaders: readonly string[] = [
  'connection',
  'keep-alive',
  'proxy-authenticate',
  'proxy-authorization',
  'proxy-connection',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
]

/** The header names a Connection header lists (they are hop-by-hop too). */
export function connectionListed(connection: string | string[] | number | undefined): string[] {
  if (connection === undefined) return []
  return String(connection)
    .split(',')
    .map((name) => name.trim().toLowerCase())
    .filter(Boolean)
}

/** The Connection values nearly every message carries: they name no header beyond the fixed hop-by-hop ones. */
const usualConnection = /^\s*(?:keep-alive|close)\s*$/i

/** The headers a Connection header makes hop-by-hop besides the fixed ones; undefined when it names none. */
function alsoHopByHop(connection: string | string[] | number | undefined): string[] | undefined {
  if (connection === undefined || (typeof connection === 'string' && usualConnection.test(connection))) {
    return undefined
  }
  return connectionListed(connection)
}

const traceparentFormat = /^00-(?!0{32})[0-9a-f]{32}-(?!0{16})[0-9a-f]{16}-[0-9a-f]{2}$/

// Trace and span ids come from a pool of random bytes refilled 4 KiB at a time: one randomFillSync per ~170 new
// traces instead of two calls per request (they were 8% of the gateway's CPU).
const randomPool = Buffer.allocUnsafe(4096)
let randomOffset = randomPool.length

function randomHex(bytes: number): string {
  if (randomOffset + bytes > randomPool.length) {
    randomFillSync(randomPool)
    randomOffset = 0
  }
  const hex = randomPool.toString('hex', randomOffset, randomOffset + bytes)
  randomOffset += bytes
  return hex
}

/** A non-zero random id (W3C: all-zero trace and span ids are invalid). */
function randomId(bytes: number): string {
  let id = randomHex(bytes)
  while (/^0+$/.test(id)) id = randomHex(bytes)
  return id
}

/** A well-formed version-00 traceparent is passed on; otherwise a new trace starts (sampled). */
export function traceparentFor(incoming: string | string[] | undefined): { value: string; created: boolean } {
  const candidate = Array.isArray(incoming) ? incoming[0] : incoming
  if (candidate && traceparentFormat.test(candidate)) return { value: candidate, created: false }
  return { value: `00-${randomId(16)}-${randomId(8)}-01`, created: true }
}

export interface ForwardingContext {
  requestId: string
  /** the client's address as the gateway determined it */
  clientAddress: string
  /** the direct peer's address */
  peerAddress: string
  /** whether the direct peer is a trusted proxy (its X-Forwarded-* are then kept and extended) */
  peerTrusted: boolean
  /** 'http' or 'https', as the gateway itself was reached */
  protocol: string
  /** the Host the client asked for */
  host: string | undefined
  /** keep Connection/Upgrade (a WebSocket upgrade being passed through) */
  upgrade?: string
}

const first = (value: string | string[] | undefined): string | undefined =>
  Array.isArray(value) ? value[0] : value

/**
 * Request headers a client's own values of which never pass: the gateway sets them (request id, trace context,
 * X-Forwarded-*, X-Real-IP) or drops them (`Forwarded` would be a second, unchecked claim about the client; Node has
 * already met `Expect: 100-continue` before the body is read, and undici does not send Expect; the service credential
 * is for calls between the services, so a client's, right or wrong, reaches none of them).
 */
const setOrDroppedAtTheEdge = [
  requestIdHeader,
  'traceparent',
  'tracestate',
  'x-forwarded-for',
  'x-forwarded-proto',
  'x-forwarded-host',
  'x-real-ip',
  'forwarded',
  'expect',
  serviceCredentialHeader,
]
const notPassedUpstream: ReadonlySet<string> = new Set([...hopByHopHeaders, ...setOrDroppedAtTheEdge])

/**
 * The request headers for the upstream: hop-by-hop ones removed (and those Connection names), X-Request-Id set to
 * the gateway's id, X-Forwarded-For/-Proto/-Host and X-Real-IP set. An untrusted peer's X-Forwarded-* are replaced,
 * never extended.
 *
 * The trace context: with tracing on (docs/how-to/operations.md, Tracing), the kit's undici instrumentation writes the
 * gateway's own span into traceparent (and tracestate, baggage) of the proxied call, so the services parent to the
 * gateway; the client's values, already checked by the propagator when the gateway's span was started from them, are
 * not copied (a second traceparent would make the header invalid). With tracing off, a well-formed traceparent is
 * passed on (with its tracestate) or a new one is made.
 */
export function upstreamRequestHeaders(
  incoming: IncomingHttpHeaders,
  context: ForwardingContext,
): Record<string, string | string[]> {
  const listed = alsoHopByHop(incoming.connection)
  const traced = undiciCarriesTraceContext()
  const headers: Record<string, string | string[]> = {}
  for (const name in incoming) {
    const value = incoming[name]
    if (value === undefined || notPassedUpstream.has(name) || listed?.includes(name)) continue
    if (traced && name === 'baggage') continue
    headers[name] = value
  }
  headers[requestIdHeader] = context.requestId
  if (!traced) {
    const trace = traceparentFor(incoming.traceparent)
    headers.traceparent = trace.value
    if (!trace.created && incoming.tracestate !== undefined) headers.tracestate = incoming.tracestate
  }

  const priorChain = context.peerTrusted ? first(incoming['x-forwarded-for']) : undefined
  headers['x-forwarded-for'] = priorChain ? `${priorChain}, ${context.peerAddress}` : context.peerAddress
  const priorProto = context.peerTrusted ? first(incoming['x-forwarded-proto']) : undefined
  headers['x-forwarded-proto'] = priorProto ?? context.protocol
  const priorHost = context.peerTrusted ? first(incoming['x-forwarded-host']) : undefined
  const host = priorHost ?? context.host
  if (host) headers['x-forwarded-host'] = host
  headers['x-real-ip'] = context.clientAddress

  if (context.upgrade) {
    headers.connection = 'Upgrade'
    headers.upgrade = context.upgrade
  }
  return headers
}

const hopByHop: ReadonlySet<string> = new Set(hopByHopHeaders)

/** Response headers as Fastify's reply holds them (numbers allowed). */
export type ResponseHeaders = Record<string, string | number | string[] | undefined>

/** Response headers that are the edge's alone: CORS, its rate-limit counters, the request id. */
const ownedByTheEdge = (name: string) =>
  name === requestIdHeader || name.startsWith('access-control-') || name.startsWith('x-ratelimit-')

/**
 * The client's response headers: the edge's own (`edge`: the request id, rate-limit counters, CORS) and the
 * upstream's, without its hop-by-hop ones and those the edge owns. Vary lists both sides' names; for any other
 * name both set, the edge's value stands.
 */
export function clientResponseHeaders(
  upstream: ResponseHeaders | IncomingHttpHeaders,
  edge: ResponseHeaders = {},
): ResponseHeaders {
  const listed = alsoHopByHop(upstream.connection)
  // copied name by name: a spread copy that then gains the upstream's names cost ~4 µs a response (V8 leaves the
  // spread's object in a shape that every added property slows down), ten times this loop
  const headers: ResponseHeaders = {}
  for (const name in edge) headers[name] = edge[name]
  for (const name in upstream) {
    const value = upstream[name]
    if (value === undefined || hopByHop.has(name) || listed?.includes(name) || ownedByTheEdge(name)) continue
    const current = headers[name]
    if (current === undefined) headers[name] = value
    else if (name === 'vary') headers.vary = mergedVary(value, current)
  }
  return headers
}

/** The upstream's Vary names, then the edge's ones it does not already list (compared case-insensitively). */
function mergedVary(upstream: ResponseHeaders[string], edge: ResponseHeaders[string]): string {
  const names = String(upstream)
  const known = new Set(names.split(',').map((name) => name.trim().toLowerCase()))
  const added = String(edge)
    .split(',')
    .map((name) => name.trim())
    .filter((name) => name !== '' && !known.has(name.toLowerCase()))
  return added.length === 0 ? names : `${names}, ${added.join(', ')}`
}
