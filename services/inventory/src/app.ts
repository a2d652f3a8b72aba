// The inventory service as a Fastify app: the chassis with its database, Redis, authentication and the event
// backbone's metrics; the product catalogue (routes/products), the internal lookup (routes/internal), and the
// reservation use cases its consumers call (events/). Never listens; main.ts and tests build it.
import type { Sql } from '@meridian/db'
import { chassisDatabase } from '@meridian/db'
import { type AnyServiceConsumer, createEventMetrics } from '@meridian/events'
import {
  authOptionsFromEnv,
  chassisOptions,
  createServiceApp,
  registerVersionedApi,
  type ServiceApp,
  type ServiceDependencies,
} from '@meridian/service-kit'
import type { InventoryConfig } from './config.ts'
import { createProductsRepository } from './data/products-repository.ts'
import { createReservationsRepository } from './data/reservations-repository.ts'
import { createProductUseCases, type ProductUseCases } from './domain/products.ts'
import { createReservationUseCases, type ReservationUseCases } from './domain/reservations.ts'
import { inventoryConsumers } from './events/consumers.ts'
import { internalRoutes } from './routes/internal/index.ts'
import { productsGuards } from './routes/products/access.ts'
import { productsRoutes } from './routes/products/index.ts'

export const serviceName = 'inventory'

export type InventoryDependencies = ServiceDependencies<InventoryConfig, Sql>

/** The app and what main.ts hands to the event backbone, built from one set of repositories and use cases. */
export interface InventoryService {
  app: ServiceApp
  /**
   * for eventsPlugin: payment.processed and inventory.reservation_requested reserve, inventory.release_requested
   * releases, shipment.created ships
   */
  consumers: AnyServiceConsumer[]
  products: ProductUseCases
  reservations: ReservationUseCases
}

export async function buildApp({
  config,
  sql,
  redis,
  logStream,
}: InventoryDependencies): Promise<InventoryService> {
  const app = await createServiceApp({
    ...chassisOptions(config, redis),
    name: serviceName,
    description: 'Products and stock, reservations and their release',
    database: chassisDatabase(sql),
    // bearer tokens (auth's JWKS) and auth's cookie sessions, with auth's revocations followed at once
    authentication: authOptionsFromEnv(config, { sessions: { redis }, revocations: { redis } }),
    ...(logStream ? { logStream } : {}),
  })
  // outbox lag, published, consumed, retries and dead letters on /metrics
  createEventMetrics(app.metrics.registry)

  const productsRepository = createProductsRepository(sql)
  const products = createProductUseCases(productsRepository, sql)
  const reservations = createReservationUseCases({
    products: productsRepository,
    reservations: createReservationsRepository(sql),
  })

  await registerVersionedApi(app, productsRoutes, { products, guards: productsGuards(app) })
  // for the other services: products by id (not routed by the gateway)
  await app.register(internalRoutes, { products })

  return { app, consumers: inventoryConsumers(reservations), products, reservations }
}
