// The development Mailpit for tests, found as the engines are: the one `./scripts/infra up` runs (./scripts/test runs
// it before the suites) on its fixed loopback ports, or the one SMTP_URL and MAILPIT_URL name when both are given. Not
// read from the environment alone: turbo passes a suite only the variables its task declares, and SMTP_URL is not
// one. It fails, naming the command that provides it, when no Mailpit answers: a test that needs mail never skips.
// Tests share it: each reads only the mails to its own unique recipients.
import { nativeMailpitUrl, nativeSmtpUrl } from '@meridian/infra'
import { mailpitVersion, smtpGreeting } from '@meridian/infra/mailpit'
import { type Mailbox, mailbox } from './mailbox.ts'

export interface MailpitEngine {
  /** where the code under test sends mail: its SMTP_URL (smtp://127.0.0.1:1025) */
  smtpUrl: string
  /** Mailpit's HTTP API (http://127.0.0.1:8025) */
  url: string
  /** Mailpit's own version, as its API reports it */
  version: string
  /** the reader of its messages */
  mailbox: Mailbox
}

/**
 * The running development Mailpit: SMTP_URL and MAILPIT_URL when both are set, else the addresses `scripts/infra up`
 * gives it; checked by its API and its SMTP greeting. Rejects, saying to run ./scripts/infra up, when it does not
 * answer.
 */
export async function mailpitEngine(env: NodeJS.ProcessEnv = process.env): Promise<MailpitEngine> {
  const given = Boolean(env.SMTP_URL && env.MAILPIT_URL)
  const smtpUrl = given ? (env.SMTP_URL as string) : nativeSmtpUrl
  const url = given ? (env.MAILPIT_URL as string) : nativeMailpitUrl
  try {
    const [version] = await Promise.all([mailpitVersion(url), smtpGreeting(smtpUrl)])
    return { smtpUrl, url, version, mailbox: mailbox(url) }
  } catch (error) {
    const source = given ? 'as SMTP_URL and MAILPIT_URL give it' : "where './scripts/infra up' runs it"
    throw new Error(
      `no Mailpit answers at ${smtpUrl} (SMTP) and ${url} (API), ${source}: ` +
        `${error instanceof Error ? error.message : String(error)}. ` +
        'Run ./scripts/infra up (it builds Mailpit once and starts it), then run the tests again.',
    )
  }
}
