// Order use cases: placing an order (priced from the catalogue, in integer cents), reading it in its hypermedia form,
// listing a customer's orders, and cancelling. Every state change and its event commit in one transaction (outbox).
// Each takes the caller and decides whether they may (domain/access.ts): the one place order authorizes.
import { randomUUID } from 'node:crypto'
import {
  AppError,
  type CancelledOrder,
  type ErrorDetail,
  fromMinorUnits,
  maximumMinorUnits,
  type Order,
  type OrderResourceLinks,
  type PlacedOrder,
  type PlaceOrderBody,
  type PlaceUserOrderBody,
  type ProductSummary,
  toMinorUnits,
  type UserOrderListQuery,
} from '@meridian/contracts'
import { type ListEnvelope, listEnvelope, type Sql, transaction } from '@meridian/db'
import { appendToOutbox, createEvent } from '@meridian/events'
import { ProcessConflict } from '@meridian/process'
import { type Principal, type RequestFingerprints, requestFingerprints } from '@meridian/service-kit'
import type { ProductCatalogue } from '../clients/inventory-catalogue.ts'
import {
  isIdempotencyKeyTaken,
  type KeyedOrder,
  type NewOrder,
  type OrderIdempotency,
  type OrderItemRecord,
  type OrderRecord,
  type OrdersRepository,
} from '../data/orders-repository.ts'
import { assertCustomerOrAdmin, assertUnverifiedMayOrder, isCustomerOrAdmin } from './access.ts'
import type { Admission } from './admission.ts'
import {
  isCancellable,
  isReturnable,
  orderHref,
  orderLinks,
  paymentHref,
  serviceSource,
  shipmentHref,
} from './order-links.ts'
import type { SagaFacade } from './saga-facade.ts'

/** The reason order.cancelled carries when the customer (or an admin for them) cancels. */
export const customerCancelReason = 'cancelled by the customer'

/**
 * An order's links: `self`, `cancel` while it can be cancelled, `authenticate` while its payment waits for the
 * customer's 3-D Secure authentication (the provider's page), `payment` and `shipment` once its saga heard of
 * them (the ids payment.processed and shipment.created carried), and `returns` once it can be returned (shipped,
 * delivered).
 */
export function orderResourceLinks(
  record: Pick<OrderRecord, 'id' | 'status' | 'paymentId' | 'shipmentId' | 'authenticateUrl'>,
): OrderResourceLinks {
  const links: OrderResourceLinks = { self: { href: orderHref(record.id), method: 'GET' } }
  if (isCancellable(record.status)) links.cancel = { href: `${orderHref(record.id)}/cancel`, method: 'POST' }
  if (record.status === 'payment_action_required' && record.authenticateUrl)
    links.authenticate = { href: record.authenticateUrl, method: 'GET' }
  if (record.paymentId) links.payment = { href: paymentHref(record.paymentId), method: 'GET' }
  if (record.shipmentId) links.shipment = { href: shipmentHref(record.shipmentId), method: 'GET' }
  if (isReturnable(record.status)) {
    links.returns = { href: `${orderHref(record.id)}/returns`, method: 'POST' }
    links.exchanges = { href: `${orderHref(record.id)}/exchanges`, method: 'POST' }
  }
  return links
}

/** What an order looks like to clients: amounts in major units, ISO timestamps, its links. */
export function presentOrder(record: OrderRecord): Order {
  return {
    id: record.id,
    customerId: record.customerId,
    status: record.status,
    total: fromMinorUnits(record.totalCents),
    items: record.items.map((item) => ({
      productId: item.productId,
      quantity: item.quantity,
      price: fromMinorUnits(item.priceCents),
      name: item.name,
    })),
    shippingAddress: record.shippingAddress,
    createdAt: record.createdAt.toISOString(),
    updatedAt: record.updatedAt.toISOString(),
    _links: orderResourceLinks(record),
  }
}

/**
 * The items priced from the catalogue, or 422 VALIDATION_ERROR with one detail per bad item: a price with more than
 * two decimals, an unknown or inactive product, a price other than the catalogue's.
 */
function priceItems(
  items: PlaceOrderBody['items'],
  catalogue: ReadonlyMap<string, ProductSummary>,
): OrderItemRecord[] {
  const problems: ErrorDetail[] = []
  const priced: OrderItemRecord[] = []
  items.forEach((item, index) => {
    // the chassis names schema problems `items.0.quantity`: the same path syntax here
    const at = `items.${index}`
    const cents = toMinorUnits(item.price)
    const product = catalogue.get(item.productId.toLowerCase())
    if (cents === undefined) {
      problems.push({
        field: `${at}.price`,
        message: 'must be an amount with at most two decimals',
        received: String(item.price),
      })
    } else if (!product) {
      problems.push({ field: `${at}.productId`, message: 'no such product', received: item.productId })
    } else if (!product.active) {
      problems.push({
        field: `${at}.productId`,
        message: 'the product is not for sale (inactive)',
        received: item.productId,
      })
    } else if (toMinorUnits(product.price) !== cents) {
      problems.push({
        field: `${at}.price`,
        message: `must be the catalogue price ${product.price.toFixed(2)}`,
        received: String(item.price),
      })
    } else {
      priced.push({ productId: product.id, name: product.name, quantity: item.quantity, priceCents: cents })
    }
  })
  if (problems.length > 0) throw AppError.validation(problems)
  return priced
}

