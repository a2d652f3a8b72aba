// A small client of Consul's HTTP API over undici: base URL, ACL token header, TLS, errors that name the failed call.
import { Pool } from 'undici'

/** TLS of an `https://` address, as PEM texts (the contents of the files CONSUL_CACERT, … name). */
export interface ConsulTls {
  /** the CA(s) the agent's certificate is checked against, instead of the system's; unset: the system's */
  ca?: string
  /** a client certificate and its key, for an agent that verifies incoming HTTPS clients; both or neither */
  cert?: string
  key?: string
}

export interface ConsulClientOptions {
  /**
   * Consul's HTTP address as in CONSUL_HTTP_ADDR: `https://127.0.0.1:8501`, `http://127.0.0.1:8500` or
   * `127.0.0.1:8500` (plain HTTP)
   */
  address: string
  /** ACL token (CONSUL_HTTP_TOKEN), sent as X-Consul-Token */
  token?: string
  /** only with an `https://` address */
  tls?: ConsulTls
  /** how long a non-blocking call may take, in ms; default 10000 */
  requestTimeoutMs?: number
}

export type ConsulQuery = Record<string, string | number | boolean | undefined>

export interface ConsulCallOptions {
  query?: ConsulQuery
  /** sent as JSON */
  body?: unknown
  signal?: AbortSignal
  /** overrides requestTimeoutMs for this call, e.g. for a blocking query meant to wait */
  timeoutMs?: number
  /** statuses besides 2xx answered as a response rather than thrown, e.g. 404 for a KV prefix with no keys */
  accept?: readonly number[]
}

export interface ConsulResponse<T> {
  status: number
  /** parsed JSON when Consul answered JSON, else the text (often empty) */
  body: T
  /** X-Consul-Index, when Consul sent one */
  index: number | undefined
}

/** A Consul call that failed: a non-2xx answer (statusCode set) or no answer at all (cause set). */
export class ConsulRequestError extends Error {
  readonly method: string
  readonly path: string
  readonly statusCode: number | undefined

  constructor(method: string, path: string, statusCode: number | undefined, detail: string, cause?: unknown) {
    const outcome = statusCode === undefined ? `failed: ${detail}` : `answered ${statusCode}: ${detail}`
    super(`Consul ${method} ${path} ${outcome}`, cause === undefined ? undefined : { cause })
    this.name = 'ConsulRequestError'
    this.method = method
    this.path = path
    this.statusCode = statusCode
  }
}

export interface ConsulClient {
  /** e.g. http://127.0.0.1:8500 */
  readonly baseUrl: string
  get<T = unknown>(path: string, options?: ConsulCallOptions): Promise<ConsulResponse<T>>
  put<T = unknown>(path: string, options?: ConsulCallOptions): Promise<ConsulResponse<T>>
  delete<T = unknown>(path: string, options?: ConsulCallOptions): Promise<ConsulResponse<T>>
  /** closes the connections (waits for calls in flight) */
  close(): Promise<void>
}

const defaultRequestTimeoutMs = 10_000

