// How a failed call to an upstream service becomes an AppError (spec Errors rule 5); the original stays as cause.
import { AppError, ErrorCode, unavailableDependencyHeader } from '@meridian/contracts'

/** The upstream answered with an error status; kept as the AppError's cause for logs. */
export class UpstreamStatusError extends Error {
  readonly upstream: string
  readonly status: number
  readonly method: string
  readonly path: string
  /** the upstream's own error code, when it answered with an error envelope */
  readonly upstreamCode: string | undefined

  constructor(upstream: string, method: string, path: string, status: number, upstreamCode?: string) {
    super(`${upstream} answered ${status} to ${method} ${path}${upstreamCode ? ` (${upstreamCode})` : ''}`)
    this.name = 'UpstreamStatusError'
    this.upstream = upstream
    this.status = status
    this.method = method
    this.path = path
    this.upstreamCode = upstreamCode
  }
}

/** The call did not finish within the client's timeout; kept as the AppError's cause for logs. */
export class UpstreamTimeoutError extends Error {
  readonly upstream: string
  readonly timeoutMs: number

  constructor(upstream: string, timeoutMs: number) {
    super(`${upstream} did not answer within ${timeoutMs} ms`)
    this.name = 'UpstreamTimeoutError'
    this.upstream = upstream
    this.timeoutMs = timeoutMs
  }
}

/** Retry-After given to clients when an upstream rate-limits us (spec Errors rule 5). */
export const upstreamRateLimitRetryAfterSeconds = 30

/**
 * Error codes meaning the upstream could not be reached or did not answer in time: refused, unknown host,
 * unreachable network, timeouts. Anything else that breaks a call (a reset mid-answer, a malformed answer) is the
 * upstream failing, not being unavailable.
 */
const unavailabilityCodes = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ETIMEDOUT',
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
])

/** Looks through an error, its cause and (for happy-eyeballs connects) its AggregateError members. */
export function isUpstreamUnavailable(error: unknown, depth = 0): boolean {
  if (!(error instanceof Error) || depth > 5) return false
  if (error instanceof UpstreamTimeoutError) return true
  const code = (error as { code?: unknown }).code
  if (typeof code === 'string' && unavailabilityCodes.has(code)) return true
  if (
    error instanceof AggregateError &&
    error.errors.some((inner) => isUpstreamUnavailable(inner, depth + 1))
  ) {
    return true
  }
  return isUpstreamUnavailable(error.cause, depth + 1)
}

/** 503 SERVICE_UNAVAILABLE naming the upstream, never its address; the header says the fault is the dependency's. */
export function upstreamUnavailable(upstream: string, cause: unknown): AppError {
  return new AppError(503, ErrorCode.SERVICE_UNAVAILABLE, {
    message: `${upstream} is unavailable`,
    cause,
    headers: { [unavailableDependencyHeader]: upstream },
  })
}

/** 502 with the client's error code: the upstream broke the call. */
export function upstreamFailed(upstream: string, errorCode: string, cause: unknown): AppError {
  return new AppError(502, errorCode, { message: `${upstream} failed to handle the request`, cause })
}

/**
 * The AppError for an upstream error status: 402 stays 402 (with the upstream's display-safe message when it sent
 * an error envelope), 429 becomes RATE_LIMITED with retryAfter 30, anything else 502.
 */
export function appErrorForUpstreamStatus(
  cause: UpstreamStatusError,
  errorCode: string,
  upstreamMessage?: string,
): AppError {
  if (cause.status === 402) {
    return new AppError(402, errorCode, {
      message: upstreamMessage ?? `${cause.upstream} declined the request`,
      cause,
    })
  }
  if (cause.status === 429) {
    return new AppError(429, ErrorCode.RATE_LIMITED, {
      message: 'Rate limit exceeded',
      retryAfter: upstreamRateLimitRetryAfterSeconds,
      cause,
    })
  }
  return upstreamFailed(cause.upstream, errorCode, cause)
}