/**
 * The items priced from the catalogue and their total in integer cents: 422 per bad item or for a total past the
 * maximum, 503 when inventory is unreachable.
 */
async function priceOrder(
  catalogue: ProductCatalogue,
  requested: PlaceOrderBody['items'],
  requestId?: string,
): Promise<{ items: OrderItemRecord[]; totalCents: number }> {
  // inventory is asked only about the items whose price is an amount (a price with three decimals is a 422
  // whatever the catalogue says); priceItems then reports every bad item at once
  const ids = [
    ...new Set(
      requested
        .filter((item) => toMinorUnits(item.price) !== undefined)
        .map((item) => item.productId.toLowerCase()),
    ),
  ]
  const products = ids.length > 0 ? await catalogue.lookup(ids, requestId) : []
  const items = priceItems(requested, new Map(products.map((product) => [product.id.toLowerCase(), product])))
  // integer cents: exact whatever the number of items (at most 100 x 1000 x 10^10, a safe integer)
  const totalCents = items.reduce((sum, item) => sum + item.priceCents * item.quantity, 0)
  if (totalCents > maximumMinorUnits) {
    throw AppError.validation([
      {
        field: 'items',
        message: `the total must not exceed ${fromMinorUnits(maximumMinorUnits)}`,
        received: String(totalCents / 100),
      },
    ])
  }
  return { items, totalCents }
}

/**
 * priceOrder for the principal: a customer whose address is unproved is held to UNVERIFIED_CUSTOMER_ORDER_LIMIT
 * (`limitCents`; 403: a limit of 0 before anything is priced, another once the total is known).
 */
async function priceOrderFor(
  principal: Principal,
  limitCents: number | undefined,
  catalogue: ProductCatalogue,
  input: PlaceOrderBody,
  requestId?: string,
): Promise<{ items: OrderItemRecord[]; totalCents: number }> {
  assertUnverifiedMayOrder(principal, input.customerId, limitCents)
  const priced = await priceOrder(catalogue, input.items, requestId)
  assertUnverifiedMayOrder(principal, input.customerId, limitCents, priced.totalCents)
  return priced
}

/**
 * order.placed for a just written order: the full-state variant, with the payment token (a provider token, never card
 * data) for the payment step, and the customer's email when the customer placed it.
 */
function orderPlacedEvent(created: NewOrder, input: PlaceOrderBody, principal: Principal) {
  return createEvent(
    'order.placed',
    {
      orderId: created.id,
      customerId: created.customerId,
      total: fromMinorUnits(created.totalCents),
      items: created.items.map((item) => ({
        productId: item.productId,
        quantity: item.quantity,
        price: fromMinorUnits(item.priceCents),
        name: item.name,
      })),
      ...(principal.kind === 'user' && principal.subject === created.customerId && principal.email
        ? { customerEmail: principal.email }
        : {}),
      status: created.status,
      shippingAddress: created.shippingAddress,
      ...(input.payment?.token ? { payment: { token: input.payment.token } } : {}),
    },
    { source: serviceSource },
  )
}

/** What placing takes of the request besides its body. */
export interface PlaceRequest {
  requestId?: string
  /** the Idempotency-Key header's key (checked by the route), when the request sent one */
  idempotencyKey?: string
}

export interface PlaceAnswer {
  /** the 201's body */
  placed: PlacedOrder
  /** true when the order was placed by an earlier request with the same Idempotency-Key and body */
  replayed: boolean
}

/**
 * The fingerprints of order's placing requests under IDEMPOTENCY_SECRET (service-kit's requestFingerprints), with
 * order's own purpose, never payment's. An order placed before the secret keeps its legacy fingerprint, still matched.
 */
export const orderFingerprints = (secret: string): RequestFingerprints =>
  requestFingerprints('meridian-order', secret)

/**
 * The 201's body of a just placed order. An order is always `placed` when it is written, so a replay answers this
 * again, exactly as the first request was answered, whatever the order's status is now (its link tells that).
 */
function placedAnswer(orderId: string, totalCents: number): PlacedOrder {
  return {
    orderId,
    status: 'placed',
    total: fromMinorUnits(totalCents),
    _links: orderLinks(orderId, 'placed'),
  }
}

