// The payment provider simulator: one node:http server speaking the subset of Stripe's API Meridian's payment service
// uses (stripe-api.ts, through the official SDK), with its 3-D Secure page (three-d-secure.ts) and signed webhooks
// (webhooks.ts), beside the simulator's own endpoints (control-api.ts: health, stats, an order's summary, faults,
// reset). State lives in memory only (state.ts). This file routes each request, writes the log line, and starts and
// stops the server. See README.md.
import { once } from 'node:events'
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { controlRoute, isControlPath } from './control-api.ts'
import { type Core, createCore, type RequestLog, type SimulatorFaults } from './core.ts'
import { ApiError, isAbort, isObject, redact } from './errors.ts'
import { sendJson } from './http.ts'
import { defaultHost, defaultPort, type PaymentSimulatorOptions, validateOptions } from './options.ts'
import type { SimulatorStats } from './state.ts'
import { corsHeaders, newRequestId, stripeAnswer, stripeHeaders } from './stripe-api.ts'
import type { StripeContext } from './stripe-call.ts'
import { isThreeDSecurePath, threeDSecure } from './three-d-secure.ts'
import { createWebhooks } from './webhooks.ts'

export type { SimulatorFaults } from './core.ts'
export type { OrderSummary, SimulatorStats } from './state.ts'

export interface PaymentSimulator {
  url: string
  port: number
  close(): Promise<void>
  stats(): SimulatorStats
  /** the faults in force */
  faults(): SimulatorFaults
  /** changes the faults in force (as POST /v1/faults does); answers them */
  setFaults(changes: Partial<SimulatorFaults>): SimulatorFaults
  /**
   * forgets every payment method, intent, charge, refund, dispute, event, runtime webhook endpoint and idempotency
   * key, starts the seeded sequences again, drops calls in flight and webhook deliveries
   */
  reset(): void
}

/** The error's code of an answer, for the log line. */
function errorCode(body: unknown): string | undefined {
  const error = isObject(body) && isObject(body.error) ? body.error : undefined
  if (typeof error?.code === 'string') return error.code
  return typeof error?.type === 'string' ? error.type : undefined
}

/** The simulator's own endpoints (health, stats, summaries, faults, reset): errors in their own shape. */
function answerControl(
  core: Core,
  req: IncomingMessage,
  res: ServerResponse,
  path: string,
  log: RequestLog,
): void {
  controlRoute(core, req, path, log).then(
    (response) => sendJson(res, response),
    (error: unknown) => {
      if (error instanceof ApiError) {
        log.code = error.code
        sendJson(res, error.outcome(false))
      } else if (isAbort(error)) res.destroy()
      else {
        log.code = 'internal_error'
        sendJson(res, {
          status: 500,
          body: { error: { code: 'internal_error', message: String(error) } },
          headers: {},
        })
      }
    },
  )
}

/** The Stripe subset: every answer with Request-Id and Stripe-Version; CORS where a browser calls it. */
function answerStripe(
  context: StripeContext,
  req: IncomingMessage,
  res: ServerResponse,
  url: URL,
  log: RequestLog,
) {
  const requestId = newRequestId()
  log.requestId = requestId
  const base = stripeHeaders(req, requestId)
  const cors = corsHeaders(url.pathname, req.method === 'OPTIONS') ?? {}
  if (req.method === 'OPTIONS' && Object.keys(cors).length > 0) {
    res.writeHead(204, { ...base, ...cors })
    res.end()
    return
  }
  stripeAnswer(context, req, url, requestId, log).then(
    (response) => {
      const code = errorCode(response.body)
      if (code !== undefined) log.code = code
      sendJson(res, { ...response, headers: { ...response.headers, ...base, ...cors } })
    },
    (error: unknown) => {
      if (isAbort(error)) return res.destroy()
      log.code = 'internal_error'
      sendJson(res, {
        status: 500,
        body: {
          error: { type: 'api_error', message: 'An unknown error occurred while processing your request.' },
        },
        headers: base,
      })
    },
  )
}

function handle(context: StripeContext, req: IncomingMessage, res: ServerResponse): void {
  const started = performance.now()
  const url = new URL(req.url ?? '/', 'http://simulator')
  const path = url.pathname
  const log: RequestLog = {}
  const { core } = context
  core.state().stats.requests++
  res.on('close', () => {
    if (!core.settings.log) return
    const line = {
      time: new Date().toISOString(),
      method: req.method,
      path: redact(path),
      status: res.writableFinished ? res.statusCode : 0,
      durationMs: Math.round(performance.now() - started),
      ...(res.writableFinished ? {} : { aborted: true }),
      ...log,
    }
    core.settings.log(JSON.stringify(line))
  })
  if (isThreeDSecurePath(path))
    threeDSecure(context, req, res, path, log).catch((error: unknown) => {
      log.code = 'internal_error'
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'text/plain; charset=utf-8' })
      res.end(isAbort(error) ? 'dropped' : 'internal error')
    })
  else if (isControlPath(path)) answerControl(core, req, res, path, log)
  else answerStripe(context, req, res, url, log)
}

export async function createPaymentSimulator(
  options: PaymentSimulatorOptions = {},
): Promise<PaymentSimulator> {
  validateOptions(options)
  const host = options.host ?? defaultHost
  const core = createCore(options)
  let url = ''
  const publicUrl = options.publicUrl === undefined ? undefined : withoutTrailingSlashes(options.publicUrl)
  const context: StripeContext = { core, webhooks: createWebhooks(core), baseUrl: () => publicUrl ?? url }
  const server = createServer((req, res) => handle(context, req, res))

  server.listen(options.port ?? defaultPort, host)
  await once(server, 'listening') // rejects with the 'error' of a port already taken
  const port = (server.address() as AddressInfo).port
  url = `http://${host.includes(':') ? `[${host}]` : host}:${port}`
  return {
    url,
    port,
    stats: () => ({ ...core.state().stats }),
    faults: () => core.faults(),
    setFaults: (changes) => core.setFaults(changes),
    reset: () => core.reset(),
    async close() {
      core.state().inFlight.abort()
      const closed = new Promise<void>((resolve, reject) =>
        server.close((error) => (error ? reject(error) : resolve())),
      )
      server.closeAllConnections()
      await closed
    },
  }
}

/** The address without the slashes it may end with (a loop: the pattern /\/+$/ backtracks on a long run of slashes). */
function withoutTrailingSlashes(address: string): string {
  let end = address.length
  while (end > 0 && address[end - 1] === '/') end--
  return address.slice(0, end)
}
