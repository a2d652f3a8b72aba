// Mailpit, the SMTP server of the e-mail tests, read through its HTTP API (GET /api/v1/messages, GET
// /api/v1/message/{ID}, DELETE /api/v1/messages). Its addresses come from the environment (SMTP_URL, MAILPIT_URL) as
// the engine sets them; without them the tests that need it do not run. Files share one Mailpit: each test reads only
// the mails to its own unique recipient.

export interface MailpitAddress {
  Address: string
  Name: string
}

export interface MailpitSummary {
  ID: string
  MessageID: string
  To: MailpitAddress[]
  Subject: string
}

export interface MailpitMessage extends MailpitSummary {
  Text: string
  HTML: string
  ListUnsubscribe: { Header: string; HeaderPost: string; Links: string[]; Errors: string }
}

export interface Mailpit {
  smtpUrl: string
  /** every message to `address`, newest first */
  messagesTo(address: string): Promise<MailpitSummary[]>
  message(id: string): Promise<MailpitMessage>
  /** deletes the given messages */
  remove(ids: readonly string[]): Promise<void>
}

/** Mailpit when the environment names it (SMTP_URL and MAILPIT_URL), else undefined. */
export function mailpitFromEnv(env: NodeJS.ProcessEnv = process.env): Mailpit | undefined {
  const { SMTP_URL: smtpUrl, MAILPIT_URL: apiUrl } = env
  if (!smtpUrl || !apiUrl) return undefined
  const api = async (path: string, init?: RequestInit) => {
    const answer = await fetch(new URL(path, apiUrl), init)
    if (!answer.ok) throw new Error(`Mailpit ${init?.method ?? 'GET'} ${path}: ${answer.status}`)
    return answer
  }
  return {
    smtpUrl,
    async messagesTo(address) {
      const { messages } = (await (await api('/api/v1/messages?limit=1000')).json()) as {
        messages: MailpitSummary[]
      }
      return messages.filter((each) =>
        each.To.some((to) => to.Address.toLowerCase() === address.toLowerCase()),
      )
    },
    async message(id) {
      return (await (await api(`/api/v1/message/${encodeURIComponent(id)}`)).json()) as MailpitMessage
    },
    async remove(ids) {
      if (ids.length === 0) return
      await api('/api/v1/messages', {
        method: 'DELETE',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ IDs: ids }),
      })
    },
  }
}
