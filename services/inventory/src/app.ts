// The inventory service as a Fastify app: the chassis with its database, Redis, authentication and the event
// backbone's metrics; the product catalogue (routes/products), the internal lookup (routes/internal), and the
// reservation and restock use cases its consumers call (events/). Never listens; main.ts and tests build it.
import { type Sql, tracedRepository } from '@meridian/db'
import { type AnyServiceConsumer, registerServiceEvents, type WithServiceEvents } from '@meridian/events'
import {
  createServiceApp,
  registerAuditTrail,
  registerVersionedApi,
  type ServiceApp,
  type ServiceDependencies,
  serviceAppOptions,
} from '@meridian/service-kit'
import type { InventoryConfig } from './config.ts'
import { createProductsRepository } from './data/products-repository.ts'
import { createReservationsRepository } from './data/reservations-repository.ts'
import { createRestocksRepository } from './data/restocks-repository.ts'
import { createProductUseCases, type ProductUseCases } from './domain/products.ts'
import { createReservationUseCases, type ReservationUseCases } from './domain/reservations.ts'
import { createRestockUseCases, type RestockUseCases } from './domain/restocks.ts'
import { type InventoryEventType, inventoryConsumers } from './events/consumers.ts'
import { internalRoutes } from './routes/internal/index.ts'
import { productsGuards } from './routes/products/access.ts'
import { productsRoutes } from './routes/products/index.ts'

export const serviceName = 'inventory'

export type InventoryDependencies = ServiceDependencies<InventoryConfig, Sql> &
  WithServiceEvents<InventoryEventType>

/** The app and its consumers (run by its backbone when asked for), built from one set of repositories and use cases. */
export interface InventoryService {
  app: ServiceApp
  /**
   * what the backbone runs: payment.processed and inventory.reservation_requested reserve, inventory.release_requested
   * releases, shipment.created ships, inventory.restock_requested(.v2) restocks
   */
  consumers: AnyServiceConsumer[]
  products: ProductUseCases
  reservations: ReservationUseCases
  restocks: RestockUseCases
}

export async function buildApp(dependencies: InventoryDependencies): Promise<InventoryService> {
  const { sql } = dependencies
  const app = await createServiceApp(
    serviceAppOptions(dependencies, {
      name: serviceName,
      description: 'Products and stock, reservations and their release',
    }),
  )

  const productsRepository = tracedRepository('products', createProductsRepository(sql))
  const products = createProductUseCases(productsRepository, sql)
  const reservations = createReservationUseCases({
    reservations: tracedRepository('reservations', createReservationsRepository(sql)),
  })
  const restocks = createRestockUseCases({
    restocks: tracedRepository('restocks', createRestocksRepository(sql)),
  })

  // its audit trail, for admins at /api/v1/admin/audit/<service> (service-kit's audit/)
  await registerAuditTrail(app, { sql, service: serviceName })
  await registerVersionedApi(app, productsRoutes, { products, guards: productsGuards(app) })
  // for the other services: products by id (not routed by the gateway)
  await app.register(internalRoutes, { products })

  const consumers = await registerServiceEvents(app, {
    ...dependencies,
    service: serviceName,
    consumers: (options) => inventoryConsumers({ reservations, restocks }, options),
  })
  return { app, consumers, products, reservations, restocks }
}
