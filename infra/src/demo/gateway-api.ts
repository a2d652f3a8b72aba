// The demo seed's view of a running Meridian: JSON over HTTP through the gateway (as any client), the payment
// provider's payment methods, and a deadline-bounded wait for a condition. Nothing here knows what the demo contains.
import { setTimeout as sleep } from 'node:timers/promises'

/** An answer the seed did not expect: the method, path, status and the envelope's code and message. */
export class GatewayAnswerError extends Error {
  constructor(
    readonly what: string,
    readonly status: number,
    readonly code: string | undefined,
    detail: string,
  ) {
    super(`${what} answered ${status}${code ? ` ${code}` : ''}: ${detail}`)
    this.name = 'GatewayAnswerError'
  }
}

export interface Answer<Body> {
  status: number
  body: Body
}

/** A page of a list (the spec's pagination envelope), as far as the seed reads it. */
export interface Page<Item> {
  data: Item[]
  meta: { page: number; totalPages: number }
}

export interface GatewayApi {
  /** any answer, whatever its status */
  request<Body>(
    method: string,
    path: string,
    init?: { token?: string; body?: unknown },
  ): Promise<Answer<Body>>
  /** the body of an answer with one of `expected` statuses (default 200, or 201 for POST); else GatewayAnswerError */
  call<Body>(
    method: string,
    path: string,
    init?: { token?: string; body?: unknown; expected?: readonly number[] },
  ): Promise<Body>
  /** the first item of a paged list that `matches`, walking at most `maxPages` pages of 100 */
  find<Item>(
    path: string,
    token: string | undefined,
    matches: (item: Item) => boolean,
    maxPages?: number,
  ): Promise<Item | undefined>
  /**
   * a payment method (pm_…) the payment provider made of a card: what a client's browser gets from the provider's
   * elements; the number never reaches Meridian
   */
  tokenizeCard(number: string): Promise<string>
}

/** An answer's text as JSON when it is JSON, else the text itself. */
function parsed(text: string): unknown {
  if (text === '') return undefined
  try {
    return JSON.parse(text)
  } catch {
    return text
  }
}

function explain(what: string, status: number, body: unknown): GatewayAnswerError {
  const envelope = body as { error?: { code?: unknown; message?: unknown } } | undefined
  const code = typeof envelope?.error?.code === 'string' ? envelope.error.code : undefined
  const message =
    typeof envelope?.error?.message === 'string'
      ? envelope.error.message
      : JSON.stringify(body ?? '').slice(0, 300)
  return new GatewayAnswerError(what, status, code, message)
}

export function gatewayApi(gatewayUrl: string, paymentProviderUrl: string): GatewayApi {
  async function send(base: string, method: string, path: string, init: { token?: string; body?: unknown }) {
    const response = await fetch(`${base}${path}`, {
      method,
      headers: {
        ...(init.body === undefined ? {} : { 'content-type': 'application/json' }),
        ...(init.token ? { authorization: `Bearer ${init.token}` } : {}),
      },
      ...(init.body === undefined ? {} : { body: JSON.stringify(init.body) }),
      signal: AbortSignal.timeout(30_000),
    })
    return { status: response.status, body: parsed(await response.text()) }
  }

  const api: GatewayApi = {
    async request<Body>(method: string, path: string, init: { token?: string; body?: unknown } = {}) {
      return (await send(gatewayUrl, method, path, init)) as Answer<Body>
    },

    async call<Body>(
      method: string,
      path: string,
      init: { token?: string; body?: unknown; expected?: readonly number[] } = {},
    ) {
      const expected = init.expected ?? [method === 'POST' ? 201 : 200]
      const answer = await send(gatewayUrl, method, path, init)
      if (!expected.includes(answer.status)) throw explain(`${method} ${path}`, answer.status, answer.body)
      return answer.body as Body
    },

    async find<Item>(
      path: string,
      token: string | undefined,
      matches: (item: Item) => boolean,
      maxPages = 20,
    ) {
      const separator = path.includes('?') ? '&' : '?'
      for (let page = 1; page <= maxPages; page++) {
        const listed = await api.call<Page<Item>>('GET', `${path}${separator}limit=100&page=${page}`, {
          ...(token ? { token } : {}),
        })
        const found = listed.data.find(matches)
        if (found !== undefined) return found
        if (page >= listed.meta.totalPages) return undefined
      }
      return undefined
    },

    async tokenizeCard(number: string) {
      // as the provider's elements do in a shop's page: the card to Stripe's POST /v1/payment_methods, form-encoded,
      // with the shop's publishable key (the simulator takes any pk_test_…)
      const form = new URLSearchParams({
        key: 'pk_test_meridian_demo',
        type: 'card',
        'card[number]': number,
        'card[exp_month]': '12',
        'card[exp_year]': String(new Date().getUTCFullYear() + 2),
        'card[cvc]': '123',
      })
      const response = await fetch(`${paymentProviderUrl}/v1/payment_methods`, {
        method: 'POST',
        body: form,
        signal: AbortSignal.timeout(30_000),
      })
      const body = parsed(await response.text())
      const id = (body as { id?: unknown } | undefined)?.id
      if (response.status >= 300 || typeof id !== 'string') {
        throw explain(`the payment provider's POST /v1/payment_methods`, response.status, body)
      }
      return id
    },
  }
  return api
}

/**
 * fetch's failures to connect (TypeError) and time-outs, and 5xx answers: what a system still starting gives; and
 * 429, the gateway's per-client limit (300 a minute by default), which a long wait's polling may meet.
 */
function isTransient(error: unknown): boolean {
  if (error instanceof GatewayAnswerError) return error.status >= 500 || error.status === 429
  return error instanceof TypeError || (error instanceof Error && error.name === 'TimeoutError')
}

/** Asks `check` until it holds (then its value), every `intervalMs`, failing with `what` after `timeoutMs`. */
export async function waitUntil<Value>(
  what: string,
  check: () => Promise<Value | undefined>,
  timeoutMs: number,
  intervalMs = 500,
): Promise<Value> {
  const deadline = Date.now() + timeoutMs
  let lastError: unknown
  for (;;) {
    try {
      const value = await check()
      if (value !== undefined) return value
    } catch (error) {
      // only the unreachable or the limited is asked again; a condition that can no longer hold throws anything
      // else, which ends the wait at once
      if (!isTransient(error)) throw error
      lastError = error
    }
    if (Date.now() >= deadline) {
      const reason = lastError instanceof Error ? ` (last: ${lastError.message})` : ''
      throw new Error(`timed out after ${Math.round(timeoutMs / 1000)} s waiting until ${what}${reason}`)
    }
    await sleep(intervalMs)
  }
}
