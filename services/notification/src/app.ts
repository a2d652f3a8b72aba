// The notification service as a Fastify app: the chassis with its database, Redis, authentication and the event
// backbone's metrics; users' notifications (routes/notifications) made by its consumers (events/) from order.placed,
// payment.failed, shipment.created, shipment.delivered, return.* and user.registered, each with its
// notification.created through the outbox (domain/, data/). Never listens; main.ts and tests build it.
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
import type { NotificationConfig } from './config.ts'
import { createNotificationsRepository } from './data/notifications-repository.ts'
import { createOrderCustomersRepository } from './data/order-customers-repository.ts'
import { createNotificationUseCases, type NotificationUseCases } from './domain/notifications.ts'
import { type NotificationEventType, notificationConsumers } from './events/consumers.ts'
import { notificationsGuards } from './routes/notifications/access.ts'
import { notificationsRoutes } from './routes/notifications/index.ts'

export const serviceName = 'notification'

export type NotificationDependencies = ServiceDependencies<NotificationConfig, Sql> &
  WithServiceEvents<NotificationEventType>

/** The app and its consumers (run by its backbone when asked for), built from the repositories and their use cases. */
export interface NotificationService {
  app: ServiceApp
  /** what the backbone runs: the five event types that make notifications */
  consumers: AnyServiceConsumer[]
  notifications: NotificationUseCases
}

export async function buildApp(dependencies: NotificationDependencies): Promise<NotificationService> {
  const { sql } = dependencies
  const app = await createServiceApp(
    serviceAppOptions(dependencies, {
      name: serviceName,
      description: "Users' notifications, made from domain events",
    }),
  )

  const notifications = createNotificationUseCases({
    notifications: tracedRepository('notifications', createNotificationsRepository(sql)),
    orderCustomers: tracedRepository('order_customers', createOrderCustomersRepository()),
  })

  // its audit trail, for admins at /api/v1/admin/audit/<service> (service-kit's audit/)
  await registerAuditTrail(app, { sql, service: serviceName })
  await registerVersionedApi(app, notificationsRoutes, { notifications, guards: notificationsGuards(app) })

  const consumers = await registerServiceEvents(app, {
    ...dependencies,
    service: serviceName,
    consumers: (options) => notificationConsumers(notifications, options),
  })
  return { app, consumers, notifications }
}
