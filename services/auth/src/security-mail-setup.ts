// Auth's security mails wired up: the SMTP pool of @meridian/mail's settings, the sealing of their secret data under
// SIGNING_KEY_ENCRYPTION_SECRET, the queue a change writes them with, and @meridian/mail's stored-mail sender on the
// app's clock (every EMAIL_SEND_INTERVAL_MS, in every instance) with its metric,
// meridian_auth_security_mails_total{outcome}.
import { type Sql, tracedRepository } from '@meridian/db'
import { scheduleStoredMailSender } from '@meridian/mail'
import type { ServiceApp } from '@meridian/service-kit'
import type { AuthConfig } from './config.ts'
import { createEmailVerificationsRepository } from './data/email-verifications-repository.ts'
import { createPasswordResetsRepository } from './data/password-resets-repository.ts'
import {
  createSecurityMailsRepository,
  type SecurityMailsRepository,
} from './data/security-mails-repository.ts'
import { securityMailsToSend } from './domain/security-mail-sender.ts'
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
  scheduleStoredMailSender(app, config, {
    mails: securityMailsToSend({
      mails: repository,
      expiring: [
        tracedRepository('password_resets', createPasswordResetsRepository(sql)),
        tracedRepository('email_verifications', createEmailVerificationsRepository(sql)),
      ],
      sealing,
      from: config.MAIL_FROM,
    }),
    metric: {
      name: 'meridian_auth_security_mails_total',
      help: 'security mails (password reset, password changed, address to verify) by outcome: sent, retried (a send failed; due again later) or dead (given up)',
    },
  })
  return { sealing, queue: createSecurityMailQueue(repository, sealing), repository }
}
