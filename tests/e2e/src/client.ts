// What an end-to-end test does, as a client would: HTTP through the gateway only (fetch), plus the payment provider's
// simulator for what a client gets from the provider itself (a payment method) and what the provider saw (an order's
// charges and refunds).
import { randomBytes } from 'node:crypto'
import type {
  CancelledOrder,
  DeliveredShipment,
  Exchange,
  ExchangeStatus,
  Notification,
  NotificationType,
  Order,
  OrderStatus,
  Payment,
  PlacedOrder,
  ProcessInstance,
  Product,
  Return,
  ReturnStatus,
  Shipment,
  TokenPair,
  User,
} from '@meridian/contracts'
import { eventually, scaledMs } from '@meridian/testkit'
import type { E2eSystem } from './system-context.ts'

/** The simulator's test cards (infra/src/payment-simulator/cards.ts). */
export const cards = {
  good: '4242424242424242',
  /** succeeds after the simulator's delay (2 s) */
  slow: '4000000000000077',
  declined: '4000000000000002',
  /** answers (and charges) only after 8 s: past payment's 5 s deadline */
  hanging: '4000000000000259',
} as const

/** The shop's publishable key at the provider, with which a browser page makes payment methods (any pk_test_… there). */
const publishableKey = 'pk_test_meridian_e2e'

/** What the provider saw for one order (GET /v1/orders/:orderId/summary): succeeded charges only in charges. */
export interface ProviderSummary {
  orderId: string
  charges: number
  failedCharges: number
  refunds: number
  /** minor units */
  charged: number
  refunded: number
}

export interface ApiResponse<Body> {
  status: number
  headers: Headers
  body: Body
}

export class UnexpectedAnswer extends Error {
  constructor(
    what: string,
    readonly status: number,
    readonly body: unknown,
  ) {
    super(`${what}: answered ${status} ${JSON.stringify(body)}`)
    this.name = 'UnexpectedAnswer'
  }
}

/** A user with a token: the administrator or a customer. */
export interface Caller {
  id?: string
  email: string
  token: string
}

export interface Customer extends Caller {
  id: string
}

const finalStatuses: readonly OrderStatus[] = ['delivered', 'cancelled', 'failed']
const finalReturnStatuses: readonly ReturnStatus[] = ['completed', 'rejected']

/** How the simulator answers refunds until told otherwise (POST /v1/faults). */
export type RefundFault = 'succeed' | 'decline' | 'fail'

/** A line of an order: this many of the product, at its price. */
export interface OrderLine {
  product: Product
  quantity: number
}

const unique = (label: string) => `${label}-${Date.now().toString(36)}-${randomBytes(3).toString('hex')}`

/** What the client's helpers send with: any call, a gateway call that must answer as expected, the simulator's. */
interface Transport {
  gatewayUrl: string
  call<Body>(
    base: string,
    method: string,
    path: string,
    init?: { token?: string; body?: unknown; headers?: Record<string, string> },
  ): Promise<ApiResponse<Body>>
  gateway<Body>(
    method: string,
    path: string,
    init?: { token?: string; body?: unknown; expected?: number },
  ): Promise<ApiResponse<Body>>
  simulator<Body>(method: string, path: string, body?: unknown): Promise<Body>
}

/**
 * Returns as a client and an operator see them: asking for one, reading it, receiving or rejecting it, waiting for its
 * status; the customer's notifications; the operators' process API; and the provider's refund faults.
 */
