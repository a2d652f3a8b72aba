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

/** The URL with the value of every API-key query parameter replaced by [Redacted]; the rest is left as sent. */
export function maskApiKeysInUrl(url: string): string {
  const queryStart = url.indexOf('?')
  if (queryStart === -1) return url
  const query = url
    .slice(queryStart + 1)
    .split('&')
    .map((pair) => {
      const separator = pair.indexOf('=')
      const rawName = separator === -1 ? pair : pair.slice(0, separator)
      return apiKeyQueryParameters.has(queryParameterName(rawName)) ? `${rawName}=[Redacted]` : pair
    })
    .join('&')
  return `${url.slice(0, queryStart)}?${query}`
}

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
          url: maskApiKeysInUrl(request.url),
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
