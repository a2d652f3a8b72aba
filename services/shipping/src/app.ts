// The shipping service as a Fastify app: the chassis with its database, Redis, authentication and the event
// backbone's metrics; shipments (routes/shipments) created by its consumer (events/) of the saga's
// shipment.requested, and delivered by admins or carriers, every change with its event through the outbox
// (domain/, data/). Never listens; main.ts and tests build it.
import { chassisDatabase, type Sql } from '@meridian/db'
import { type AnyServiceConsumer, createEventMetrics } from '@meridian/events'
import {
  authOptionsFromEnv,
  chassisOptions,
  createServiceApp,
  registerVersionedApi,
  type ServiceApp,
  type ServiceDependencies,
} from '@meridian/service-kit'
import { carrierKeysOf, type ShippingConfig } from './config.ts'
import { createShipmentsRepository } from './data/shipments-repository.ts'
import { createShipmentUseCases, type ShipmentUseCases } from './domain/shipments.ts'
import { shippingConsumers } from './events/consumers.ts'
import { shipmentsGuards } from './routes/shipments/access.ts'
import { shipmentsRoutes } from './routes/shipments/index.ts'

export const serviceName = 'shipping'

export type ShippingDependencies = ServiceDependencies<ShippingConfig, Sql>

/** The app and what main.ts hands to the event backbone, built from one repository and its use cases. */
export interface ShippingService {
  app: ServiceApp
  /** for eventsPlugin: shipment.requested creates the order's shipment */
  consumers: AnyServiceConsumer[]
  shipments: ShipmentUseCases
}

export async function buildApp({
  config,
  sql,
  redis,
  logStream,
}: ShippingDependencies): Promise<ShippingService> {
  const app = await createServiceApp({
    ...chassisOptions(config, redis),
    name: serviceName,
    description: 'Shipments and their delivery',
    database: chassisDatabase(sql),
    // bearer tokens (auth's JWKS) and auth's cookie sessions, with auth's revocations followed at once
    authentication: authOptionsFromEnv(config, { sessions: { redis }, revocations: { redis } }),
    ...(logStream ? { logStream } : {}),
  })
  // outbox lag, published, consumed, retries and dead letters on /metrics
  createEventMetrics(app.metrics.registry)

  const shipments = createShipmentUseCases({ shipments: createShipmentsRepository(sql), sql })

  await registerVersionedApi(app, shipmentsRoutes, {
    shipments,
    guards: shipmentsGuards(app, carrierKeysOf(config)),
  })

  return { app, consumers: shippingConsumers(shipments), shipments }
}