function returnHelpers({ gatewayUrl, call, gateway, simulator }: Transport) {
  const helpers = {
    /** POST /api/v1/orders/:id/returns as the caller; whatever it answers (202 with Location when taken). */
    requestReturn: (
      caller: Caller,
      orderId: string,
      items: readonly { productId: string; quantity: number }[],
      reason = 'does not fit',
      carrier?: string,
    ) =>
      call<Return>(gatewayUrl, 'POST', `/api/v1/orders/${orderId}/returns`, {
        token: caller.token,
        body: { items, reason, ...(carrier === undefined ? {} : { carrier }) },
      }),

    /** Asks for the return and fails unless it is taken (202 with its Location); the return. */
    async requestReturnOk(
      caller: Caller,
      orderId: string,
      items: readonly { productId: string; quantity: number }[],
      reason?: string,
      carrier?: string,
    ): Promise<Return> {
      const asked = await helpers.requestReturn(caller, orderId, items, reason, carrier)
      if (asked.status !== 202 || asked.headers.get('location') !== `/api/v1/returns/${asked.body.returnId}`)
        throw new UnexpectedAnswer(`POST /api/v1/orders/${orderId}/returns`, asked.status, asked.body)
      return asked.body
    },

    async readReturn(caller: Caller, returnId: string): Promise<Return> {
      return (await gateway<Return>('GET', `/api/v1/returns/${returnId}`, { token: caller.token })).body
    },

    /**
     * POST /api/v1/returns/:id/receive as an admin, or as a carrier with its key (X-Carrier-Key); whatever it
     * answers (202 with the return).
     */
    receiveReturn: (by: Caller | { carrierKey: string }, returnId: string) =>
      call<Return>(gatewayUrl, 'POST', `/api/v1/returns/${returnId}/receive`, {
        ...('carrierKey' in by ? { headers: { 'x-carrier-key': by.carrierKey } } : { token: by.token }),
      }),

    /** POST /api/v1/returns/:id/reject as the caller; whatever it answers (202 with the return before receipt). */
    rejectReturn: (caller: Caller, returnId: string, reason: string) =>
      call<Return>(gatewayUrl, 'POST', `/api/v1/returns/${returnId}/reject`, {
        token: caller.token,
        body: { reason },
      }),

    /**
     * Polls the return until its status is `wanted`; fails at once when it reached another final status, else
     * after `timeoutMs`. The return as last read.
     */
    async returnReaches(
      caller: Caller,
      returnId: string,
      wanted: ReturnStatus,
      timeoutMs = scaledMs(60_000),
    ): Promise<Return> {
      let found: Return | undefined
      try {
        await eventually(
          `return ${returnId} is ${wanted}`,
          async () => {
            found = await helpers.readReturn(caller, returnId)
            if (found.status === wanted) return true
            if (finalReturnStatuses.includes(found.status))
              throw new Error(`return ${returnId} ended ${found.status}, not ${wanted}`)
            return false
          },
          timeoutMs,
        )
      } catch (error) {
        const last = found ? ` (last seen ${found.status})` : ''
        throw new Error(`${error instanceof Error ? error.message : String(error)}${last}`)
      }
      return found as Return
    },

    /** The customer's notifications of a type, newest first (GET /api/v1/notifications?type=). */
    async notificationsOf(caller: Caller, type: NotificationType): Promise<Notification[]> {
      const { body } = await gateway<{ data: Notification[] }>(
        'GET',
        `/api/v1/notifications?type=${type}&limit=100`,
        { token: caller.token },
      )
      return body.data
    },

    /** Polls until the caller has a notification of the type whose message names `about` (an id); that one. */
    async notificationReaches(
      caller: Caller,
      type: NotificationType,
      about: string,
      timeoutMs = scaledMs(60_000),
    ): Promise<Notification> {
      let found: Notification | undefined
      await eventually(
        `a ${type} notification about ${about}`,
        async () => {
          found = (await helpers.notificationsOf(caller, type)).find((each) => each.message.includes(about))
          return found !== undefined
        },
        timeoutMs,
      )
      return found as Notification
    },

    /** GET /api/v1/admin/processes with the query (type, state, escalated, …), as an admin: the instances. */
    async processes(admin: Caller, query: string): Promise<ProcessInstance[]> {
      const { body } = await gateway<{ data: ProcessInstance[] }>('GET', `/api/v1/admin/processes?${query}`, {
        token: admin.token,
      })
      return body.data
    },

    /** One process instance with its step log (GET /api/v1/admin/processes/:type/:id). */
    async process(admin: Caller, type: string, id: string): Promise<ProcessInstance> {
      return (
        await gateway<ProcessInstance>('GET', `/api/v1/admin/processes/${type}/${id}`, { token: admin.token })
      ).body
    },

    /** An operator's undoing of the instance (POST /api/v1/admin/processes/:type/:id/compensate). */
    compensateProcess: (admin: Caller, type: string, id: string, reason: string) =>
      call<ProcessInstance>(gatewayUrl, 'POST', `/api/v1/admin/processes/${type}/${id}/compensate`, {
        token: admin.token,
        body: { reason },
      }),

    /** An operator's retry of the instance's awaited step (POST /api/v1/admin/processes/:type/:id/retry). */
    retryProcess: (admin: Caller, type: string, id: string) =>
      call<ProcessInstance>(gatewayUrl, 'POST', `/api/v1/admin/processes/${type}/${id}/retry`, {
        token: admin.token,
      }),

    /** How the provider answers refunds from now on, until told otherwise (the simulator's POST /v1/faults). */
    async setRefunds(refunds: RefundFault): Promise<void> {
      await simulator<{ refunds: RefundFault }>('POST', '/v1/faults', { refunds })
    },
  }
  return helpers
}

