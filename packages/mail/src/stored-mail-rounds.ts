// A stored-mail sender wired into a service, in one call (auth's security mails, notification's e-mails): its SMTP pool
// (closed with the app) and settings from the service's configuration (mailSenderEnv and smtpEnv), its outcomes counted in the service's metric
// (`<metric>{outcome="sent"|"retried"|"dead"}`), its failures in the app's log, and a round every
// EMAIL_SEND_INTERVAL_MS in every instance on the kit's clock (scheduleRounds: started when the app is ready, stopped
// before it closes). Several instances run it at once: each takes its own rows under a lease.
import { type ServiceApp, scheduleRounds } from '@meridian/service-kit'
import { Counter } from 'prom-client'
import type { MailSenderConfig } from './config.ts'
import {
  createStoredMailSender,
  type StoredMailSender,
  type StoredMailSettings,
  type StoredMails,
} from './stored-mail-sender.ts'
import { createMailer, type MailTransportConfig } from './transport.ts'

export type StoredMailConfig = MailSenderConfig & MailTransportConfig

/** The sender's settings from configuration; its lease outlasts a batch's sends over the pool's connections. */
export function storedMailSettings(config: StoredMailConfig): StoredMailSettings {
  const sendsPerConnection = Math.ceil(config.EMAIL_BATCH_SIZE / config.MAIL_POOL_MAX_CONNECTIONS)
  return {
    batchSize: config.EMAIL_BATCH_SIZE,
    // a send takes at most MAIL_SEND_TIMEOUT_MS; a batch's sends share the pool's connections
    leaseMs: config.MAIL_SEND_TIMEOUT_MS * sendsPerConnection + 30_000,
    maxAttempts: config.EMAIL_MAX_ATTEMPTS,
    retryBaseMs: config.EMAIL_RETRY_BASE_MS,
    retryMaxMs: config.EMAIL_RETRY_MAX_MS,
    retentionDays: config.MAIL_RETENTION_DAYS,
    // a delete of at most 500 rows at a time: short transactions, however many are past their retention
    removeBatchSize: 500,
  }
}

export interface StoredMailRoundsOptions<Due extends { attempts: number }, Extra extends object> {
  mails: StoredMails<Due, Extra>
  /** the counter of the mails' outcomes, labelled `outcome` */
  metric: { name: string; help: string }
}

/** Counts, logs and schedules a stored-mail sender on `app`; its rounds may also be run at will (tests). */
export function scheduleStoredMailSender<Due extends { attempts: number }, Extra extends object = object>(
  app: ServiceApp,
  config: StoredMailConfig,
  { mails, metric }: StoredMailRoundsOptions<Due, Extra>,
): StoredMailSender<Extra> {
  const mailer = createMailer(config)
  // registered before the clock's hook, so run after it (last in, first out): a round in progress ends first
  app.addHook('onClose', async () => mailer.close())
  const outcomes = new Counter({
    ...metric,
    labelNames: ['outcome'] as const,
    registers: [app.metrics.registry],
  })
  const sender = createStoredMailSender({
    mails,
    mailer,
    settings: storedMailSettings(config),
    count: (outcome) => outcomes.inc({ outcome }),
    logger: app.log,
  })
  scheduleRounds(app, {
    name: `${mails.kind} sender`,
    intervalMs: config.EMAIL_SEND_INTERVAL_MS,
    round: () => sender.round(),
    // a debug line when the round did anything
    describe: (done) =>
      Object.values(done).some((n) => typeof n === 'number' && n > 0) ? { ...done } : undefined,
  })
  return sender
}
