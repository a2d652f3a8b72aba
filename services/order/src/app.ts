// The order service as a Fastify app: the chassis with its database, Redis, authentication and the event
// backbone's metrics; orders (routes/orders) priced from inventory's catalogue (clients/, found in Consul), written
// with their events through the outbox (domain/, data/); the order saga's process manager (domain/saga*.ts), fed
// by its consumers (events/consumers.ts), timed by its clock (the kit's scheduleRounds) and shown to operators
// (routes/admin-sagas). Never listens; main.ts and tests build it.
import { type Sql, tracedRepository } from '@meridian/db'
import { type AnyServiceConsumer, registerServiceEvents, type WithServiceEvents } from '@meridian/events'
import { createProcessStore, type ProcessManager, registerProcesses } from '@meridian/process'
import {
  consulOptionsFromEnv,
  createServiceApp,
  namedCarrierKeysIn,
  registerAuditTrail,
  registerVersionedApi,
  type ServiceApp,
  type ServiceClient,
  type ServiceDependencies,
  scheduleRounds,
  serviceAppOptions,
} from '@meridian/service-kit'
import { Counter } from 'prom-client'
import { createInventoryCatalogue } from './clients/inventory-catalogue.ts'
import { type OrderConfig, unverifiedOrderLimitOf } from './config.ts'
import { createExchangesRepository } from './data/exchanges-repository.ts'
import { createOrdersRepository } from './data/orders-repository.ts'
import { createReturnsRepository } from './data/returns-repository.ts'
import { readSagaLoad } from './data/saga-load.ts'
import { type Admission, createAdmission } from './domain/admission.ts'
import { exchangeProcess } from './domain/exchange-process.ts'
import { createExchangeUseCases, type ExchangeUseCases } from './domain/exchanges.ts'
import { createOrderUseCases, type OrderUseCases, orderFingerprints } from './domain/orders.ts'
import { returnProcess } from './domain/return-process.ts'
import { createReturnUseCases, type ReturnUseCases } from './domain/returns.ts'
import { createSagaFacade, type SagaFacade } from './domain/saga-facade.ts'
import { orderProcess, orderProcessType } from './domain/saga-process.ts'
import { type OrderEventType, orderConsumers } from './events/consumers.ts'
import { adminOnly, adminSagasRoutes } from './routes/admin-sagas/index.ts'
import { exchangesRoutes } from './routes/exchanges/index.ts'
import { ordersGuards } from './routes/orders/access.ts'
import { ordersRoutes } from './routes/orders/index.ts'
import { returnsGuards } from './routes/returns/access.ts'
import { returnsRoutes } from './routes/returns/index.ts'

export const serviceName = 'order'

export type OrderDependencies = ServiceDependencies<OrderConfig, Sql> & WithServiceEvents<OrderEventType>

/** The app, its consumers (run by its event backbone when asked for) and the clients runService closes. */
export interface OrderService {
  app: ServiceApp
  /** what the backbone runs: the saga's, one per answer it follows */
  consumers: AnyServiceConsumer[]
  orders: OrderUseCases
  saga: SagaFacade
  returns: ReturnUseCases
  exchanges: ExchangeUseCases
  /** the process module's manager: the order saga, returns and exchanges */
  processes: ProcessManager
  /** for runService's clients, closed after the app: the inventory upstream client and its Consul discovery */
  clients: ServiceClient[]
}

/**
 * Back-pressure on new orders when ORDER_ADMISSION_TARGET_MS is set (domain/admission.ts): the sagas' load read every
 * twentieth of the window on the app's clock, and the orders refused counted.
 */
function orderAdmission(app: ServiceApp, config: OrderConfig, sql: Sql): Admission | undefined {
  const targetMs = config.ORDER_ADMISSION_TARGET_MS
  if (targetMs === undefined) return undefined
  const refused = new Counter({
    name: 'meridian_orders_refused_total',
    help: 'new orders answered 503 by the admission of orders (ORDER_ADMISSION_TARGET_MS): too many in flight',
    registers: [app.metrics.registry],
  })
  const windowMs = config.ORDER_ADMISSION_WINDOW_MS
  const admission = createAdmission(
    { targetMs, minInFlight: config.ORDER_ADMISSION_MIN_IN_FLIGHT, windowMs },
    () => readSagaLoad(sql, windowMs),
    () => refused.inc(),
  )
  scheduleRounds(app, {
    name: 'order admission',
    intervalMs: Math.max(50, Math.round(windowMs / 20)),
    round: () => admission.refresh(),
    // at debug: what each round read, and the limit it gives
    describe: (load) => ({ ...load }),
  })
  return admission
}