const idempotencyKeyReused = (): AppError =>
  AppError.validation(
    [{ field: 'Idempotency-Key', message: 'was already used with a different request body' }],
    'This Idempotency-Key was already used to place an order with a different request',
  )

/**
 * The answer to a request under an Idempotency-Key that an order was already placed with: the first answer again (the
 * same body, replayed) when the request is the same, 422 when its body is another.
 */
function replayOf(earlier: KeyedOrder, request: KeyedRequest): PlaceAnswer {
  if (!request.isSameAs(earlier)) throw idempotencyKeyReused()
  return { placed: placedAnswer(earlier.id, earlier.totalCents), replayed: true }
}

/** A placing request under its key: what is stored with the order, and whether an order of the key is its own. */
interface KeyedRequest {
  customerId: string
  idempotency: OrderIdempotency
  isSameAs(earlier: KeyedOrder): boolean
}

function keyedRequest(fingerprints: RequestFingerprints, input: PlaceOrderBody, key: string): KeyedRequest {
  const customerId = input.customerId.toLowerCase()
  const body = { ...input, customerId }
  return {
    customerId,
    idempotency: { key, requestHash: fingerprints.of(customerId, key, body) },
    isSameAs: (earlier) => fingerprints.matches(earlier.requestHash, customerId, key, body),
  }
}

export interface OrderUseCasesDependencies {
  orders: OrdersRepository
  catalogue: ProductCatalogue
  /** the saga's process manager: an instance starts with each order, a cancel runs through it */
  saga: Pick<SagaFacade, 'start' | 'cancel'>
  sql: Sql
  /** how a placing request is fingerprinted under its Idempotency-Key (orderFingerprints) */
  fingerprints: RequestFingerprints
  /** UNVERIFIED_CUSTOMER_ORDER_LIMIT in cents: the largest total of a customer whose address is unproved (0: none) */
  unverifiedOrderLimitCents?: number
  /** back-pressure (ORDER_ADMISSION_TARGET_MS): a new order is admitted first, or refused 503; absent: all are */
  admission?: Pick<Admission, 'admit'>
}

/** The order, if the principal may see it; another customer's order is a 404 (its existence is not told). */
async function visibleOrder(
  orders: OrdersRepository,
  id: string,
  principal: Principal,
): Promise<OrderRecord> {
  const order = await orders.findById(id)
  if (!order || !isCustomerOrAdmin(principal, order.customerId)) {
    throw AppError.notFound(`Order ${id} not found`)
  }
  return order
}

