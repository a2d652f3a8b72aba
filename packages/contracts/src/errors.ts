// The error envelope, its RFC 7807 alternative, the stable error codes and the AppError family that carries them.
import { type Static, Type } from 'typebox'

/** Stable, machine-readable codes (UPPER_SNAKE_CASE), each with its status in docs/reference/interface.md. */
export const ErrorCode = {
  BAD_REQUEST: 'BAD_REQUEST',
  UNAUTHORIZED: 'UNAUTHORIZED',
  PAYMENT_SERVICE_ERROR: 'PAYMENT_SERVICE_ERROR',
  FORBIDDEN: 'FORBIDDEN',
  /** 403: the credential is limited to scopes (API key, OAuth access token) and lacks the operation's */
  INSUFFICIENT_SCOPE: 'INSUFFICIENT_SCOPE',
  NOT_FOUND: 'NOT_FOUND',
  METHOD_NOT_ALLOWED: 'METHOD_NOT_ALLOWED',
  CONFLICT: 'CONFLICT',
  PRECONDITION_FAILED: 'PRECONDITION_FAILED',
  PAYLOAD_TOO_LARGE: 'PAYLOAD_TOO_LARGE',
  URI_TOO_LONG: 'URI_TOO_LONG',
  REQUEST_TIMEOUT: 'REQUEST_TIMEOUT',
  HEADERS_TOO_LARGE: 'HEADERS_TOO_LARGE',
  UNSUPPORTED_MEDIA_TYPE: 'UNSUPPORTED_MEDIA_TYPE',
  VALIDATION_ERROR: 'VALIDATION_ERROR',
  RATE_LIMITED: 'RATE_LIMITED',
  INTERNAL_ERROR: 'INTERNAL_ERROR',
  DB_ERROR: 'DB_ERROR',
  NOT_IMPLEMENTED: 'NOT_IMPLEMENTED',
  BAD_GATEWAY: 'BAD_GATEWAY',
  SERVICE_UNAVAILABLE: 'SERVICE_UNAVAILABLE',
  GATEWAY_TIMEOUT: 'GATEWAY_TIMEOUT',
} as const
export type ErrorCode = (typeof ErrorCode)[keyof typeof ErrorCode]

/** Default, display-safe message of each code (the spec's texts where it gives one). */
export const defaultErrorMessage: Record<ErrorCode, string> = {
  BAD_REQUEST: 'Bad request',
  UNAUTHORIZED: 'Authentication required',
  PAYMENT_SERVICE_ERROR: 'Payment service error',
  FORBIDDEN: 'Insufficient permissions',
  INSUFFICIENT_SCOPE: 'Insufficient scope',
  NOT_FOUND: 'Resource not found',
  METHOD_NOT_ALLOWED: 'Method not allowed',
  CONFLICT: 'Resource already exists',
  PRECONDITION_FAILED: 'Precondition failed',
  PAYLOAD_TOO_LARGE: 'Payload too large',
  URI_TOO_LONG: 'Request URI too long',
  REQUEST_TIMEOUT: 'The request was not received in time',
  HEADERS_TOO_LARGE: 'Request headers too large',
  UNSUPPORTED_MEDIA_TYPE: 'Unsupported media type; application/json expected',
  VALIDATION_ERROR: 'Validation failed',
  RATE_LIMITED: 'Rate limit exceeded',
  INTERNAL_ERROR: 'An unexpected error occurred',
  DB_ERROR: 'A database error occurred',
  NOT_IMPLEMENTED: 'Not implemented',
  BAD_GATEWAY: 'Bad gateway',
  SERVICE_UNAVAILABLE: 'Service temporarily unavailable',
  GATEWAY_TIMEOUT: 'Upstream timed out',
}

export const ErrorDetail = Type.Object(
  {
    field: Type.String({ description: 'where the problem is, e.g. email or items.0.quantity' }),
    message: Type.String(),
    received: Type.Optional(Type.String({ description: 'the offending value, as text (never for secrets)' })),
  },
  { additionalProperties: false },
)
export type ErrorDetail = Static<typeof ErrorDetail>

export const ErrorEnvelope = Type.Object(
  {
    success: Type.Literal(false),
    error: Type.Object(
      {
        code: Type.String({ pattern: '^[A-Z][A-Z0-9_]*$' }),
        message: Type.String(),
        details: Type.Optional(Type.Array(ErrorDetail)),
        requestId: Type.String(),
        timestamp: Type.String({ format: 'date-time', maxLength: 64 }),
        retryAfter: Type.Optional(
          Type.Integer({ minimum: 0, description: 'seconds; rate-limit and availability errors' }),
        ),
        stack: Type.Optional(Type.String({ description: 'outside production only, for 5xx' })),
      },
      { additionalProperties: false },
    ),
  },
  { $id: 'ErrorEnvelope', additionalProperties: false },
)
export type ErrorEnvelope = Static<typeof ErrorEnvelope>

