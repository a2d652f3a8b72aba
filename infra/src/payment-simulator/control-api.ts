// The simulator's own endpoints, beside the Stripe subset: what tests, the benchmarks and the fault campaign ask of
// the stand-in itself (JSON, no API key) — its health, its counters, an order's summary, its faults, and reset. Errors
// are {error: {code, message}}. The cards, charges and refunds are the Stripe subset's (stripe-api.ts). See README.md.
import type { IncomingMessage } from 'node:http'
import type { Core, RequestLog, SimulatorFaults } from './core.ts'
import { ApiError, isObject, redact } from './errors.ts'
import { BodyTooLarge, readBody } from './http.ts'
import type { StoredResponse } from './idempotency.ts'
import { isRefundBehavior, refundBehaviors } from './options.ts'
import { orderSummary } from './state.ts'

const maxBodyBytes = 64 * 1024

const invalid = (message: string) => new ApiError(400, 'invalid_request', message)

async function readJson(req: IncomingMessage): Promise<Record<string, unknown>> {
  let text: string
  try {
    text = await readBody(req, { limit: maxBodyBytes })
  } catch (error) {
    if (error instanceof BodyTooLarge)
      throw new ApiError(413, 'body_too_large', `the body is larger than ${maxBodyBytes} bytes`)
    throw error
  }
  let value: unknown
  try {
    value = JSON.parse(text === '' ? '{}' : text)
  } catch {
    throw invalid('the body is not JSON')
  }
  if (!isObject(value)) throw invalid('the body must be a JSON object')
  return value
}

/** The body of POST /v1/faults, checked: only known faults, each one of its settings. */
function parseFaults(body: Record<string, unknown>): Partial<SimulatorFaults> {
  const unknown = Object.keys(body).filter((key) => key !== 'refunds')
  if (unknown.length > 0) throw invalid(`unknown fault: ${redact(unknown.join(', ').slice(0, 200))}`)
  const { refunds } = body
  if (refunds === undefined) return {}
  if (!isRefundBehavior(refunds)) throw invalid(`refunds must be one of ${refundBehaviors.join(', ')}`)
  return { refunds }
}

const summaryPath = /^\/v1\/orders\/([^/]+)\/summary$/

/** The paths of the simulator's own endpoints: requests to them are its, whatever their headers. */
export const isControlPath = (path: string): boolean =>
  /^\/(health|v1\/(stats|reset|faults))$/.test(path) || summaryPath.test(path)

/** One request to the simulator's own endpoints: its answer, or a thrown ApiError (or AbortError when dropped). */
export async function controlRoute(
  core: Core,
  req: IncomingMessage,
  path: string,
  log: RequestLog,
): Promise<StoredResponse> {
  const method = req.method ?? 'GET'
  const ok = (body: unknown): StoredResponse => ({ status: 200, body, headers: {} })
  const only = (allowed: string) => {
    if (method !== allowed)
      throw new ApiError(405, 'method_not_allowed', `${method} is not allowed on ${redact(path)}`)
  }
  switch (path) {
    case '/health':
      return ok({ status: 'ok' })
    case '/v1/stats':
      only('GET')
      return ok({ ...core.state().stats })
    case '/v1/reset':
      only('POST')
      core.reset()
      return ok({ reset: true })
    case '/v1/faults':
      if (method === 'GET') return ok(core.faults())
      only('POST')
      return ok(core.setFaults(parseFaults(await readJson(req))))
  }
  const summary = summaryPath.exec(path)
  if (!summary) throw new ApiError(404, 'not_found', `No route ${method} ${redact(path)}`)
  only('GET')
  const orderId = decodeURIComponent(summary[1]!)
  log.orderId = redact(orderId)
  const current = core.state()
  await core.latency(current.inFlight.signal)
  return ok(orderSummary(current, orderId))
}
