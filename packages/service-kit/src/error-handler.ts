// One error handler for the spec's Errors table: every failure leaves in the error envelope (or RFC 7807 on request).
import {
  AppError,
  defaultErrorMessage,
  type ErrorCode,
  type ErrorDetail,
  type ErrorEnvelope,
  type ProblemDetails,
  problemMediaType,
  textPattern,
  visibleTextPattern,
} from '@meridian/contracts'
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify'

type ValidationIssue = NonNullable<FastifyError['validation']>[number]

/** Fields whose received value is never echoed back (nor logged through the envelope). */
const secretField = /pass(word)?|secret|token|card|cvv|key/i

const codeOfStatus: Record<number, ErrorCode> = {
  400: 'BAD_REQUEST',
  401: 'UNAUTHORIZED',
  403: 'FORBIDDEN',
  404: 'NOT_FOUND',
  405: 'METHOD_NOT_ALLOWED',
  409: 'CONFLICT',
  412: 'PRECONDITION_FAILED',
  413: 'PAYLOAD_TOO_LARGE',
  415: 'UNSUPPORTED_MEDIA_TYPE',
  422: 'VALIDATION_ERROR',
  429: 'RATE_LIMITED',
  501: 'NOT_IMPLEMENTED',
  502: 'BAD_GATEWAY',
  503: 'SERVICE_UNAVAILABLE',
  504: 'GATEWAY_TIMEOUT',
}

/** A JSON pointer's segments, unescaped (`~1` is `/`, `~0` is `~`). */
const pointerSegments = (pointer: string): string[] =>
  pointer === ''
    ? []
    : pointer
        .split('/')
        .slice(1)
        .map((segment) => segment.replaceAll('~1', '/').replaceAll('~0', '~'))

function valueAt(root: unknown, segments: string[]): unknown {
  let current = root
  for (const segment of segments) {
    if (current === null || typeof current !== 'object' || !Object.hasOwn(current, segment)) return undefined
    current = (current as Record<string, unknown>)[segment]
  }
  return current
}

/** The longest `received` echoed back: enough to recognise the value, never a whole hostile input. */
const maxReceivedLength = 200

/** The most properties and items `holdsSecret` looks at: a value with more is not echoed at all. */
const maxInspectedParts = 200

/**
 * Whether an object or array holds, at any depth, a property named as a secret's (a card, a token, a password), or
 * is too big to tell: such a value is never echoed, whatever its own field is called (a union's `source` that failed
 * as a whole holds `card` or `token`).
 */
function holdsSecret(value: unknown): boolean {
  if (value === null || typeof value !== 'object') return false
  const pending: object[] = [value]
  let inspected = 0
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    for (const [name, inner] of Object.entries(next)) {
      if (++inspected > maxInspectedParts) return true
      if (!Array.isArray(next) && secretField.test(name)) return true
      if (inner !== null && typeof inner === 'object') pending.push(inner)
    }
  }
  return false
}

/** The offending value as text, bounded; undefined when it cannot be rendered (the error path never throws). */
function receivedText(value: unknown): string | undefined {
  let text: string | undefined
  try {
    // a number as written: Infinity (a coerced 1e400) would otherwise read as JSON's null
    text =
      typeof value === 'string' ? value : typeof value === 'number' ? String(value) : JSON.stringify(value)
  } catch {
    return undefined
  }
  if (text === undefined) return undefined
  return text.length > maxReceivedLength ? `${text.slice(0, maxReceivedLength)}…` : text
}

/** What a failed keyword means, where Ajv's own words would show the schema's internals. */
function issueMessage(issue: ValidationIssue, params: Record<string, unknown>): string {
  if (params.additionalProperty !== undefined) return 'is not allowed'
  if (issue.keyword === 'pattern' && params.pattern === textPattern) return 'must not contain NUL characters'
  if (issue.keyword === 'pattern' && params.pattern === visibleTextPattern) {
    return 'must contain a character other than white space, and no NUL characters'
  }
  return issue.message ?? 'is invalid'
}

/** The part of a request a schema validated (Fastify's validationContext). */
export type ValidationContext = 'body' | 'querystring' | 'params' | 'headers'

/** How a detail names the part itself, when a problem is not one field's: `query` rather than Fastify's word. */
const contextField: Record<ValidationContext, string> = {
  body: 'body',
  querystring: 'query',
  params: 'path',
  headers: 'headers',
}

/**
 * The most problems a refusal lists one by one; the rest are counted in one last detail. A refusal stays small
 * however many problems an input has (150,000 junk items once made a 9.9 MB 422).
 */
export const maxValidationDetails = 20

/** The last detail of a refusal with more problems than it lists. */
export const moreProblems = (field: string, count: number): ErrorDetail => ({
  field,
  message: `and ${count} more problem${count === 1 ? '' : 's'}`,
})

/**
 * Ajv's issues as the envelope's details (the first {@link maxValidationDetails}, then a count of the others): one per field, with the offending value unless it is a secret. `field` is
 * the body field's path (`items.0.quantity`), or the query parameter, path parameter or header by its name; a
 * problem of the part as a whole (no field, or a field without a name) is named by the part: body, query, path or
 * headers.
 */
