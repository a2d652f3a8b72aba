// GraphQL errors in Meridian's terms: every error carries `extensions.code` (the spec's codes), the request id, and
// the details of a validation failure; an unexpected failure is logged and shown generically.
import { AppError, ErrorCode, type ErrorDetail } from '@meridian/contracts'
import { databaseErrorMapper } from '@meridian/db'
import { toAppError } from '@meridian/service-kit'
import type { FastifyBaseLogger, FastifyError, FastifyReply, FastifyRequest } from 'fastify'
import { GraphQLError, type GraphQLFormattedError } from 'graphql'

/** `extensions` of every error Meridian's GraphQL answers. */
export interface MeridianErrorExtensions {
  code: string
  requestId: string
  details?: ErrorDetail[]
  /** seconds (RATE_LIMITED, SERVICE_UNAVAILABLE) */
  retryAfter?: number
  [key: string]: unknown
}

/** What an error is, seen from the client: its code, message and HTTP status. */
interface Classified {
  appError: AppError
  /** false for a programmer error: logged at error level, its message never shown */
  operational: boolean
}

const isSyntaxError = (error: GraphQLError) => error.message.startsWith('Syntax Error')

/**
 * An error of GraphQL's own (the document or its variables refused: no original error) is VALIDATION_ERROR (a syntax
 * error BAD_REQUEST); an AppError is itself; a database error is mapped as for a route; a framework error of the HTTP request (bad JSON, 415, 413) is mapped as
 * the kit maps it; anything else is INTERNAL_ERROR.
 */
function classify(error: GraphQLError, request: FastifyRequest | undefined): Classified {
  const original = error.originalError
  if (original instanceof AppError) return { appError: original, operational: original.statusCode !== 500 }
  if (original === undefined || original instanceof GraphQLError) {
    const appError = isSyntaxError(error)
      ? AppError.badRequest(error.message)
      : new AppError(400, ErrorCode.VALIDATION_ERROR, { message: error.message })
    return { appError, operational: true }
  }
  // the database's own errors as every route maps them: 503 while unreachable, 409/422 for a refused value, DB_ERROR
  const fromDatabase = databaseErrorMapper(original)
  if (fromDatabase) return { appError: fromDatabase, operational: fromDatabase.statusCode < 500 }
  if (request && (original as { statusCode?: unknown }).statusCode !== undefined) {
    const { appError, operational } = toAppError(original, request)
    // mercurius's own refusals (e.g. a mutation over GET, an unknown persisted query) are the client's
    if (operational || appError.statusCode < 500) return { appError, operational: true }
  }
  return { appError: new AppError(500, ErrorCode.INTERNAL_ERROR, { cause: original }), operational: false }
}

/** The error as the client receives it, under GraphQL's own shape (message, locations, path, extensions). */
export function meridianGraphQLError(
  error: GraphQLError,
  appError: AppError,
  requestId: string,
): GraphQLError {
  const extensions: MeridianErrorExtensions = {
    code: appError.code,
    requestId,
    ...(appError.details && appError.details.length > 0 ? { details: appError.details } : {}),
    ...(appError.retryAfter !== undefined ? { retryAfter: appError.retryAfter } : {}),
  }
  return new GraphQLError(appError.message, {
    ...(error.nodes ? { nodes: error.nodes } : {}),
    ...(error.source ? { source: error.source } : {}),
    ...(error.positions ? { positions: error.positions } : {}),
    ...(error.path ? { path: error.path } : {}),
    originalError: appError,
    extensions,
  })
}

/** Any thrown value as a Meridian GraphQL error (for what mercurius sends without the formatter: a subscription's start). */
export function toMeridianGraphQLError(
  thrown: unknown,
  requestId: string,
  log: FastifyBaseLogger,
  request?: FastifyRequest,
): GraphQLError {
  const error =
    thrown instanceof GraphQLError
      ? thrown
      : new GraphQLError(thrown instanceof Error ? thrown.message : String(thrown), {
          originalError: thrown instanceof Error ? thrown : new Error(String(thrown)),
        })
  if ((error.extensions as Partial<MeridianErrorExtensions>).requestId === requestId) return error
  const { appError, operational } = classify(error, request)
  logError(log, error, appError, operational)
  return meridianGraphQLError(error, appError, requestId)
}

function logError(
  log: FastifyBaseLogger,
  error: GraphQLError,
  appError: AppError,
  operational: boolean,
): void {
  if (!operational) {
    log.error({ err: error.originalError ?? error, path: error.path }, 'graphql operation failed')
  } else if (appError.statusCode >= 500) {
    log.warn({ code: appError.code, path: error.path }, appError.message)
  } else {
    log.info({ code: appError.code, path: error.path }, appError.message)
  }
}

/** The part of mercurius's context the formatter reads. */
export interface ErrorFormatterContext {
  reply?: FastifyReply
  requestId?: string
  app: { log: FastifyBaseLogger }
}

interface ExecutionWithErrors {
  data?: unknown
  errors: readonly GraphQLError[]
  statusCode?: number
}

/**
 * mercurius's refusals of a document (MER_ERR_GQL_VALIDATION, 400; MER_ERR_METHOD_NOT_ALLOWED, 405 for a mutation
 * by GET) hold its problems in `errors`: each is one error of the answer, with the refusal's status.
 */
function documentProblems(error: GraphQLError, request: FastifyRequest | undefined) {
  const refusal = error.originalError as (Error & { errors?: unknown; statusCode?: number }) | undefined
  if (!refusal || !Array.isArray(refusal.errors)) return undefined
  return (refusal.errors as Error[]).map((problem) => {
    const located = problem instanceof GraphQLError ? problem : new GraphQLError(problem.message)
    // the request itself failed its schema (no query): answered as a route's input is, 422 with details
    if ((problem as FastifyError).validation && request) {
      return { error: located, ...toAppError(problem as FastifyError, request) }
    }
    if (refusal.statusCode === undefined || refusal.statusCode === 400 || !request) {
      return { error: located, ...classify(located, request) }
    }
    const { appError } = toAppError(refusal, request)
    const answer = new AppError(appError.statusCode, appError.code, { message: problem.message })
    return { error: located, appError: answer, operational: true }
  })
}

/**
 * mercurius's errorFormatter: each error with its code and the request id; the HTTP status is 200 when there is
 * data (field errors beside it), else the status of the error when there is one error (401, 403, 404, 422, 429 …),
 * 400 for a refused document.
 */
export function formatGraphQLErrors(
  execution: ExecutionWithErrors,
  context: ErrorFormatterContext,
): { statusCode: number; response: { data: unknown; errors: GraphQLFormattedError[] } } {
  const request = context.reply?.request
  const requestId = context.requestId ?? (request ? String(request.id) : 'unknown')
  const log = request?.log ?? context.app.log
  const classified = execution.errors.flatMap(
    (error) => documentProblems(error, request) ?? [{ error, ...classify(error, request) }],
  )
  for (const { error, appError, operational } of classified) logError(log, error, appError, operational)

  let statusCode = 200
  if (execution.data === undefined || execution.data === null) {
    const statuses = new Set(classified.map(({ appError }) => appError.statusCode))
    statusCode = statuses.size === 1 ? [...statuses][0]! : 400
  }
  const retryAfter = classified.find(({ appError }) => appError.retryAfter !== undefined)?.appError.retryAfter
  if (retryAfter !== undefined) context.reply?.header('retry-after', String(retryAfter))

  return {
    statusCode,
    response: {
      data: execution.data ?? null,
      errors: classified.map(({ error, appError }) =>
        meridianGraphQLError(error, appError, requestId).toJSON(),
      ),
    },
  }
}