const finalExchangeStatuses: readonly ExchangeStatus[] = ['completed', 'failed']

/** Exchanges as a client and an operator see them: asking for one, reading it, receiving its goods, waiting for it. */
function exchangeHelpers({ gatewayUrl, call, gateway }: Transport) {
  const helpers = {
    /** POST /api/v1/orders/:id/exchanges as the caller; whatever it answers (202 with Location when taken). */
    requestExchange: (
      caller: Caller,
      orderId: string,
      items: readonly { productId: string; quantity: number; replacementProductId: string }[],
      paymentToken?: string,
    ) =>
      call<Exchange>(gatewayUrl, 'POST', `/api/v1/orders/${orderId}/exchanges`, {
        token: caller.token,
        body: { items, ...(paymentToken === undefined ? {} : { paymentToken }) },
      }),

    async readExchange(caller: Caller, exchangeId: string): Promise<Exchange> {
      return (await gateway<Exchange>('GET', `/api/v1/exchanges/${exchangeId}`, { token: caller.token })).body
    },

    /** POST /api/v1/exchanges/:id/receive as the caller; whatever it answers (202 with the exchange). */
    receiveExchange: (caller: Caller, exchangeId: string) =>
      call<Exchange>(gatewayUrl, 'POST', `/api/v1/exchanges/${exchangeId}/receive`, { token: caller.token }),

    /**
     * Polls the exchange until `wanted(exchange)`, failing at once when it ended otherwise (completed or failed but
     * not wanted), else after `timeoutMs`. The exchange as last read.
     */
    async exchangeReaches(
      caller: Caller,
      exchangeId: string,
      wanted: ExchangeStatus,
      timeoutMs = scaledMs(60_000),
    ): Promise<Exchange> {
      let found: Exchange | undefined
      try {
        await eventually(
          `exchange ${exchangeId} is ${wanted}`,
          async () => {
            found = await helpers.readExchange(caller, exchangeId)
            if (found.status === wanted) return true
            if (finalExchangeStatuses.includes(found.status))
              throw new Error(`exchange ${exchangeId} ended ${found.status}, not ${wanted}`)
            return false
          },
          timeoutMs,
        )
      } catch (error) {
        const last = found ? ` (last seen ${found.status}: ${found.failureReason ?? ''})` : ''
        throw new Error(`${error instanceof Error ? error.message : String(error)}${last}`)
      }
      return found as Exchange
    },
  }
  return helpers
}

