// The notification service as a Fastify app: the chassis with its database, Redis, authentication and the event
// backbone's metrics; users' notifications (routes/notifications) made by its consumers (events/) from order.placed,
// payment.failed, shipment.created, shipment.delivered and user.registered, each with its notification.created
// through the outbox (domain/, data/). Never listens; main.ts and tests build it.
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
import type { NotificationConfig } from './config.ts'
import { createNotificationsRepository } from './data/notifications-repository.ts'
import { createOrderCustomersRepository } from './data/order-customers-repository.ts'
import { createNotificationUseCases, type NotificationUseCases } from './domain/notifications.ts'
import { notificationConsumers } from './events/consumers.ts'
import { notificationsGuards } from './routes/notifications/access.ts'
import { notificationsRoutes } from './routes/notifications/index.ts'

export const serviceName = 'notification'

export type NotificationDependencies = ServiceDependencies<NotificationConfig, Sql>

/** The app and what main.ts hands to the event backbone, built from the repositories and their use cases. */
export interface NotificationService {
  app: ServiceApp
  /** for eventsPlugin: the five event types that make notifications */
  consumers: AnyServiceConsumer[]
  notifications: NotificationUseCases
}

export async function buildApp({
  config,
  sql,
  redis,
  logStream,
}: NotificationDependencies): Promise<NotificationService> {
  const app = await createServiceApp({
    ...chassisOptions(config, redis),
    name: serviceName,
    description: "Users' notifications, made from domain events",
    database: chassisDatabase(sql),
    // bearer tokens (auth's JWKS) and auth's cookie sessions, with auth's revocations followed at once
    authentication: authOptionsFromEnv(config, { sessions: { redis }, revocations: { redis } }),
    ...(logStream ? { logStream } : {}),
  })
  // outbox lag, published, consumed, retries and dead letters on /metrics
  createEventMetrics(app.metrics.registry)

  const notifications = createNotificationUseCases({
    notifications: createNotificationsRepository(sql),
    orderCustomers: createOrderCustomersRepository(sql),
  })

  await registerVersionedApi(app, notificationsRoutes, { notifications, guards: notificationsGuards(app) })

  return { app, consumers: notificationConsumers(notifications), notifications }
}