export function createOrderUseCases({
  orders,
  catalogue,
  saga,
  sql,
  fingerprints,
  unverifiedOrderLimitCents,
  admission,
}: OrderUseCasesDependencies) {
  const findVisibleOrder = (id: string, principal: Principal) => visibleOrder(orders, id, principal)

  /**
   * Prices the items from the catalogue (422 per bad item, 503 when inventory is unreachable), then writes the
   * order, its items and its order.placed record in one transaction, with the request's Idempotency-Key when it came
   * with one. The caller checked who may place for `input.customerId` (an unproved one's limit: priceOrderFor).
   */
  async function priceAndPlace(
    input: PlaceOrderBody,
    principal: Principal,
    requestId?: string,
    idempotency?: OrderIdempotency,
  ): Promise<PlaceAnswer> {
    // a new order only: before anything is priced or written (a replay of an earlier one never comes here)
    admission?.admit()
    const limit = unverifiedOrderLimitCents
    const { items, totalCents } = await priceOrderFor(principal, limit, catalogue, input, requestId)

    const newOrder: NewOrder = {
      id: randomUUID(),
      customerId: input.customerId,
      status: 'placed',
      totalCents,
      shippingAddress: input.shippingAddress,
      paymentToken: input.payment?.token ?? null,
      items,
      ...(idempotency ? { idempotency } : {}),
    }
    const order = await transaction(sql, async (tx) => {
      // the order's id is ours: its insert, its saga and its order.placed record go out together, one round trip,
      // and in this order (the saga's row references the order's)
      const [created] = await Promise.all([
        orders.insert(newOrder, tx),
        saga.start(newOrder.id, tx),
        appendToOutbox(tx, orderPlacedEvent(newOrder, input, principal), { aggregateId: newOrder.id }),
      ])
      return created
    })
    return { placed: placedAnswer(order.id, order.totalCents), replayed: false }
  }

  /**
   * Places the order under the customer's Idempotency-Key: the order placed with it before answers again (nothing
   * is priced or written); otherwise it is placed with the key, and when another request with the key placed its
   * order meanwhile (the unique index let that one in and failed this one's transaction: nothing of it was written),
   * that order answers.
   */
  async function placeOnce(
    input: PlaceOrderBody,
    principal: Principal,
    requestId: string | undefined,
    key: string,
  ): Promise<PlaceAnswer> {
    const request = keyedRequest(fingerprints, input, key)
    const earlier = await orders.findByIdempotencyKey(request.customerId, key)
    if (earlier) return replayOf(earlier, request)
    try {
      return await priceAndPlace(input, principal, requestId, request.idempotency)
    } catch (error) {
      if (!isIdempotencyKeyTaken(error)) throw error
      const winner = await orders.findByIdempotencyKey(request.customerId, key)
      if (!winner) throw error
      return replayOf(winner, request)
    }
  }

  /** Places the order, once per Idempotency-Key when the request came with one. */
  const place = (input: PlaceOrderBody, principal: Principal, request: PlaceRequest): Promise<PlaceAnswer> =>
    request.idempotencyKey === undefined
      ? priceAndPlace(input, principal, request.requestId)
      : placeOnce(input, principal, request.requestId, request.idempotencyKey)

  return {
    /**
     * Places an order for `input.customerId`: 403 unless the principal is that customer or an admin, then as
     * priceAndPlace.
     */
    async placeOrder(
      input: PlaceOrderBody,
      principal: Principal,
      request: PlaceRequest = {},
    ): Promise<PlaceAnswer> {
      assertCustomerOrAdmin(principal, input.customerId)
      return place(input, principal, request)
    },

    /**
     * Places an order for the user of the path: who the caller may act for first (another customer's path is a 403
     * whatever the body says), then a body's customerId other than `userId` is a 422.
     */
    async placeUserOrder(
      userId: string,
      input: PlaceUserOrderBody,
      principal: Principal,
      request: PlaceRequest = {},
    ): Promise<PlaceAnswer> {
      assertCustomerOrAdmin(principal, userId)
      const { customerId } = input
      if (customerId !== undefined && customerId.toLowerCase() !== userId.toLowerCase()) {
        throw AppError.validation([
          { field: 'customerId', message: 'must be the userId of the path', received: customerId },
        ])
      }
      return place({ ...input, customerId: userId }, principal, request)
    },

    async getOrder(id: string, principal: Principal): Promise<Order> {
      return presentOrder(await findVisibleOrder(id, principal))
    },

    /** One of `customerId`'s orders: 403 unless the principal is that customer or an admin; none is a 404. */
    async getCustomerOrder(customerId: string, id: string, principal: Principal): Promise<Order> {
      assertCustomerOrAdmin(principal, customerId)
      const order = await findVisibleOrder(id, principal)
      if (order.customerId !== customerId) throw AppError.notFound(`Order ${id} not found`)
      return presentOrder(order)
    },

    /**
     * A page of the customer's orders as the list envelope (403 unless the principal is that customer or an admin);
     * the links keep the path the client used.
     */
    async listCustomerOrders(
      customerId: string,
      query: UserOrderListQuery,
      path: string,
      principal: Principal,
    ): Promise<ListEnvelope<Order>> {
      assertCustomerOrAdmin(principal, customerId)
      const request = orders.listRequest({ ...query, customerId })
      const { rows, total } = await orders.list(request)
      return listEnvelope(path, query, request, rows.map(presentOrder), total)
    },

    /**
     * Cancels an order whose shipment step has not begun: its saga turns `cancelled`, the order `cancelling`, and
     * order.cancelled and the first compensation (release the stock, then refund) go out in the same transaction; the
     * order is `cancelled` once the compensations have answered. Cancelling again while it is cancelling answers the
     * same, without a second event; an order past the point of cancelling (reserved: its shipment was asked for;
     * shipped, delivered, cancelled, failed) is a 409. The order's row is locked first, as the saga's consumers lock
     * it: a cancel and the reservation that starts the shipment step commit one after the other, never both.
     */
    async cancelOrder(id: string, principal: Principal): Promise<CancelledOrder> {
      const conflict = (status: string) =>
        AppError.conflict(`Order ${id} is ${status} and can no longer be cancelled`, [
          { field: 'status', message: 'the order can no longer be cancelled', received: status },
        ])
      const status = await transaction(sql, async (tx) => {
        const order = await orders.lockById(id, tx)
        if (!order || !isCustomerOrAdmin(principal, order.customerId)) {
          throw AppError.notFound(`Order ${id} not found`)
        }
        if (order.status === 'cancelling') return order.status
        if (!isCancellable(order.status)) throw conflict(order.status)
        try {
          const decision = await saga.cancel(id, customerCancelReason, tx)
          if (!decision) throw conflict(order.status)
        } catch (error) {
          if (error instanceof ProcessConflict) throw conflict(order.status)
          throw error
        }
        return 'cancelling' as const
      })
      return { orderId: id, status, _links: { self: { href: orderHref(id), method: 'GET' } } }
    },
  }
}

export type OrderUseCases = ReturnType<typeof createOrderUseCases>
