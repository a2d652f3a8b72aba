// The Stripe subset's webhooks: each change of transitions.ts becomes an Event (kept for GET /v1/events) and is POSTed
// to every endpoint that takes its type — the ones of the options (PAYMENT_SIM_WEBHOOK_URL) and the ones made with
// POST /v1/webhook_endpoints — as JSON signed the way Stripe signs (Stripe-Signature: t=…,v1=HMAC-SHA256 of `t.body`).
// A delivery not answered 2xx within the timeout is retried after each of the retry delays, signed anew each time,
// then given up. reset() and close() stop the deliveries of the state they belong to.
import { createHmac, randomBytes } from 'node:crypto'
import { request as httpRequest } from 'node:http'
import { request as httpsRequest } from 'node:https'
import type { Core } from './core.ts'
import { isAbort, newId } from './errors.ts'
import { apiVersion } from './objects.ts'
import { maxEvents, type State, type StripeEvent, unixNow, type WebhookEndpointRecord } from './state.ts'

/** The request an event came from (null for the 3-D Secure page's, which is no API request). */
export interface EventRequest {
  id: string | null
  idempotencyKey: string | null
}

interface Target {
  id: string
  url: string
  secret: string
  enabledEvents: readonly string[]
}

export interface Webhooks {
  /** records the event and starts its deliveries; answers it */
  publish(state: State, type: string, object: unknown, request: EventRequest): StripeEvent
  createEndpoint(
    state: State,
    fields: Pick<WebhookEndpointRecord, 'url' | 'enabledEvents' | 'description' | 'metadata'>,
  ): WebhookEndpointRecord
}

/** Stripe-Signature for a body at a time: `t=<unix seconds>,v1=<hex HMAC-SHA256(secret, "t.body")>`. */
export function signature(secret: string, body: string, timestamp: number): string {
  const mac = createHmac('sha256', secret).update(`${timestamp}.${body}`, 'utf8').digest('hex')
  return `t=${timestamp},v1=${mac}`
}

/** One POST of an event; answers its status, 0 when there was none (refused, reset, past the timeout). */
function post(target: Target, body: string, timeoutMs: number, signal: AbortSignal): Promise<number> {
  return new Promise((resolve) => {
    const url = new URL(target.url)
    const send = url.protocol === 'https:' ? httpsRequest : httpRequest
    const req = send(url, {
      method: 'POST',
      agent: false,
      signal,
      headers: {
        'content-type': 'application/json; charset=utf-8',
        'content-length': Buffer.byteLength(body),
        'user-agent': 'Stripe/1.0 (+https://stripe.com/docs/webhooks)',
        'stripe-signature': signature(target.secret, body, unixNow()),
        connection: 'close',
      },
    })
    const timer = setTimeout(() => req.destroy(new Error('timeout')), timeoutMs)
    req.on('response', (res) => {
      res.resume()
      res.on('error', () => {})
      res.on('close', () => {
        clearTimeout(timer)
        resolve(res.complete ? (res.statusCode ?? 0) : 0)
      })
    })
    req.on('error', () => {
      clearTimeout(timer)
      resolve(0)
    })
    req.end(body)
  })
}

export function createWebhooks(core: Core): Webhooks {
  const { settings } = core
  const configured: Target[] = settings.webhooks.map((target) => ({
    id: newId('we'),
    url: target.url,
    secret: target.secret,
    enabledEvents: ['*'],
  }))

  function log(entry: Record<string, unknown>): void {
    settings.log?.(JSON.stringify({ time: new Date().toISOString(), ...entry }))
  }

  /** Every attempt of one event to one endpoint, until a 2xx or the last retry. */
  async function deliver(state: State, target: Target, event: StripeEvent, body: string): Promise<void> {
    const { signal } = state.inFlight
    const delays = settings.webhookRetryDelaysMs
    for (let attempt = 1; !signal.aborted; attempt++) {
      const started = performance.now()
      state.stats.webhooksSent++
      const status = await post(target, body, settings.webhookTimeoutMs, signal)
      if (signal.aborted) return
      const durationMs = Math.round(performance.now() - started)
      log({ webhook: target.id, event: event.id, type: event.type, attempt, status, durationMs })
      if (status >= 200 && status < 300) {
        state.stats.webhooksDelivered++
        return
      }
      const delay = delays[attempt - 1]
      if (delay === undefined) {
        state.stats.webhooksFailed++
        return
      }
      await core.wait(delay, signal)
    }
  }

  return {
    publish(state, type, object, request) {
      const targets = [...configured, ...state.webhookEndpoints.values()].filter(
        (target) => target.enabledEvents.includes('*') || target.enabledEvents.includes(type),
      )
      const event: StripeEvent = {
        id: newId('evt'),
        object: 'event',
        api_version: apiVersion,
        created: unixNow(),
        data: { object },
        livemode: false,
        pending_webhooks: targets.length,
        request: { id: request.id, idempotency_key: request.idempotencyKey },
        type,
      }
      state.events.push(event)
      if (state.events.length > maxEvents) state.events.shift()
      const body = JSON.stringify(event)
      for (const target of targets)
        deliver(state, target, event, body).catch((error: unknown) => {
          if (!isAbort(error)) log({ webhook: target.id, event: event.id, error: String(error) })
        })
      return event
    },
    createEndpoint(state, fields) {
      const endpoint: WebhookEndpointRecord = {
        id: newId('we'),
        created: unixNow(),
        secret: `whsec_${randomBytes(24).toString('hex')}`,
        ...fields,
      }
      state.webhookEndpoints.set(endpoint.id, endpoint)
      return endpoint
    },
  }
}
