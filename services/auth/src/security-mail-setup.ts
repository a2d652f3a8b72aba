// Auth's security mails wired up: the SMTP pool of @meridian/mail's settings, the sealing of their secret data under
// SIGNING_KEY_ENCRYPTION_SECRET, the queue a change writes them with, and the sender round on the app's clock (every
// EMAIL_SEND_INTERVAL_MS, in every instance) with its metric, meridian_auth_security_mails_total{outcome}.
import { type Sql, tracedRepository } from '@meridian/db'
import { createMailer } from '@meridian/mail'
import { type ServiceApp, scheduleRounds } from '@meridian/service-kit'
import { Counter } from 'prom-client'
import type { AuthConfig } from './config.ts'
import { createEmailVerificationsRepository } from './data/email-verifications-repository.ts'
import { createPasswordResetsRepository } from './data/password-resets-repository.ts'
import {
  createSecurityMailsRepository,
  type SecurityMailsRepository,
} from './data/security-mails-repository.ts'
import { createSecurityMailSender } from './domain/security-mail-sender.ts'
import {
  createSecurityMailQueue,
  createSecurityMailSealing,
  type SecurityMailQueue,
  type SecurityMailSealing,
} from './domain/security-mails.ts'

export interface SecurityMails {
  sealing: SecurityMailSealing
  queue: SecurityMailQueue
  repository: SecurityMailsRepository
}

export function registerSecurityMails(app: ServiceApp, config: AuthConfig, sql: Sql): SecurityMails {
  const repository = tracedRepository('security_mails', createSecurityMailsRepository(sql))
  const sealing = createSecurityMailSealing(config.SIGNING_KEY_ENCRYPTION_SECRET)
  const mailer = createMailer(config)
  app.addHook('onClose', async () => mailer.close())
  const outcomes = new Counter({
    name: 'meridian_auth_security_mails_total',
    help: 'security mails (password reset, password changed, address to verify) by outcome: sent, retried (a send failed; due again later) or dead (given up)',
    labelNames: ['outcome'] as const,
    registers: [app.metrics.registry],
  })
  const sender = createSecurityMailSender({
    mails: repository,
    expiring: [
      tracedRepository('password_resets', createPasswordResetsRepository(sql)),
      tracedRepository('email_verifications', createEmailVerificationsRepository(sql)),
    ],
    sealing,
    mailer,
    settings: {
      from: config.MAIL_FROM,
      batchSize: config.EMAIL_BATCH_SIZE,
      // a send takes at most MAIL_SEND_TIMEOUT_MS; a batch's sends share the pool's connections
      leaseMs:
        config.MAIL_SEND_TIMEOUT_MS * Math.ceil(config.EMAIL_BATCH_SIZE / config.MAIL_POOL_MAX_CONNECTIONS) +
        30_000,
      maxAttempts: config.EMAIL_MAX_ATTEMPTS,
      retryBaseMs: config.EMAIL_RETRY_BASE_MS,
      retryMaxMs: config.EMAIL_RETRY_MAX_MS,
    },
    count: (outcome) => outcomes.inc({ outcome }),
    logger: app.log,
  })
  scheduleRounds(app, {
    name: 'security mail sender',
    intervalMs: config.EMAIL_SEND_INTERVAL_MS,
    round: () => sender.round(),
    describe: (done) =>
      done.sent + done.retried + done.dead + done.expiredLinks > 0 ? { ...done } : undefined,
  })
  return { sealing, queue: createSecurityMailQueue(repository, sealing), repository }
}
