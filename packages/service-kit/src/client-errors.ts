// Failures Fastify meets before any route: what Node's HTTP parser refuses (an unknown method, a malformed request
// line, oversized headers, a request that never arrived in full) and URLs the router cannot decode. Both leave in the
// error envelope with a request id, like every other error.
import { randomUUID } from 'node:crypto'
import type { Socket } from 'node:net'
import { AppError, type ErrorEnvelope } from '@meridian/contracts'
import type { FastifyBaseLogger, FastifyError, FastifyReply, FastifyRequest } from 'fastify'
import { sendError } from './error-handler.ts'
import { requestIdHeader } from './request-id.ts'

const reasonPhrase: Record<number, string> = {
  400: 'Bad Request',
  408: 'Request Timeout',
  431: 'Request Header Fields Too Large',
  501: 'Not Implemented',
}

/** The envelope's status and code for a parser error (llhttp's codes, and Node's request timeout). */
function clientErrorOf(code: string | undefined): AppError {
  switch (code) {
    case 'HPE_INVALID_METHOD':
      return new AppError(501, 'NOT_IMPLEMENTED', { message: 'The request method is not implemented' })
    case 'HPE_HEADER_OVERFLOW':
      return new AppError(431, 'HEADERS_TOO_LARGE')
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return new AppError(408, 'REQUEST_TIMEOUT')
    default:
      return AppError.badRequest('Malformed HTTP request')
  }
}

/** Fastify's `clientErrorHandler`: writes the envelope straight to the socket (there is no request yet) and closes it. */
export function clientErrorHandler(logger: FastifyBaseLogger) {
  return (error: NodeJS.ErrnoException, socket: Socket): void => {
    // a reset connection has no one left to answer
    if (error.code === 'ECONNRESET' || socket.destroyed) return
    const appError = clientErrorOf(error.code)
    const requestId = randomUUID()
    logger.warn(
      { requestId, statusCode: appError.statusCode, code: appError.code, parserCode: error.code },
      appError.message,
    )
    const envelope: ErrorEnvelope = {
      success: false,
      error: {
        code: appError.code,
        message: appError.message,
        requestId,
        timestamp: new Date().toISOString(),
      },
    }
    const body = JSON.stringify(envelope)
    if (socket.writable) {
      socket.write(
        `HTTP/1.1 ${appError.statusCode} ${reasonPhrase[appError.statusCode] ?? 'Error'}\r\n` +
          `Content-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
          `${requestIdHeader}: ${requestId}\r\nConnection: close\r\n\r\n${body}`,
      )
    }
    socket.destroy()
  }
}

/**
 * Fastify's `frameworkErrors`: a path whose percent-encoding does not decode (FST_ERR_BAD_URL), a parameter over
 * the router's length limit (FST_ERR_MAX_PARAM_LENGTH), or a failed route constraint. No hook has run, so the
 * request id header is set here.
 */
export function frameworkErrorHandler(
  error: FastifyError,
  request: FastifyRequest,
  reply: FastifyReply,
): void {
  const appError =
    error.code === 'FST_ERR_BAD_URL'
      ? AppError.badRequest('Malformed URL: invalid percent-encoding in the path')
      : error.code === 'FST_ERR_MAX_PARAM_LENGTH'
        ? new AppError(414, 'URI_TOO_LONG')
        : new AppError(500, 'INTERNAL_ERROR', { cause: error })
  if (appError.statusCode >= 500) request.log.error({ err: error }, 'router error')
  else request.log.warn({ statusCode: appError.statusCode, code: appError.code }, appError.message)
  reply.header(requestIdHeader, request.id)
  sendError(reply, request, appError, error, { exposeStack: false })
}
