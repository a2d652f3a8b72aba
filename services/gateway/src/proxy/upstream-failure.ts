// How a failed attempt on an upstream instance is classified: may it be retried elsewhere, and what the client gets.
import type { IncomingHttpHeaders } from 'node:http'
import { AppError, loadShedHeader, maintenanceHeader, unavailableDependencyHeader } from '@meridian/contracts'
import type { ServiceInstance } from '@meridian/service-kit'
import type { UpstreamService } from '../upstreams/upstream-services.ts'

/** Failures before any byte of a response: the request may not have been processed, the instance is suspect. */
const connectionFailureCodes = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ECONNABORTED',
  'ETIMEDOUT',
  'UND_ERR_SOCKET',
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_CLOSED',
])

const timeoutCodes = new Set(['UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT'])

/** Methods that may be sent twice (RFC 9110 §9.2.2); POST and PATCH never are. */
export const idempotentMethods: ReadonlySet<string> = new Set(['GET', 'HEAD', 'OPTIONS', 'PUT', 'DELETE'])

/** Upstream answers that count against the instance (and the service's circuit), though they are relayed as they are. */
export const failureStatuses: ReadonlySet<number> = new Set([502, 503, 504])

/**
 * The instance's answer as the ejection and the circuit count it: 502-504 against it, unless it says it is in
 * maintenance (a service in maintenance is well and was told not to serve: no failure, and back the moment it is off)
 * or that a service it calls is unavailable (it is well and said so at once; counting it would keep clients from it
 * for the ejection's and the circuit's time after that dependency is back), or that it sheds load on purpose (it is
 * well and refused what it could not take in time: counting it would refuse what it can take too).
 */
export function recordUpstreamAnswer(
  service: UpstreamService,
  instance: ServiceInstance,
  statusCode: number,
  headers: IncomingHttpHeaders,
): void {
  const wellButRefusing =
    headers[maintenanceHeader] !== undefined ||
    headers[unavailableDependencyHeader] !== undefined ||
    headers[loadShedHeader] !== undefined
  if (failureStatuses.has(statusCode) && !wellButRefusing) {
    service.attemptFailed(instance, `status ${statusCode}`)
    service.requestFailed()
  } else {
    service.attemptSucceeded(instance)
    service.requestSucceeded()
  }
}

export type AttemptFailure = { kind: 'connection' | 'timeout' | 'other'; code: string }

/** The code that tells what happened is on the error or on its cause (undici wraps some socket errors). */
export function classifyAttemptFailure(error: unknown): AttemptFailure {
  const codes: string[] = []
  let current: unknown = error
  for (let depth = 0; depth < 4 && current instanceof Error; depth += 1) {
    const code = (current as { code?: unknown }).code
    if (typeof code === 'string') codes.push(code)
    current = (current as { cause?: unknown }).cause
  }
  const timeout = codes.find((code) => timeoutCodes.has(code))
  if (timeout) return { kind: 'timeout', code: timeout }
  const connection = codes.find((code) => connectionFailureCodes.has(code))
  if (connection) return { kind: 'connection', code: connection }
  return { kind: 'other', code: codes.at(-1) ?? 'UNKNOWN' }
}

export function gatewayTimeout(timeoutMs: number): AppError {
  return new AppError(504, 'GATEWAY_TIMEOUT', {
    message: `The upstream service did not answer within ${timeoutMs} ms`,
  })
}

export function upstreamUnavailable(retryAfterSeconds: number): AppError {
  return AppError.serviceUnavailable('Service temporarily unavailable', retryAfterSeconds)
}

export function badGateway(): AppError {
  return new AppError(502, 'BAD_GATEWAY', { message: 'The upstream service gave an invalid answer' })
}