/** `127.0.0.1:8500` -> `http://127.0.0.1:8500`; a trailing slash is dropped. */
export function consulBaseUrl(address: string): string {
  return (/^https?:\/\//i.test(address) ? address : `http://${address}`).replace(/(^|[^/])\/+$/, '$1')
}

export function createConsulClient(options: ConsulClientOptions): ConsulClient {
  const baseUrl = consulBaseUrl(options.address)
  const url = new URL(baseUrl)
  const pathPrefix = url.pathname.replace(/(^|[^/])\/+$/, '$1')
  const requestTimeoutMs = options.requestTimeoutMs ?? defaultRequestTimeoutMs
  const pool = new Pool(url.origin, { keepAliveTimeout: 10_000, ...connectOptions(url, options.tls) })
  const tokenHeader: Record<string, string> = options.token ? { 'x-consul-token': options.token } : {}

  async function call<T>(
    method: 'GET' | 'PUT' | 'DELETE',
    path: string,
    callOptions: ConsulCallOptions = {},
  ) {
    const timeoutMs = callOptions.timeoutMs ?? requestTimeoutMs
    const query = new URLSearchParams()
    for (const [key, value] of Object.entries(callOptions.query ?? {})) {
      if (value !== undefined) query.set(key, String(value))
    }
    const search = query.size > 0 ? `?${query}` : ''
    const hasBody = callOptions.body !== undefined
    let response: Awaited<ReturnType<Pool['request']>>
    let text: string
    try {
      response = await pool.request({
        method,
        path: `${pathPrefix}${path}${search}`,
        headers: {
          ...tokenHeader,
          accept: 'application/json',
          ...(hasBody ? { 'content-type': 'application/json' } : {}),
        },
        body: hasBody ? JSON.stringify(callOptions.body) : null,
        signal: callOptions.signal ?? null,
        headersTimeout: timeoutMs,
        bodyTimeout: timeoutMs,
      })
      text = await response.body.text()
    } catch (error) {
      // a caller's own abort is not a Consul failure: let it through unchanged
      if (callOptions.signal?.aborted) throw error
      throw new ConsulRequestError(method, path, undefined, describeTransportError(error), error)
    }
    const accepted = callOptions.accept?.includes(response.statusCode) ?? false
    if ((response.statusCode < 200 || response.statusCode >= 300) && !accepted) {
      throw new ConsulRequestError(
        method,
        path,
        response.statusCode,
        text.trim().slice(0, 500) || '(no body)',
      )
    }
    const contentType = String(response.headers['content-type'] ?? '')
    let body: unknown = text
    if (text !== '' && contentType.includes('json')) {
      try {
        body = JSON.parse(text)
      } catch (error) {
        throw new ConsulRequestError(method, path, response.statusCode, 'the answer is not valid JSON', error)
      }
    }
    const indexHeader = response.headers['x-consul-index']
    const index =
      typeof indexHeader === 'string' && /^\d+$/.test(indexHeader) ? Number(indexHeader) : undefined
    return { status: response.statusCode, body: body as T, index }
  }

  return {
    baseUrl,
    get: (path, callOptions) => call('GET', path, callOptions),
    put: (path, callOptions) => call('PUT', path, callOptions),
    delete: (path, callOptions) => call('DELETE', path, callOptions),
    close: () => pool.close(),
  }
}

/** undici's TLS settings for the pool; a TLS setting beside a plain-HTTP address is a mistake, not ignored. */
function connectOptions(url: URL, tls: ConsulTls | undefined): { connect?: ConsulTls } {
  if (!tls || (tls.ca === undefined && tls.cert === undefined && tls.key === undefined)) return {}
  if (url.protocol !== 'https:') {
    throw new TypeError(
      `Consul TLS settings were given for a plain-HTTP address (${url.origin}): use https://`,
    )
  }
  if ((tls.cert === undefined) !== (tls.key === undefined)) {
    throw new TypeError('a Consul client certificate needs its key, and a key its certificate')
  }
  return {
    connect: {
      ...(tls.ca !== undefined ? { ca: tls.ca } : {}),
      ...(tls.cert !== undefined ? { cert: tls.cert } : {}),
      ...(tls.key !== undefined ? { key: tls.key } : {}),
    },
  }
}

function describeTransportError(error: unknown): string {
  if (!(error instanceof Error)) return String(error)
  const code = (error as { code?: unknown }).code
  return typeof code === 'string' && !error.message.includes(code)
    ? `${code} ${error.message}`
    : error.message
}

/** Lets options take either a shared client or the settings for one of their own (closed with them). */
export function consulClientFrom(consul: ConsulClient | ConsulClientOptions): {
  client: ConsulClient
  owned: boolean
} {
  return 'get' in consul
    ? { client: consul, owned: false }
    : { client: createConsulClient(consul), owned: true }
}
