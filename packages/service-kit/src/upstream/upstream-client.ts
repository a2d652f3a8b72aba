// HTTP client for calling another service: keep-alive connections, one deadline per call, failures as AppErrors.
import type { IncomingHttpHeaders } from 'node:http'
import { AppError, ErrorCode, type ErrorDetail } from '@meridian/contracts'
import { Agent } from 'undici'
import { isInternalPath, sentServiceCredential, serviceCredentialHeader } from '../auth/service-credential.ts'
import {
  appErrorForUpstreamStatus,
  isUpstreamUnavailable,
  UpstreamStatusError,
  UpstreamTimeoutError,
  upstreamFailed,
  upstreamUnavailable,
} from './upstream-failure.ts'

interface UpstreamClientCommonOptions {
  /** the upstream's logical name, e.g. 'payment'; error messages name it (never its address) */
  name: string
  /** deadline of a whole call (connect, headers and body), ms; default 5000 (spec Limits) */
  timeoutMs?: number
  /** code of the 402 and 502 errors; default PAYMENT_SERVICE_ERROR (spec Errors rule 5) */
  errorCode?: ErrorCode | (string & {})
  /**
   * SERVICE_CREDENTIAL as configured, for a client of another Meridian service: its first entry is sent in
   * X-Service-Credential on every call to an /internal/ path, and on no other (a third party never gets it)
   */
  serviceCredential?: string
}

export type UpstreamClientOptions = UpstreamClientCommonOptions &
  (
    | {
        /** fixed base URL, e.g. http://127.0.0.1:3003 (a path prefix is kept) */ baseUrl: string
        resolveOrigin?: never
      }
    | {
        /** picks the base URL for each call, e.g. from discovery; may throw an AppError (e.g. 503) */
        resolveOrigin: () => string | Promise<string>
        baseUrl?: never
      }
  )

export type UpstreamMethod = 'GET' | 'HEAD' | 'POST' | 'PUT' | 'PATCH' | 'DELETE'

export interface UpstreamRequest {
  method: UpstreamMethod
  /** path below the base URL, starting with '/' */
  path: string
  query?: Record<string, string | number | boolean | undefined>
  /** a string or Buffer is sent as it is; anything else as JSON */
  body?: unknown
  headers?: Record<string, string>
  /** forwarded as X-Request-Id */
  requestId?: string
  /** cancels the call; a cancelled call rejects with the abort reason, not an AppError */
  signal?: AbortSignal
  /**
   * Error statuses that are the caller's own answer rather than the upstream failing, for a call made on the
   * client's behalf with the client's credential (e.g. [401, 403, 409, 422]): such a status with an error envelope
   * rejects with an AppError of the same status, code, message and details. Others map as usual (502, 402, 429).
   */
  relayStatuses?: readonly number[]
}

export interface UpstreamResponse<T> {
  status: number
  headers: IncomingHttpHeaders
  /** parsed when the upstream answered JSON; else the text; undefined when empty */
  body: T
}

export interface UpstreamClient {
  readonly name: string
  readonly timeoutMs: number
  readonly errorCode: string
  /**
   * Resolves for statuses below 400. Rejects with an AppError: 503 when the upstream is unreachable or too slow,
   * 402 / 429 / 502 for its error statuses (see upstream-failure.ts).
   */
  request<T = unknown>(request: UpstreamRequest): Promise<UpstreamResponse<T>>
  close(): Promise<void>
}

export const upstreamDefaults = Object.freeze({
  timeoutMs: 5000,
  errorCode: ErrorCode.PAYMENT_SERVICE_ERROR as string,
})

const jsonContentType = /^application\/(?:[\w.+-]*\+)?json\b/i

function splitBaseUrl(baseUrl: string): { origin: string; pathPrefix: string } {
  const url = new URL(baseUrl)
  return { origin: url.origin, pathPrefix: url.pathname.replace(/(^|[^/])\/+$/, '$1') }
}

function encodeBody(body: unknown): { payload: string | Buffer | null; contentType?: string } {
  if (body === undefined) return { payload: null }
  if (typeof body === 'string' || Buffer.isBuffer(body)) return { payload: body }
  return { payload: JSON.stringify(body), contentType: 'application/json' }
}

/** The `error` object of an error envelope, when the body is one. */
function envelopeError(body: unknown): Record<string, unknown> | undefined {
  if (typeof body !== 'object' || body === null || !('error' in body)) return undefined
  const error = (body as { error: unknown }).error
  return typeof error === 'object' && error !== null ? (error as Record<string, unknown>) : undefined
}

function envelopeField(body: unknown, field: 'code' | 'message'): string | undefined {
  const value = envelopeError(body)?.[field]
  return typeof value === 'string' ? value : undefined
}

