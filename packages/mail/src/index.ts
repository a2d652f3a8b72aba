// @meridian/mail: e-mail for the services. Configuration (mailEnv or smtpEnv, spread into a service's serviceEnv), the
// pooled SMTP transport (createMailer), a stored mail's retries (backoffMs, isPermanentFailure) and the sender of
// stored mails (createStoredMailSender, on the service's clock with scheduleStoredMailSender), the template registry
// (mailTemplates: the one place to add a template), composing a mail with its deterministic Message-ID and
// List-Unsubscribe headers, and signed one-click unsubscribe tokens.
export { type ComposedMail, type ComposeOptions, composeMail } from './compose.ts'
export {
  type MailConfig,
  type MailSenderConfig,
  mailboxFormat,
  mailEnv,
  mailSenderEnv,
  type SmtpConfig,
  smtpEnv,
  smtpUrlFormat,
} from './config.ts'
export { formatDuration } from './duration.ts'
export {
  addressOf,
  domainOf,
  listUnsubscribeHeaders,
  messageIdFor,
  type UnsubscribeTarget,
  unsubscribeLink,
} from './headers.ts'
export { escapeHtml, type HtmlValue, html, SafeHtml } from './html.ts'
export { formatLineTotal, formatMoney, mailCurrency } from './money.ts'
export { backoffMs, isPermanentFailure } from './retries.ts'
export {
  type StoredMailConfig,
  type StoredMailRoundsOptions,
  scheduleStoredMailSender,
  storedMailSettings,
} from './stored-mail-rounds.ts'
export {
  createStoredMailSender,
  type StoredMailLogger,
  type StoredMailOutcome,
  type StoredMailRound,
  type StoredMailSender,
  type StoredMailSenderOptions,
  type StoredMailSettings,
  type StoredMails,
  type Unsendable,
} from './stored-mail-sender.ts'
export {
  isTemplateName,
  mailTemplates,
  type RenderedTemplate,
  renderStoredTemplate,
  renderTemplate,
  type TemplateData,
  type TemplateName,
  templateNames,
} from './templates/index.ts'
export { defineTemplate, type MailKind, type MailTemplate, type RenderedMail } from './templates/template.ts'
export {
  createMailer,
  type Mailer,
  MailSendError,
  type MailTransportConfig,
  type SentMail,
  type SmtpEndpoint,
  smtpEndpoint,
  smtpPoolOptions,
  type TlsMode,
  toMailSendError,
} from './transport.ts'
export {
  maximumTokenLength,
  type UnsubscribeClaim,
  type UnsubscribeTokens,
  unsubscribeTokens,
} from './unsubscribe-tokens.ts'
