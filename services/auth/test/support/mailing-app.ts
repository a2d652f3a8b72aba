// What auth's mail tests share: the app sending its security mails through the development Mailpit (testkit's
// mailpitEngine(): the one ./scripts/infra up runs; without it the file fails, naming that command, never skips) with
// a sender that looks every 100 ms, the mailbox to read them back, and the token at the end of a mailed link.
import { type Mailbox, mailpitEngine } from '@meridian/testkit'
import { type AuthTestApp, buildAuthTestApp } from '../auth-app.ts'

export interface MailingAuth {
  auth: AuthTestApp
  box: Mailbox
}

/** The auth app mailing through the development Mailpit; `env` adds to (or overrides) its settings. */
export async function buildMailingAuthTestApp(env: Record<string, string> = {}): Promise<MailingAuth> {
  const mailpit = await mailpitEngine()
  const auth = await buildAuthTestApp({
    LOG_LEVEL: 'info',
    SMTP_URL: mailpit.smtpUrl,
    MAIL_FROM: 'Meridian Test <no-reply@meridian.test>',
    EMAIL_SEND_INTERVAL_MS: '100',
    ...env,
  })
  return { auth, box: mailpit.mailbox }
}

/** The token of a link `…/<page>/<token>` in a mail's text; throws, showing the text, when there is none. */
export function linkToken(text: string, page: string): string {
  const token = new RegExp(`${page}/([A-Za-z0-9_-]{43})\\s`).exec(text)?.[1]
  if (token === undefined) throw new Error(`no ${page} link in the mail: ${text}`)
  return token
}
