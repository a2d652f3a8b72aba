// The notification service's environment: its own stores, the SMTP server and mail settings of @meridian/mail, and
// the e-mail sender's clock and retries.
import { mailEnv } from '@meridian/mail'
import { loadConfig, ownStoresEnv, serviceEnv } from '@meridian/service-kit'
import { type Static, Type } from 'typebox'

export const NotificationEnv = serviceEnv({
  ...ownStoresEnv({ port: 3006, database: 'notifications' }),
  ...mailEnv(),
  EMAIL_SEND_INTERVAL_MS: Type.Integer({
    minimum: 50,
    maximum: 600_000,
    default: 2000,
    description: 'how often the e-mail sender looks for mails that are due, ms',
  }),
  EMAIL_MAX_ATTEMPTS: Type.Integer({
    minimum: 1,
    maximum: 100,
    default: 12,
    description:
      'sends tried per mail before it is dead (meridian_notification_emails_total{outcome="dead"})',
  }),
  EMAIL_RETRY_BASE_MS: Type.Integer({
    minimum: 10,
    maximum: 3_600_000,
    default: 30_000,
    description: 'the wait after the first failed send, ms; doubled after each further failure',
  }),
  EMAIL_RETRY_MAX_MS: Type.Integer({
    minimum: 10,
    maximum: 86_400_000,
    default: 3_600_000,
    description: 'the longest wait between two sends of a mail, ms',
  }),
  EMAIL_BATCH_SIZE: Type.Integer({
    minimum: 1,
    maximum: 200,
    default: 10,
    description: 'mails a sender takes at once (sent over the pool of MAIL_POOL_MAX_CONNECTIONS)',
  }),
})
export type NotificationConfig = Static<typeof NotificationEnv>

export const loadNotificationConfig = (env: NodeJS.ProcessEnv = process.env): NotificationConfig =>
  loadConfig(NotificationEnv, env)
