// The shipping service as a Fastify app: the chassis with its database, Redis, authentication and the event
// backbone's metrics; shipments (routes/shipments) created by its consumer (events/) of the saga's
// shipment.requested, and delivered by admins or carriers, every change with its event through the outbox
// (domain/, data/). Never listens; main.ts and tests build it.
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
import { carrierKeysOf, type ShippingConfig } from './config.ts'
import { createShipmentsRepository } from './data/shipments-repository.ts'
import { createShipmentUseCases, type ShipmentUseCases } from './domain/shipments.ts'
import { type ShippingEventType, shippingConsumers } from './events/consumers.ts'
import { shipmentsGuards } from './routes/shipments/access.ts'
import { shipmentsRoutes } from './routes/shipments/index.ts'

export const serviceName = 'shipping'

export type ShippingDependencies = ServiceDependencies<ShippingConfig, Sql> &
  WithServiceEvents<ShippingEventType>

/** The app and its consumers (run by its backbone when asked for), built from one repository and its use cases. */
export interface ShippingService {
  app: ServiceApp
  /** what the backbone runs: shipment.requested creates the order's shipment */
  consumers: AnyServiceConsumer[]
  shipments: ShipmentUseCases
}

export async function buildApp(dependencies: ShippingDependencies): Promise<ShippingService> {
  const { config, sql } = dependencies
  const app = await createServiceApp(
    serviceAppOptions(dependencies, { name: serviceName, description: 'Shipments and their delivery' }),
  )

  const shipments = createShipmentUseCases({
    shipments: tracedRepository('shipments', createShipmentsRepository(sql)),
    sql,
  })

  // its audit trail, for admins at /api/v1/admin/audit/<service> (service-kit's audit/)
  await registerAuditTrail(app, { sql, service: serviceName })
  await registerVersionedApi(app, shipmentsRoutes, {
    shipments,
    guards: shipmentsGuards(app, carrierKeysOf(config)),
  })

  const consumers = await registerServiceEvents(app, {
    ...dependencies,
    service: serviceName,
    consumers: (options) => shippingConsumers(shipments, options),
  })
  return { app, consumers, shipments }
}