const isErrorDetail = (value: unknown): value is ErrorDetail =>
  typeof value === 'object' &&
  value !== null &&
  typeof (value as ErrorDetail).field === 'string' &&
  typeof (value as ErrorDetail).message === 'string'

/** The upstream's error envelope as the caller's own AppError (relayStatuses); undefined when it sent none. */
function relayedError(body: unknown, status: number, cause: UpstreamStatusError): AppError | undefined {
  const code = envelopeField(body, 'code')
  const message = envelopeField(body, 'message')
  if (code === undefined || message === undefined) return undefined
  const details = envelopeError(body)?.details
  return new AppError(status, code, {
    message,
    ...(Array.isArray(details) && details.every(isErrorDetail) ? { details } : {}),
    cause,
  })
}

export function createUpstreamClient(options: UpstreamClientOptions): UpstreamClient {
  const { name } = options
  const timeoutMs = options.timeoutMs ?? upstreamDefaults.timeoutMs
  const errorCode = options.errorCode ?? upstreamDefaults.errorCode
  const fixedBase = options.baseUrl === undefined ? undefined : splitBaseUrl(options.baseUrl)
  const credential =
    options.serviceCredential === undefined ? undefined : sentServiceCredential(options.serviceCredential)
  const agent = new Agent({
    keepAliveTimeout: 10_000,
    connect: { timeout: timeoutMs },
    headersTimeout: timeoutMs,
    bodyTimeout: timeoutMs,
  })
  let closed = false
  let closing: Promise<void> | undefined

  async function resolveBase(): Promise<{ origin: string; pathPrefix: string }> {
    if (fixedBase) return fixedBase
    try {
      return splitBaseUrl(await options.resolveOrigin!())
    } catch (error) {
      if (error instanceof AppError) throw error
      throw upstreamUnavailable(name, error)
    }
  }

  async function request<T>(call: UpstreamRequest): Promise<UpstreamResponse<T>> {
    if (closed) throw new Error(`the upstream client of ${name} is closed`)
    const { origin, pathPrefix } = await resolveBase()
    const query = new URLSearchParams()
    for (const [key, value] of Object.entries(call.query ?? {})) {
      if (value !== undefined) query.set(key, String(value))
    }
    const path = `${pathPrefix}${call.path}${query.size > 0 ? `?${query}` : ''}`
    const { payload, contentType } = encodeBody(call.body)
    const headers: Record<string, string> = {
      accept: 'application/json',
      ...(contentType ? { 'content-type': contentType } : {}),
      ...call.headers,
      ...(call.requestId ? { 'x-request-id': call.requestId } : {}),
      ...(credential && isInternalPath(call.path) ? { [serviceCredentialHeader]: credential } : {}),
    }

    const deadline = new AbortController()
    let timedOut = false
    const timer = setTimeout(() => {
      timedOut = true
      deadline.abort(new UpstreamTimeoutError(name, timeoutMs))
    }, timeoutMs)
    const cancel = () => deadline.abort(call.signal?.reason)
    call.signal?.addEventListener('abort', cancel, { once: true })
    if (call.signal?.aborted) cancel()

    let status: number
    let responseHeaders: IncomingHttpHeaders
    let body: unknown
    try {
      const response = await agent.request({
        origin,
        path,
        method: call.method,
        headers,
        body: payload,
        signal: deadline.signal,
      })
      status = response.statusCode
      responseHeaders = response.headers
      const text = await response.body.text()
      const isJson = jsonContentType.test(String(response.headers['content-type'] ?? ''))
      body = text === '' ? undefined : isJson ? JSON.parse(text) : text
    } catch (error) {
      if (timedOut) throw upstreamUnavailable(name, new UpstreamTimeoutError(name, timeoutMs))
      if (call.signal?.aborted) throw call.signal.reason ?? error
      if (isUpstreamUnavailable(error)) throw upstreamUnavailable(name, error)
      throw upstreamFailed(name, errorCode, error)
    } finally {
      clearTimeout(timer)
      call.signal?.removeEventListener('abort', cancel)
    }

    if (status >= 400) {
      const cause = new UpstreamStatusError(name, call.method, call.path, status, envelopeField(body, 'code'))
      const relayed = call.relayStatuses?.includes(status) ? relayedError(body, status, cause) : undefined
      throw relayed ?? appErrorForUpstreamStatus(cause, errorCode, envelopeField(body, 'message'))
    }
    return { status, headers: responseHeaders, body: body as T }
  }

  return {
    name,
    timeoutMs,
    errorCode,
    request,
    close() {
      closed = true
      closing ??= agent.close()
      return closing
    },
  }
}