/** RFC 7807 problem details, served when the client asks for application/problem+json. */
export const ProblemDetails = Type.Object({
  type: Type.String({ description: 'URI reference naming the problem type' }),
  title: Type.String(),
  status: Type.Integer(),
  detail: Type.String(),
  instance: Type.String(),
  code: Type.String(),
  requestId: Type.String(),
  timestamp: Type.String({ format: 'date-time', maxLength: 64 }),
  errors: Type.Optional(Type.Array(ErrorDetail)),
  retryAfter: Type.Optional(Type.Integer({ minimum: 0 })),
})
export type ProblemDetails = Static<typeof ProblemDetails>

export const problemMediaType = 'application/problem+json'

/**
 * Set on the 503 a service answers while its maintenance switch is on (Consul KV): the instance is well, it was
 * told not to serve, so a proxy counts no failure against it and sends traffic again the moment it is off.
 */
export const maintenanceHeader = 'x-meridian-maintenance'

/**
 * Set on the 503 a service answers because a service it calls is unavailable (no healthy instance, refused, timed
 * out), naming that service: the instance that answers is well, so a proxy counts no failure against it or its
 * circuit. The caller's own client of the dependency is where that dependency's failures are counted.
 */
export const unavailableDependencyHeader = 'x-meridian-unavailable-dependency'

/**
 * Set on the 503 a service answers when it sheds load on purpose (the order service's admission of new orders,
 * ORDER_ADMISSION_TARGET_MS): the instance is well and refused so that what it took keeps its time, so a proxy counts
 * no failure against it or its circuit — which would otherwise refuse everything, the orders it could take included.
 */
export const loadShedHeader = 'x-meridian-load-shed'

export interface AppErrorOptions {
  message?: string
  details?: ErrorDetail[]
  /** seconds; sent as Retry-After and as retryAfter in the envelope */
  retryAfter?: number
  /** extra response headers, e.g. Allow for 405 */
  headers?: Record<string, string>
  cause?: unknown
}

/**
 * An operational error: expected, safe to show, answered with its own status and code.
 * Anything thrown that is not an AppError (or a framework error the chassis maps) is a programmer error: 500.
 */
export class AppError extends Error {
  readonly statusCode: number
  readonly code: ErrorCode | (string & {})
  readonly details?: ErrorDetail[]
  readonly retryAfter?: number
  readonly headers?: Record<string, string>

  constructor(statusCode: number, code: ErrorCode | (string & {}), options: AppErrorOptions = {}) {
    super(options.message ?? defaultErrorMessage[code as ErrorCode] ?? code, { cause: options.cause })
    this.name = 'AppError'
    this.statusCode = statusCode
    this.code = code
    if (options.details) this.details = options.details
    if (options.retryAfter !== undefined) this.retryAfter = options.retryAfter
    if (options.headers) this.headers = options.headers
  }

  static badRequest(message?: string, details?: ErrorDetail[]): AppError {
    return new AppError(400, ErrorCode.BAD_REQUEST, {
      ...(message ? { message } : {}),
      ...(details ? { details } : {}),
    })
  }
  static unauthorized(message = 'Authentication required'): AppError {
    return new AppError(401, ErrorCode.UNAUTHORIZED, { message })
  }
  static forbidden(message = 'Insufficient permissions'): AppError {
    return new AppError(403, ErrorCode.FORBIDDEN, { message })
  }
  /** The credential lacks `scope` (an API key's or an OAuth token's scopes): 403 naming it. */
  static insufficientScope(scope: string): AppError {
    return new AppError(403, ErrorCode.INSUFFICIENT_SCOPE, {
      message: `Insufficient scope: this operation needs ${scope}`,
    })
  }
  static notFound(message = 'Resource not found'): AppError {
    return new AppError(404, ErrorCode.NOT_FOUND, { message })
  }
  static conflict(message = 'Resource already exists', details?: ErrorDetail[]): AppError {
    return new AppError(409, ErrorCode.CONFLICT, { message, ...(details ? { details } : {}) })
  }
  static preconditionFailed(message = 'Precondition failed'): AppError {
    return new AppError(412, ErrorCode.PRECONDITION_FAILED, { message })
  }
  static validation(details: ErrorDetail[], message = 'Validation failed'): AppError {
    return new AppError(422, ErrorCode.VALIDATION_ERROR, { message, details })
  }
  static rateLimited(retryAfter = 60, message = 'Rate limit exceeded'): AppError {
    return new AppError(429, ErrorCode.RATE_LIMITED, { message, retryAfter })
  }
  static serviceUnavailable(message = 'Service temporarily unavailable', retryAfter?: number): AppError {
    return new AppError(503, ErrorCode.SERVICE_UNAVAILABLE, {
      message,
      ...(retryAfter !== undefined ? { retryAfter } : {}),
    })
  }
}

export const isAppError = (error: unknown): error is AppError => error instanceof AppError
