// The order service's environment.
import { toMinorUnits } from '@meridian/contracts'
import {
  ConfigError,
  idempotencySecretVariable,
  loadConfig,
  namedCarrierKeysVariable,
  ownStoresEnv,
  serviceEnv,
} from '@meridian/service-kit'
import { type Static, Type } from 'typebox'

export const OrderEnv = serviceEnv({
  ...ownStoresEnv({ port: 3002, database: 'orders' }),
  /** the Consul name of the catalogue that prices orders (tests point it at a stand-in of their own) */
  INVENTORY_SERVICE_NAME: Type.String({ minLength: 1, default: 'inventory' }),
  /** how long a request waits for the first list of inventory instances from Consul, ms */
  INVENTORY_DISCOVERY_WAIT_MS: Type.Integer({ minimum: 1, maximum: 60_000, default: 3000 }),
  /** how long a saga step (payment, inventory, shipment) may take before it is asked again, ms */
  SAGA_STEP_TIMEOUT_MS: Type.Integer({ minimum: 100, maximum: 3_600_000, default: 30_000 }),
  /** attempts of a saga step before the saga fails and its compensations run */
  SAGA_STEP_ATTEMPTS: Type.Integer({ minimum: 1, maximum: 100, default: 3 }),
  /** a compensation's first wait for its answer, ms; doubled for each further attempt */
  SAGA_COMPENSATION_BACKOFF_MS: Type.Integer({ minimum: 100, maximum: 3_600_000, default: 5000 }),
  /** attempts of a compensation before it is escalated to operators */
  SAGA_COMPENSATION_ATTEMPTS: Type.Integer({ minimum: 1, maximum: 100, default: 5 }),
  /** how often the saga's clock looks for steps past their deadline, ms */
  SAGA_SWEEP_INTERVAL_MS: Type.Integer({ minimum: 10, maximum: 60_000, default: 1000 }),
  /**
   * how long a return's or an exchange's step (restock, refund; an exchange's reservation, charge and shipment too) may
   * go unanswered before it is asked again, ms (doubled each attempt)
   */
  RETURN_STEP_TIMEOUT_MS: Type.Integer({ minimum: 100, maximum: 3_600_000, default: 30_000 }),
  /**
   * attempts of such a step before it is escalated to operators (an exchange's reservation and charge: before the
   * exchange fails and what it did is undone)
   */
  RETURN_STEP_ATTEMPTS: Type.Integer({ minimum: 1, maximum: 100, default: 5 }),
  /** how long an exchange waits for its returned goods before operators are told, ms (default 14 days) */
  EXCHANGE_RECEIPT_WAIT_MS: Type.Integer({ minimum: 100, maximum: 2_592_000_000, default: 1_209_600_000 }),
  /**
   * carriers' names and keys (`name=key`, comma-separated): a carrier's key may mark received (POST
   * /returns/{id}/receive with X-Carrier-Key) only the returns that name that carrier
   */
  RETURNS_CARRIER_KEYS: namedCarrierKeysVariable('mark received the returns that go back with them'),
  /**
   * the largest total a customer whose address is not verified (their token's `email_verified` is false) may order
   * for themself, in dollars; 0: no order at all; unset: no limit (issue 44, point 5)
   */
  UNVERIFIED_CUSTOMER_ORDER_LIMIT: Type.Optional(Type.Number({ minimum: 0, maximum: 10_000_000 })),
  /**
   * back-pressure on new orders: how long an order may take from placed to shipped when the system is busy, ms. The
   * orders in flight admitted are what the recent shipping rate carries in that time (at least
   * ORDER_ADMISSION_MIN_IN_FLIGHT); a new order beyond them is answered 503 with Retry-After. Unset: every order is
   * admitted, however long the queue
   */
  ORDER_ADMISSION_TARGET_MS: Type.Optional(Type.Integer({ minimum: 50, maximum: 600_000 })),
  /** the fewest orders in flight admitted, whatever the rate (a burst on a quiet system) */
  ORDER_ADMISSION_MIN_IN_FLIGHT: Type.Integer({ minimum: 1, maximum: 100_000, default: 16 }),
  /** the window the shipping rate is measured over, ms (and how often the load is read: a twentieth of it) */
  ORDER_ADMISSION_WINDOW_MS: Type.Integer({ minimum: 1000, maximum: 600_000, default: 5000 }),
  /** the secret placing requests' fingerprints are keyed by (service-kit's idempotencySecretVariable) */
  IDEMPOTENCY_SECRET: idempotencySecretVariable(),
})
export type OrderConfig = Static<typeof OrderEnv>

export function loadOrderConfig(env: NodeJS.ProcessEnv = process.env): OrderConfig {
  const config = loadConfig(OrderEnv, env)
  unverifiedOrderLimitOf(config)
  return config
}

/**
 * UNVERIFIED_CUSTOMER_ORDER_LIMIT in cents, as the order use cases take it (nothing when unset); an amount that is no
 * Money (more than two decimals) is refused at start.
 */
export function unverifiedOrderLimitOf(config: Pick<OrderConfig, 'UNVERIFIED_CUSTOMER_ORDER_LIMIT'>): {
  unverifiedOrderLimitCents?: number
} {
  const limit = config.UNVERIFIED_CUSTOMER_ORDER_LIMIT
  if (limit === undefined) return {}
  const cents = toMinorUnits(limit)
  if (cents === undefined) {
    throw new ConfigError([
      `UNVERIFIED_CUSTOMER_ORDER_LIMIT: an amount with at most two decimals (got '${String(limit)}')`,
    ])
  }
  return { unverifiedOrderLimitCents: cents }
}
