// Mail's environment as TypeBox properties that a service spreads into its own (service-kit's serviceEnv): where the
// SMTP server is and how to reach it, who mail is from, how long one send may take, and the unsubscribe links' secret
// and addresses. Credentials come from their own variables (Secrets, never logged), never from SMTP_URL.
import { developmentOnlyDefault } from '@meridian/service-kit'
import { type Static, Type } from 'typebox'

/** One secret, or several comma-separated to rotate (the first signs; each is accepted): as IDEMPOTENCY_SECRET. */
const rotatedSecretFormat = '^[^,\\s]{32,}(?:,[^,\\s]{32,}){0,3}$'

/**
 * smtp:// or smtps://, a host (a name, an IPv4 address or a bracketed IPv6 one), an optional port, an optional path of
 * `/`, and an optional `?starttls=required`. No user information: credentials are SMTP_USERNAME and SMTP_PASSWORD.
 */
export const smtpUrlFormat =
  '^smtps?://(?:[A-Za-z0-9.-]{1,253}|\\[[0-9A-Fa-f:.]{2,45}\\])(?::[0-9]{1,5})?/?(?:\\?starttls=(?:required|opportunistic))?$'

/**
 * A mailbox: `name@example.com`, or a display name and the address in angle brackets (`Meridian
 * <no-reply@example.com>`). The display name has no quotes, angle brackets, commas or line breaks.
 */
export const mailboxFormat =
  '^(?:[^<>",\\r\\n@]{1,100} <[^\\s@<>",]{1,64}@[A-Za-z0-9.-]{1,253}>|[^\\s@<>",]{1,64}@[A-Za-z0-9.-]{1,253})$'

/**
 * The variables of the SMTP transport and of who mail is from, without the unsubscribe links': what a service that
 * sends only security mails (auth) spreads into its serviceEnv.
 */
export const smtpEnv = () => ({
  SMTP_URL: Type.String({
    pattern: smtpUrlFormat,
    maxLength: 300,
    expectation:
      'must be smtp://host[:port] or smtps://host[:port], optionally ?starttls=required, without credentials',
    // Mailpit on a developer's machine. Not refused in production: without a server there, mails wait, are retried
    // and end dead (logged, counted), and the rest of the service works
    default: 'smtp://127.0.0.1:1025',
    description:
      'the SMTP server: smtps:// is TLS from the first byte (port 465); smtp:// with ?starttls=required refuses a server that does not upgrade to TLS (port 587); plain smtp:// upgrades when the server offers it',
  }),
  SMTP_USERNAME: Type.Optional(
    Type.String({ minLength: 1, maxLength: 500, description: "the SMTP login's user name (a Secret)" }),
  ),
  SMTP_PASSWORD: Type.Optional(
    Type.String({ minLength: 1, maxLength: 500, description: "the SMTP login's password (a Secret)" }),
  ),
  MAIL_FROM: Type.String({
    pattern: mailboxFormat,
    maxLength: 400,
    expectation: 'must be a mailbox: name@example.com or Name <name@example.com>',
    default: 'Meridian <no-reply@meridian.test>',
    description: "the From of every mail: an address of the deployment's own domain (SPF, DKIM, DMARC)",
  }),
  MAIL_SEND_TIMEOUT_MS: Type.Integer({
    minimum: 1000,
    maximum: 300_000,
    default: 15_000,
    description:
      'how long one send may take, connecting included, ms: then it counts as failed and is retried',
  }),
  MAIL_POOL_MAX_CONNECTIONS: Type.Integer({
    minimum: 1,
    maximum: 50,
    default: 3,
    description: 'the most SMTP connections the pool keeps open at once',
  }),
})

/** The variables of the SMTP transport and of the mail it sends, unsubscribe links included: spread into a service's serviceEnv. */
export const mailEnv = () => ({
  ...smtpEnv(),
  UNSUBSCRIBE_SECRET: Type.String({
    pattern: rotatedSecretFormat,
    expectation: 'must be one to four comma-separated secrets of at least 32 characters, without white space',
    ...developmentOnlyDefault('insecure-development-unsubscribe-secret-0001'),
    description:
      'the secret one-click unsubscribe links are signed with; comma-separated to rotate (the first signs new links, every one is accepted)',
  }),
  UNSUBSCRIBE_URL: Type.String({
    pattern: '^https?://[^\\s?#]{1,1900}$',
    maxLength: 2000,
    expectation:
      'must be an http(s) address without query, e.g. https://shop.example/api/v1/notifications/unsubscribe',
    ...developmentOnlyDefault('http://127.0.0.1:8080/api/v1/notifications/unsubscribe'),
    description:
      "the public address of the one-click unsubscribe endpoint (the gateway's /api/v1/notifications/unsubscribe): List-Unsubscribe links carry ?token=… to it; https in production (mail clients offer one-click only for https, RFC 8058)",
  }),
  UNSUBSCRIBE_MAILTO: Type.Optional(
    Type.String({
      pattern: '^[^\\s@<>",?]{1,64}@[A-Za-z0-9.-]{1,253}$',
      maxLength: 320,
      expectation: 'must be an e-mail address, e.g. unsubscribe@shop.example',
      description:
        "an address that takes unsubscribe requests by mail: List-Unsubscribe names it beside the link when set (the deployment's to act on)",
    }),
  ),
})

/**
 * The clock, retries and retention of a sender of stored mails (notification's notification mails, auth's security
 * mails), spread into its service's env; `sender` names it and `deadMetric` the counter its dead mails are counted in.
 */
export const mailSenderEnv = (sender: string, deadMetric: string) => ({
  EMAIL_SEND_INTERVAL_MS: Type.Integer({
    minimum: 50,
    maximum: 600_000,
    default: 2000,
    description: `how often the ${sender} looks for mails that are due, ms`,
  }),
  EMAIL_MAX_ATTEMPTS: Type.Integer({
    minimum: 1,
    maximum: 100,
    default: 12,
    description: `sends tried per mail before it is dead (${deadMetric}{outcome="dead"})`,
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
  MAIL_RETENTION_DAYS: Type.Integer({
    minimum: 1,
    maximum: 3650,
    default: 30,
    description: `days a mail the ${sender} finished (sent, or dead) is kept; then its row is removed, in the sender's rounds`,
  }),
})

const MailEnv = Type.Object(mailEnv())
export type MailConfig = Static<typeof MailEnv>
const SmtpEnv = Type.Object(smtpEnv())
export type SmtpConfig = Static<typeof SmtpEnv>
const MailSenderEnv = Type.Object(mailSenderEnv('sender', 'its counter'))
export type MailSenderConfig = Static<typeof MailSenderEnv>
