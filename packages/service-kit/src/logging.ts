// pino options shared by every service: request-id correlation and redaction of credentials and personal data.
import type { FastifyServerOptions } from 'fastify'
import type { LoggerOptions } from 'pino'

/**
 * Paths pino replaces with [Redacted]: credentials in headers, passwords, tokens and card numbers anywhere
 * in a logged object one or two levels down (bodies are never logged whole).
 */
export const redactPaths = [
  'req.headers.authorization',
  'req.headers.cookie',
  'req.headers["x-api-key"]',
  'req.headers["proxy-authorization"]',
  'res.headers["set-cookie"]',
  'headers.authorization',
  'headers.cookie',
  'headers["set-cookie"]',
  'headers["x-api-key"]',
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

interface SerializableRequest {
  id: string
  method: string
  url: string
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
    redact: { paths: redactPaths, censor: '[Redacted]' },
    serializers: {
      req(request: SerializableRequest) {
        return {
          requestId: request.id,
          method: request.method,
          url: request.url,
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
