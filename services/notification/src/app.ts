// The notification service as a Fastify app: the chassis with its database, Redis, authentication and the event
// backbone's metrics; users' notifications (routes/notifications) made by its consumers (events/) from order.placed,
// payment.failed, shipment.created, shipment.delivered, return.* and user.registered, each reaching its user by the
// channels their preferences (routes/notification-preferences) leave on: the list, notification.created through the
// outbox, and a mail row that the e-mail sender (domain/email-sender.ts, on the kit's clock) sends over SMTP; a mail
// given up is a dead letter on notification.email_requested.dlt, whose replay the consumers turn into a retry. The
// user events keep each user's address. Never listens; main.ts and tests build it.
import { type Sql, tracedRepository } from '@meridian/db'
import { type AnyServiceConsumer, registerServiceEvents, type WithServiceEvents } from '@meridian/events'
import { type StoredMailSender, scheduleStoredMailSender, unsubscribeTokens } from '@meridian/mail'
import {
  createServiceApp,
  registerAuditTrail,
  registerVersionedApi,
  type ServiceApp,
  type ServiceDependencies,
  serviceAppOptions,
} from '@meridian/service-kit'
import type { NotificationConfig } from './config.ts'
import { createEmailDeliveriesRepository } from './data/email-deliveries-repository.ts'
import { createNotificationsRepository } from './data/notifications-repository.ts'
import { createOrderCustomersRepository } from './data/order-customers-repository.ts'
import { createPreferencesRepository } from './data/preferences-repository.ts'
import { createUserAddressesRepository } from './data/user-addresses-repository.ts'
import { createEmailDeadLetters, type EmailDeadLetters } from './domain/email-dead-letters.ts'
import { emailsToSend } from './domain/email-sender.ts'
import { createNotificationUseCases, type NotificationUseCases } from './domain/notifications.ts'
import { createPreferenceUseCases, type PreferenceUseCases } from './domain/preferences.ts'
import { createUserAddressUseCases } from './domain/user-addresses.ts'
import {
  type NotificationConsumerUseCases,
  type NotificationEventType,
  notificationConsumers,
} from './events/consumers.ts'
import { notificationPreferencesRoutes } from './routes/notification-preferences/index.ts'
import { notificationsGuards } from './routes/notifications/access.ts'
import { notificationsRoutes } from './routes/notifications/index.ts'
import { unsubscribeRoutes } from './routes/notifications/unsubscribe.ts'

export const serviceName = 'notification'

export type NotificationDependencies = ServiceDependencies<NotificationConfig, Sql> &
  WithServiceEvents<NotificationEventType>

/** The app and its consumers (run by its backbone when asked for), built from the repositories and their use cases. */
export interface NotificationService {
  app: ServiceApp
  /** what the backbone runs: the event types that make notifications, and the user events that keep addresses */
  consumers: AnyServiceConsumer[]
  notifications: NotificationUseCases
  /** what the consumers call (notifications, and the users' addresses) */
  consumerUseCases: NotificationConsumerUseCases
  preferences: PreferenceUseCases
  /** the e-mail channel's sender (its rounds run on the app's clock; tests may run one at will) */
  emailSender: StoredMailSender
}

/** The e-mail sender, its SMTP pool and its metric, on the app's clock (@meridian/mail's stored-mail sender). */
function startEmailSender(
  app: ServiceApp,
  config: NotificationConfig,
  sql: Sql,
  deadLetters: EmailDeadLetters,
): StoredMailSender {
  return scheduleStoredMailSender(app, config, {
    mails: emailsToSend({
      deliveries: tracedRepository('email_deliveries', createEmailDeliveriesRepository(sql)),
      deadLetters,
      tokens: unsubscribeTokens(config.UNSUBSCRIBE_SECRET),
      settings: {
        from: config.MAIL_FROM,
        unsubscribeUrl: config.UNSUBSCRIBE_URL,
        unsubscribeMailto: config.UNSUBSCRIBE_MAILTO,
      },
    }),
    metric: {
      name: 'meridian_notification_emails_total',
      help: 'notification e-mails by outcome: sent, retried (a send failed; due again later) or dead (given up)',
    },
  })
}

export async function buildApp(dependencies: NotificationDependencies): Promise<NotificationService> {
  const { sql, config } = dependencies
  const app = await createServiceApp(
    serviceAppOptions(dependencies, {
      name: serviceName,
      description: "Users' notifications, made from domain events",
    }),
  )

  const notifications = createNotificationUseCases({
    notifications: tracedRepository('notifications', createNotificationsRepository(sql)),
    orderCustomers: tracedRepository('order_customers', createOrderCustomersRepository()),
    deliveries: tracedRepository('email_deliveries', createEmailDeliveriesRepository(sql)),
  })
  const addresses = createUserAddressUseCases(
    tracedRepository('user_addresses', createUserAddressesRepository(sql)),
  )
  const emailDeadLetters = createEmailDeadLetters({
    sql,
    deliveries: tracedRepository('email_deliveries', createEmailDeliveriesRepository(sql)),
  })
  const consumerUseCases = { notifications, addresses, emails: emailDeadLetters }
  const preferences = createPreferenceUseCases(
    tracedRepository('notification_preferences', createPreferencesRepository(sql)),
    unsubscribeTokens(config.UNSUBSCRIBE_SECRET),
  )

  const emailSender = startEmailSender(app, config, sql, emailDeadLetters)

  // its audit trail, for admins at /api/v1/admin/audit/<service> (service-kit's audit/)
  await registerAuditTrail(app, { sql, service: serviceName })
  const guards = notificationsGuards(app)
  await registerVersionedApi(app, notificationsRoutes, { notifications, guards })
  await registerVersionedApi(app, notificationPreferencesRoutes, { preferences, guards })
  await registerVersionedApi(app, unsubscribeRoutes, { preferences })

  const consumers = await registerServiceEvents(app, {
    ...dependencies,
    service: serviceName,
    consumers: (options) => notificationConsumers(consumerUseCases, options),
  })
  return { app, consumers, notifications, consumerUseCases, preferences, emailSender }
}
