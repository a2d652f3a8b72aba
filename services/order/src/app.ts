// The order service as a Fastify app: the chassis with its database, Redis, authentication and the event
// backbone's metrics; orders (routes/orders) priced from inventory's catalogue (clients/, found in Consul), written
// with their events through the outbox (domain/, data/); the order saga's process manager (domain/saga*.ts), fed
// by its consumers (events/consumers.ts), timed by its clock (the kit's scheduleRounds) and shown to operators
// (routes/admin-sagas). Never listens; main.ts and tests build it.
import { type Sql, tracedRepository } from '@meridian/db'
import { type AnyServiceConsumer, registerServiceEvents, type WithServiceEvents } from '@meridian/events'
import {
  createServiceApp,
  registerVersionedApi,
  type ServiceApp,
  type ServiceClient,
  type ServiceDependencies,
  scheduleRounds,
  serviceAppOptions,
} from '@meridian/service-kit'
import { Counter } from 'prom-client'
import { createInventoryCatalogue } from './clients/inventory-catalogue.ts'
import type { OrderConfig } from './config.ts'
import { createOrdersRepository } from './data/orders-repository.ts'
import { createSagasRepository } from './data/sagas-repository.ts'
import { createOrderUseCases, type OrderUseCases } from './domain/orders.ts'
import { createSagaProcess, type SagaProcess } from './domain/saga-process.ts'
import { type OrderEventType, orderConsumers } from './events/consumers.ts'
import { adminOnly, adminSagasRoutes } from './routes/admin-sagas/index.ts'
import { ordersGuards } from './routes/orders/access.ts'
import { ordersRoutes } from './routes/orders/index.ts'

export const serviceName = 'order'

export type OrderDependencies = ServiceDependencies<OrderConfig, Sql> & WithServiceEvents<OrderEventType>

/** The app, its consumers (run by its event backbone when asked for) and the clients runService closes. */
export interface OrderService {
  app: ServiceApp
  /** what the backbone runs: the saga's, one per answer it follows */
  consumers: AnyServiceConsumer[]
  orders: OrderUseCases
  saga: SagaProcess
  /** for runService's clients, closed after the app: the inventory upstream client and its Consul discovery */
  clients: ServiceClient[]
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
    consul: {
      address: config.CONSUL_HTTP_ADDR,
      ...(config.CONSUL_HTTP_TOKEN ? { token: config.CONSUL_HTTP_TOKEN } : {}),
    },
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
  const saga = createSagaProcess({
    sql,
    orders: ordersRepository,
    sagas: tracedRepository('sagas', createSagasRepository(sql)),
    timing: {
      stepTimeoutMs: config.SAGA_STEP_TIMEOUT_MS,
      stepAttempts: config.SAGA_STEP_ATTEMPTS,
      compensationBackoffMs: config.SAGA_COMPENSATION_BACKOFF_MS,
      compensationAttempts: config.SAGA_COMPENSATION_ATTEMPTS,
    },
    alerts: {
      // the saga's row stays `escalated` (GET /admin/sagas?compensation=escalated) until an operator acts
      escalated: ({ orderId, step, reason }) => {
        escalations.inc({ step: step ?? 'none' })
        app.log.error({ orderId, step, alert: 'saga-escalated' }, `saga escalated to operators: ${reason}`)
      },
    },
  })
  // the saga's clock: steps past their deadline asked again, failed or escalated (row locks: several instances may)
  scheduleRounds(app, {
    name: 'saga deadlines',
    intervalMs: config.SAGA_SWEEP_INTERVAL_MS,
    round: () => saga.fireDeadlines(),
    describe: (fired) => (fired > 0 ? { fired } : undefined),
  })
  const orders = createOrderUseCases({ orders: ordersRepository, catalogue, saga, sql })

  // also the spec's unversioned paths (/orders/{id}, /users/{userId}/orders), documented under /api/v1 only
  await registerVersionedApi(app, ordersRoutes, { orders, guards: ordersGuards(app) }, { atRoot: true })
  await registerVersionedApi(app, adminSagasRoutes, { saga, adminOnly: adminOnly(app) })

  const consumers = await registerServiceEvents(app, {
    ...dependencies,
    service: serviceName,
    consumers: (options) => orderConsumers(saga, options),
  })
  return { app, consumers, orders, saga, clients: catalogue.clients }
}