export async function buildApp(dependencies: OrderDependencies): Promise<OrderService> {
  const { config, sql } = dependencies
  const app = await createServiceApp(
    serviceAppOptions(dependencies, {
      name: serviceName,
      description: "Orders with their hypermedia links, and the order saga's process manager",
    }),
  )

  // the catalogue prices every order: inventory's internal lookup, a healthy instance found in Consul
  const catalogue = createInventoryCatalogue({
    consul: consulOptionsFromEnv(config),
    serviceName: config.INVENTORY_SERVICE_NAME,
    logger: app.log,
    discoveryWaitMs: config.INVENTORY_DISCOVERY_WAIT_MS,
    serviceCredential: config.SERVICE_CREDENTIAL,
  })
  const ordersRepository = tracedRepository('orders', createOrdersRepository(sql))
  const escalations = new Counter({
    name: 'meridian_saga_escalations_total',
    help: 'saga compensations (or late shipments) escalated to operators, by step',
    labelNames: ['step'] as const,
    registers: [app.metrics.registry],
  })
  const timing = {
    stepTimeoutMs: config.SAGA_STEP_TIMEOUT_MS,
    stepAttempts: config.SAGA_STEP_ATTEMPTS,
    compensationBackoffMs: config.SAGA_COMPENSATION_BACKOFF_MS,
    compensationAttempts: config.SAGA_COMPENSATION_ATTEMPTS,
  }
  const exchangeTiming = {
    stepTimeoutMs: config.RETURN_STEP_TIMEOUT_MS,
    stepAttempts: config.RETURN_STEP_ATTEMPTS,
    receiptWaitMs: config.EXCHANGE_RECEIPT_WAIT_MS,
  }
  // the order saga, returns and exchanges on the process module: its manager, its clock (row locks: several instances may run
  // it), its escalations counted and logged, and the operators' /admin/processes
  const processes = await registerProcesses(app, {
    sql,
    processes: [
      orderProcess(timing),
      returnProcess({
        stepTimeoutMs: config.RETURN_STEP_TIMEOUT_MS,
        stepAttempts: config.RETURN_STEP_ATTEMPTS,
      }),
      exchangeProcess(exchangeTiming),
    ],
    sweepIntervalMs: config.SAGA_SWEEP_INTERVAL_MS,
    adminOnly: adminOnly(app),
    store: tracedRepository('processes', createProcessStore(sql)),
    alerts: {
      // the saga's own counter (its dashboard and alert read it); the saga stays escalated until an operator acts
      escalated: ({ type, step }) => {
        if (type === orderProcessType) escalations.inc({ step: step ?? 'none' })
      },
    },
  })
  const saga = createSagaFacade({
    orders: ordersRepository,
    timing,
    processes,
  })
  const admission = orderAdmission(app, config, sql)
  const orders = createOrderUseCases({
    orders: ordersRepository,
    catalogue,
    saga,
    sql,
    fingerprints: orderFingerprints(config.IDEMPOTENCY_SECRET),
    ...unverifiedOrderLimitOf(config),
    ...(admission ? { admission } : {}),
  })
  const carrierKeys = namedCarrierKeysIn(config.RETURNS_CARRIER_KEYS)
  const returnsRepository = tracedRepository('returns', createReturnsRepository(sql))
  const returns = createReturnUseCases({
    sql,
    orders: ordersRepository,
    returns: returnsRepository,
    processes,
    carriers: [...new Set(carrierKeys.map(({ carrier }) => carrier))],
  })

  const exchanges = createExchangeUseCases({
    sql,
    orders: ordersRepository,
    returns: returnsRepository,
    exchanges: tracedRepository('exchanges', createExchangesRepository(sql)),
    catalogue,
    processes,
    timing: exchangeTiming,
  })

  // also the spec's unversioned paths (/orders/{id}, /users/{userId}/orders), documented under /api/v1 only
  // its audit trail, for admins at /api/v1/admin/audit/<service> (service-kit's audit/)
  await registerAuditTrail(app, { sql, service: serviceName })
  await registerVersionedApi(app, ordersRoutes, { orders, guards: ordersGuards(app) }, { atRoot: true })
  await registerVersionedApi(app, adminSagasRoutes, { saga, adminOnly: adminOnly(app) })
  const guards = returnsGuards(app, carrierKeys)
  await registerVersionedApi(app, returnsRoutes, { returns, guards })
  await registerVersionedApi(app, exchangesRoutes, { exchanges, guards })

  const consumers = await registerServiceEvents(app, {
    ...dependencies,
    service: serviceName,
    consumers: (options) => orderConsumers(processes, options),
  })
  return { app, consumers, orders, saga, returns, exchanges, processes, clients: catalogue.clients }
}