export function e2eClient(system: Pick<E2eSystem, 'gatewayUrl' | 'simulatorUrl' | 'admin'>) {
  const { gatewayUrl, simulatorUrl } = system

  async function call<Body>(
    base: string,
    method: string,
    path: string,
    init: { token?: string; body?: unknown; headers?: Record<string, string> } = {},
  ): Promise<ApiResponse<Body>> {
    const response = await fetch(`${base}${path}`, {
      method,
      headers: {
        ...(init.body === undefined ? {} : { 'content-type': 'application/json' }),
        ...(init.token ? { authorization: `Bearer ${init.token}` } : {}),
        ...init.headers,
      },
      ...(init.body === undefined ? {} : { body: JSON.stringify(init.body) }),
      signal: AbortSignal.timeout(30_000),
    })
    const text = await response.text()
    let body: unknown = text
    try {
      body = text === '' ? undefined : JSON.parse(text)
    } catch {
      // not JSON: kept as text for the message
    }
    return { status: response.status, headers: response.headers, body: body as Body }
  }

  /** A request through the gateway; fails unless it answers `expected`. */
  async function gateway<Body>(
    method: string,
    path: string,
    init: { token?: string; body?: unknown; expected?: number } = {},
  ): Promise<ApiResponse<Body>> {
    const answer = await call<Body>(gatewayUrl, method, path, init)
    const expected = init.expected ?? (method === 'POST' ? 201 : 200)
    if (answer.status !== expected)
      throw new UnexpectedAnswer(`${method} ${path}`, answer.status, answer.body)
    return answer
  }

  async function simulator<Body>(method: string, path: string, body?: unknown): Promise<Body> {
    const answer = await call<Body>(simulatorUrl, method, path, body === undefined ? {} : { body })
    if (answer.status >= 300)
      throw new UnexpectedAnswer(`simulator ${method} ${path}`, answer.status, answer.body)
    return answer.body
  }

  /**
   * The card token each Idempotency-Key placed its order with: a retry under the key sends the same body again (a new
   * token would be another request, 422), so a card is tokenized once per key.
   */
  const tokensOfKeys = new Map<string, string>()

  /** The order's payment token: the one given, the one its key was first sent with, else the card's, tokenized. */
  async function orderPaymentToken(options: {
    card?: string
    paymentToken?: string
    idempotencyKey?: string
  }) {
    if (options.paymentToken) return options.paymentToken
    const { idempotencyKey } = options
    const known = idempotencyKey === undefined ? undefined : tokensOfKeys.get(idempotencyKey)
    if (known) return known
    const token = await client.tokenizeCard(options.card ?? cards.good)
    if (idempotencyKey !== undefined) tokensOfKeys.set(idempotencyKey, token)
    return token
  }

  const client = {
    gatewayUrl,
    simulatorUrl,
    /** any request through the gateway, whatever it answers */
    request: <Body = unknown>(
      method: string,
      path: string,
      init: { token?: string; body?: unknown; headers?: Record<string, string> } = {},
    ) => call<Body>(gatewayUrl, method, path, init),

    async login(email: string, password: string): Promise<string> {
      const { body } = await gateway<TokenPair>('POST', '/login', {
        body: { email, password },
        expected: 200,
      })
      return body.accessToken
    },

    async loginAdmin(): Promise<Caller> {
      return {
        email: system.admin.email,
        token: await client.login(system.admin.email, system.admin.password),
      }
    },

    /** Registers a customer (open registration, POST /api/v1/users) and logs them in. */
    async registerCustomer(): Promise<Customer> {
      const email = `${unique('customer')}@example.com`
      const password = randomBytes(12).toString('base64url')
      const { body } = await gateway<User>('POST', '/api/v1/users', {
        body: { name: 'E2E Customer', email, password },
      })
      return { id: body.id, email, token: await client.login(email, password) }
    },

    /** An active product with this much stock, priced 12.50 unless told (admin only). */
    async createProduct(admin: Caller, options: { stock: number; price?: number }): Promise<Product> {
      const { body } = await gateway<Product>('POST', '/api/v1/products', {
        token: admin.token,
        body: { sku: unique('e2e'), name: 'E2E product', price: options.price ?? 12.5, stock: options.stock },
      })
      return body
    },

    async adjustStock(admin: Caller, productId: string, delta: number, reason: string): Promise<Product> {
      const { body } = await gateway<Product>('POST', `/api/v1/products/${productId}/stock-adjustments`, {
        token: admin.token,
        body: { delta, reason },
        expected: 200,
      })
      return body
    },

    /** available and reserved units now (products are open to anyone) */
    async readProduct(productId: string): Promise<Product> {
      return (await gateway<Product>('GET', `/api/v1/products/${productId}`)).body
    },

    /** Polls the product until its stock is `expected` (compensations run asynchronously); the product. */
    async stockReaches(
      productId: string,
      expected: { available: number; reserved: number },
      timeoutMs = scaledMs(60_000),
    ): Promise<Product> {
      let product: Product | undefined
      try {
        await eventually(
          `product ${productId} has ${expected.available} available and ${expected.reserved} reserved`,
          async () => {
            product = await client.readProduct(productId)
            return product.available === expected.available && product.reserved === expected.reserved
          },
          timeoutMs,
        )
      } catch (error) {
        const last = product
          ? ` (last seen ${product.available} available, ${product.reserved} reserved)`
          : ''
        throw new Error(`${error instanceof Error ? error.message : String(error)}${last}`)
      }
      return product as Product
    },

    /**
     * What a client's browser gets from the provider: a payment method (pm_…) made of the card by the provider's own
     * elements (Stripe's POST /v1/payment_methods, form-encoded, with a publishable key as Stripe.js sends it); only
     * its id ever reaches Meridian.
     */
    async tokenizeCard(number: string): Promise<string> {
      const form = new URLSearchParams({
        key: publishableKey,
        type: 'card',
        'card[number]': number,
        'card[exp_month]': '12',
        'card[exp_year]': String(new Date().getUTCFullYear() + 2),
        'card[cvc]': '123',
      })
      const answer = await fetch(`${simulatorUrl}/v1/payment_methods`, {
        method: 'POST',
        body: form,
        signal: AbortSignal.timeout(30_000),
      })
      const body = (await answer.json()) as { id?: string }
      if (answer.status !== 200 || body.id === undefined)
        throw new UnexpectedAnswer('simulator POST /v1/payment_methods', answer.status, body)
      return body.id
    },

    /**
     * POST /api/v1/orders as the customer; whatever it answers (the caller checks 201 and Location). With an
     * `idempotencyKey`, the same call again is a safe retry (after a 502/503/504 or a network failure): it sends the
     * same body under the key and answers the order the key placed, never a second one.
     */
    async placeOrder(
      customer: Customer,
      options: {
        product: Product
        quantity?: number
        /** the order's lines, when it has more than the one of `product` × `quantity` */
        lines?: readonly OrderLine[]
        card?: string
        paymentToken?: string
        /** sent as the Idempotency-Key header (1 to 255 printable ASCII characters) */
        idempotencyKey?: string
        /** extra request headers (e.g. a traceparent that names the order's trace) */
        headers?: Record<string, string>
      },
    ): Promise<ApiResponse<PlacedOrder>> {
      const token = await orderPaymentToken(options)
      const headers = {
        ...options.headers,
        ...(options.idempotencyKey === undefined ? {} : { 'idempotency-key': options.idempotencyKey }),
      }
      const lines = options.lines ?? [{ product: options.product, quantity: options.quantity ?? 1 }]
      return call<PlacedOrder>(gatewayUrl, 'POST', '/api/v1/orders', {
        token: customer.token,
        headers,
        body: {
          customerId: customer.id,
          items: lines.map(({ product, quantity }) => ({
            productId: product.id,
            quantity,
            price: product.price,
          })),
          shippingAddress: { street: '1 Test Street', city: 'Testville', zip: '12345' },
          payment: { token },
        },
      })
    },

    /** Places the order and fails unless it is accepted (201 with Location); the order's id. */
    async placeOrderOk(
      customer: Customer,
      options: {
        product: Product
        quantity?: number
        lines?: readonly OrderLine[]
        card?: string
        paymentToken?: string
        headers?: Record<string, string>
      },
    ): Promise<string> {
      const placed = await client.placeOrder(customer, options)
      if (placed.status !== 201 || !placed.headers.get('location'))
        throw new UnexpectedAnswer('POST /api/v1/orders', placed.status, placed.body)
      return placed.body.orderId
    },

    async readOrder(caller: Caller, orderId: string): Promise<Order> {
      return (await gateway<Order>('GET', `/api/v1/orders/${orderId}`, { token: caller.token })).body
    },

    /** POST /api/v1/orders/:id/cancel; whatever it answers (202 while cancellable, 409 after). */
    async cancelOrder(caller: Caller, orderId: string): Promise<ApiResponse<CancelledOrder>> {
      return call<CancelledOrder>(gatewayUrl, 'POST', `/api/v1/orders/${orderId}/cancel`, {
        token: caller.token,
      })
    },

    /**
     * Polls the order until its status is one of `wanted`; fails at once when it reached another final status,
     * else after `timeoutMs`. The order as last read.
     */
    async orderReaches(
      caller: Caller,
      orderId: string,
      wanted: OrderStatus | readonly OrderStatus[],
      timeoutMs = scaledMs(60_000),
    ): Promise<Order> {
      const statuses: readonly OrderStatus[] = typeof wanted === 'string' ? [wanted] : wanted
      let order: Order | undefined
      try {
        await eventually(
          `order ${orderId} is ${statuses.join(' or ')}`,
          async () => {
            order = await client.readOrder(caller, orderId)
            if (statuses.includes(order.status)) return true
            if (finalStatuses.includes(order.status))
              throw new Error(`order ${orderId} ended ${order.status}, not ${statuses.join(' or ')}`)
            return false
          },
          timeoutMs,
        )
      } catch (error) {
        const last = order ? ` (last seen ${order.status})` : ''
        throw new Error(`${error instanceof Error ? error.message : String(error)}${last}`)
      }
      return order as Order
    },

    /** What the provider charged and refunded for the order. */
    providerSummary: (orderId: string) =>
      simulator<ProviderSummary>('GET', `/v1/orders/${encodeURIComponent(orderId)}/summary`),

    /** Polls the provider's summary until `check` holds; the summary as last read. */
    async providerSummaryReaches(
      orderId: string,
      what: string,
      check: (summary: ProviderSummary) => boolean,
      timeoutMs = scaledMs(60_000),
    ): Promise<ProviderSummary> {
      let summary: ProviderSummary | undefined
      try {
        await eventually(
          `the provider's summary of ${orderId}: ${what}`,
          async () => {
            summary = await client.providerSummary(orderId)
            return check(summary)
          },
          timeoutMs,
        )
      } catch (error) {
        throw new Error(
          `${error instanceof Error ? error.message : String(error)} (last seen ${JSON.stringify(summary)})`,
        )
      }
      return summary as ProviderSummary
    },

    /**
     * POST /api/v1/payments as the caller with a card tokenized at the provider, under a new Idempotency-Key unless
     * one is given; whatever it answers.
     */
    async pay(
      caller: Caller,
      options: { orderId: string; amount: number; card?: string; idempotencyKey?: string },
    ): Promise<ApiResponse<Payment>> {
      const token = await client.tokenizeCard(options.card ?? cards.good)
      return call<Payment>(gatewayUrl, 'POST', '/api/v1/payments', {
        token: caller.token,
        headers: { 'idempotency-key': options.idempotencyKey ?? unique('payment') },
        body: { orderId: options.orderId, amount: options.amount, source: { token } },
      })
    },

    /** The order's shipments (GET /api/v1/shipments?orderId=), as an admin sees them. */
    async shipmentsOf(admin: Caller, orderId: string): Promise<Shipment[]> {
      const { body } = await gateway<{ data: Shipment[] }>('GET', `/api/v1/shipments?orderId=${orderId}`, {
        token: admin.token,
      })
      return body.data
    },

    /** Polls until the order has a shipment; the first one. */
    async shipmentOf(admin: Caller, orderId: string, timeoutMs = scaledMs(60_000)): Promise<Shipment> {
      let shipment: Shipment | undefined
      await eventually(
        `a shipment for order ${orderId}`,
        async () => {
          shipment = (await client.shipmentsOf(admin, orderId))[0]
          return shipment !== undefined
        },
        timeoutMs,
      )
      return shipment as Shipment
    },

    async deliverShipment(admin: Caller, shipmentId: string): Promise<DeliveredShipment> {
      const { body } = await gateway<DeliveredShipment>('POST', `/api/v1/shipments/${shipmentId}/deliver`, {
        token: admin.token,
        expected: 200,
      })
      return body
    },

    ...returnHelpers({ call, gateway, simulator, gatewayUrl }),
    ...exchangeHelpers({ call, gateway, simulator, gatewayUrl }),
  }
  return client
}

export type E2eClient = ReturnType<typeof e2eClient>