export function validationDetails(
  issues: ValidationIssue[],
  input: unknown,
  context: ValidationContext = 'body',
): ErrorDetail[] {
  const details = issues.slice(0, maxValidationDetails).map((issue) => {
    const params = issue.params as Record<string, unknown>
    const child = (params.missingProperty ?? params.additionalProperty) as string | undefined
    const segments = [...pointerSegments(issue.instancePath), ...(child === undefined ? [] : [child])]
    const unnamed = segments.length === 0 || segments.includes('')
    const field = unnamed ? contextField[context] : segments.join('.')
    const message =
      child === ''
        ? `${context === 'body' ? 'a property' : 'a parameter'} with an empty name is not allowed`
        : issueMessage(issue, params)
    const detail: ErrorDetail = { field, message }
    // the part as a whole is never echoed: it may hold a secret under another name
    const value = segments.length === 0 ? undefined : valueAt(input, segments)
    const received =
      value === undefined || secretField.test(field) || holdsSecret(value) ? undefined : receivedText(value)
    if (received !== undefined) detail.received = received
    return detail
  })
  const more = issues.length - details.length
  if (more > 0) details.push(moreProblems(contextField[context], more))
  return details
}

/** Any thrown value as an AppError; `operational` false marks a programmer error (logged at error, shown generic). */
export function toAppError(
  error: FastifyError | AppError | Error,
  request: FastifyRequest,
): {
  appError: AppError
  operational: boolean
} {
  // an AppError is expected by definition; only a 500 (e.g. an unrecognised database error) is logged as a fault
  if (error instanceof AppError) return { appError: error, operational: error.statusCode !== 500 }
  const fastifyError = error as FastifyError
  if (fastifyError.validation) {
    const context = (fastifyError.validationContext ?? 'body') as ValidationContext
    const input =
      context === 'body'
        ? request.body
        : context === 'querystring'
          ? request.query
          : context === 'params'
            ? request.params
            : request.headers
    return {
      appError: AppError.validation(validationDetails(fastifyError.validation, input, context)),
      operational: true,
    }
  }
  switch (fastifyError.code) {
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return { appError: AppError.badRequest('Malformed JSON in request body'), operational: true }
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return {
        appError: AppError.badRequest("Body cannot be empty when content-type is 'application/json'"),
        operational: true,
      }
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return {
        appError: new AppError(413, 'PAYLOAD_TOO_LARGE', { message: 'Request body is larger than 1 MB' }),
        operational: true,
      }
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      if (fastifyError.statusCode === 415) {
        return { appError: new AppError(415, 'UNSUPPORTED_MEDIA_TYPE'), operational: true }
      }
  }
  // JSON.parse failures and other client errors a plugin raised with a 4xx status
  const status = fastifyError.statusCode
  if (status && status >= 400 && status < 500) {
    const code = codeOfStatus[status] ?? 'BAD_REQUEST'
    const message =
      error instanceof SyntaxError
        ? 'Malformed JSON in request body'
        : (defaultErrorMessage[code] ?? error.message)
    return { appError: new AppError(status, code, { message }), operational: true }
  }
  return { appError: new AppError(500, 'INTERNAL_ERROR', { cause: error }), operational: false }
}

export function wantsProblemDetails(request: FastifyRequest): boolean {
  const accept = request.headers.accept ?? ''
  return accept.includes(problemMediaType)
}

export interface ErrorBodyOptions {
  /** include the stack of an unexpected failure, 500 (never in production) */
  exposeStack: boolean
}

export function sendError(
  reply: FastifyReply,
  request: FastifyRequest,
  appError: AppError,
  original: Error,
  options: ErrorBodyOptions,
): FastifyReply {
  const timestamp = new Date().toISOString()
  const requestId = String(request.id)
  reply.code(appError.statusCode)
  // error bodies bypass the route's response schemas: those document the envelope, but a problem+json body
  // would be cut down to the envelope's fields by a schema-based serializer
  reply.serializer((payload: unknown) => JSON.stringify(payload))
  for (const [name, value] of Object.entries(appError.headers ?? {})) reply.header(name, value)
  if (appError.retryAfter !== undefined) reply.header('retry-after', String(appError.retryAfter))
  // only an unexpected failure (500) has a stack worth showing; 501, 502, 503 and 504 are answers, not faults
  const stack = options.exposeStack && appError.statusCode === 500 ? (original.stack ?? undefined) : undefined

  if (wantsProblemDetails(request)) {
    const problem: ProblemDetails = {
      type: `/problems/${appError.code.toLowerCase().replaceAll('_', '-')}`,
      title: defaultErrorMessage[appError.code as ErrorCode] ?? appError.code,
      status: appError.statusCode,
      detail: appError.message,
      instance: request.url,
      code: appError.code,
      requestId,
      timestamp,
      ...(appError.details ? { errors: appError.details } : {}),
      ...(appError.retryAfter !== undefined ? { retryAfter: appError.retryAfter } : {}),
    }
    return reply.type(problemMediaType).send(problem)
  }
  const body: ErrorEnvelope = {
    success: false,
    error: {
      code: appError.code,
      message: appError.message,
      ...(appError.details ? { details: appError.details } : {}),
      requestId,
      timestamp,
      ...(appError.retryAfter !== undefined ? { retryAfter: appError.retryAfter } : {}),
      ...(stack ? { stack } : {}),
    },
  }
  return reply.type('application/json; charset=utf-8').send(body)
}
