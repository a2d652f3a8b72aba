// The SMTP transport from configuration: nodemailer's pool (a few connections kept open and reused), TLS as SMTP_URL
// says, the login from SMTP_USERNAME/SMTP_PASSWORD, and a deadline on every send. Nodemailer's own logger stays off:
// its transcript would hold the login and the recipients. What a failed send reports is an error's code and message,
// never the credentials.
import nodemailer from 'nodemailer'
import type SMTPPool from 'nodemailer/lib/smtp-pool/index.js'
import type { ComposedMail } from './compose.ts'
import type { SmtpConfig } from './config.ts'

export type MailTransportConfig = Pick<
  SmtpConfig,
  'SMTP_URL' | 'SMTP_USERNAME' | 'SMTP_PASSWORD' | 'MAIL_SEND_TIMEOUT_MS' | 'MAIL_POOL_MAX_CONNECTIONS'
>

/** How TLS is used: from the first byte (smtps), STARTTLS required, or STARTTLS when the server offers it. */
export type TlsMode = 'implicit' | 'starttls-required' | 'starttls-opportunistic'

export interface SmtpEndpoint {
  host: string
  port: number
  tls: TlsMode
}

/** SMTP_URL's host, port (465 for smtps, 587 with STARTTLS required, else 25) and TLS mode. */
export function smtpEndpoint(smtpUrl: string): SmtpEndpoint {
  const url = new URL(smtpUrl)
  const implicit = url.protocol === 'smtps:'
  if (!implicit && url.protocol !== 'smtp:') throw new TypeError('SMTP_URL must be smtp:// or smtps://')
  if (url.username !== '' || url.password !== '')
    throw new TypeError('SMTP_URL must not hold credentials: set SMTP_USERNAME and SMTP_PASSWORD')
  const starttls = url.searchParams.get('starttls')
  const tls: TlsMode = implicit
    ? 'implicit'
    : starttls === 'required'
      ? 'starttls-required'
      : 'starttls-opportunistic'
  const defaultPort = implicit ? 465 : tls === 'starttls-required' ? 587 : 25
  const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname
  return { host, port: url.port === '' ? defaultPort : Number(url.port), tls }
}

/** Nodemailer's pool options for the configuration (exported for its tests: what TLS and login it asks for). */
export function smtpPoolOptions(config: MailTransportConfig): SMTPPool.Options {
  const { host, port, tls } = smtpEndpoint(config.SMTP_URL)
  const timeout = config.MAIL_SEND_TIMEOUT_MS
  const auth =
    config.SMTP_USERNAME === undefined
      ? undefined
      : { user: config.SMTP_USERNAME, pass: config.SMTP_PASSWORD ?? '' }
  return {
    pool: true,
    host,
    port,
    secure: tls === 'implicit',
    requireTLS: tls === 'starttls-required',
    ...(auth ? { auth } : {}),
    maxConnections: config.MAIL_POOL_MAX_CONNECTIONS,
    connectionTimeout: timeout,
    greetingTimeout: timeout,
    socketTimeout: timeout,
    // no transcript, no debug output: they would carry the login and the addresses
    logger: false,
    debug: false,
  }
}

/** What the SMTP server said of a sent mail. */
export interface SentMail {
  messageId: string
  accepted: string[]
  rejected: string[]
}

/** A failed send, as safe to store and log: no credentials, no message body. */
export class MailSendError extends Error {
  constructor(
    message: string,
    /** nodemailer's code (ECONNECTION, ETIMEDOUT, EAUTH, EENVELOPE, …) or TIMEOUT for the send's own deadline */
    readonly code: string,
    /** the SMTP reply code when the server refused (5xx: permanent, 4xx: try later) */
    readonly responseCode: number | undefined,
  ) {
    super(message)
    this.name = 'MailSendError'
  }
}

export interface Mailer {
  /** Sends one composed mail; rejects with MailSendError when it was not accepted within the deadline. */
  send(mail: ComposedMail): Promise<SentMail>
  /** Connects and logs in once, to tell whether the server is reachable with this configuration. */
  verify(): Promise<void>
  /** Closes the pool's connections. */
  close(): void
}

const addressesOf = (list: unknown): string[] =>
  Array.isArray(list) ? list.map((each) => (typeof each === 'string' ? each : String(each))) : []

/** An error of nodemailer's as a MailSendError whose message holds nothing of the login (SMTP replies never do). */
export function toMailSendError(error: unknown): MailSendError {
  if (error instanceof MailSendError) return error
  const { code, responseCode, message } = (error ?? {}) as {
    code?: unknown
    responseCode?: unknown
    message?: unknown
  }
  const text = typeof message === 'string' ? message : 'the send failed'
  return new MailSendError(
    text.replace(/\s+/g, ' ').slice(0, 500),
    typeof code === 'string' ? code : 'ESEND',
    typeof responseCode === 'number' ? responseCode : undefined,
  )
}

function withDeadline<Result>(work: Promise<Result>, ms: number): Promise<Result> {
  let timer: NodeJS.Timeout | undefined
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new MailSendError(`no answer from the SMTP server within ${ms} ms`, 'TIMEOUT', undefined)),
      ms,
    )
  })
  return Promise.race([work, deadline]).finally(() => clearTimeout(timer))
}

/** A pooled SMTP mailer from configuration. */
export function createMailer(config: MailTransportConfig): Mailer {
  const transport = nodemailer.createTransport(smtpPoolOptions(config))
  return {
    async send(mail) {
      try {
        const info = await withDeadline(transport.sendMail(mail), config.MAIL_SEND_TIMEOUT_MS)
        return {
          messageId: info.messageId,
          accepted: addressesOf(info.accepted),
          rejected: addressesOf(info.rejected),
        }
      } catch (error) {
        throw toMailSendError(error)
      }
    },
    async verify() {
      try {
        await withDeadline(transport.verify(), config.MAIL_SEND_TIMEOUT_MS)
      } catch (error) {
        throw toMailSendError(error)
      }
    },
    close() {
      transport.close()
    },
  }
}
