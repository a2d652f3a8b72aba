// The notification service's environment: its own stores, the SMTP server and mail settings of @meridian/mail, and
// the e-mail sender's clock and retries.
import { mailEnv, mailSenderEnv } from '@meridian/mail'
import { loadConfig, ownStoresEnv, serviceEnv } from '@meridian/service-kit'
import type { Static } from 'typebox'

export const NotificationEnv = serviceEnv({
  ...ownStoresEnv({ port: 3006, database: 'notifications' }),
  ...mailEnv(),
  ...mailSenderEnv('e-mail sender', 'meridian_notification_emails_total'),
})
export type NotificationConfig = Static<typeof NotificationEnv>

export const loadNotificationConfig = (env: NodeJS.ProcessEnv = process.env): NotificationConfig =>
  loadConfig(NotificationEnv, env)
