// Reading what was sent by mail, in a test: a small typed reader of Mailpit's HTTP API (/api/v1/…), for a Mailpit the
// test started (`startMailpit()` of @meridian/infra/mailpit) or the development one (mailpitEngine().mailbox).
// Messages are waited for by condition, never for a fixed time.
import { scaledMs, waitMs } from './test-time.ts'

export interface MailAddress {
  name: string
  address: string
}

/** What a message's listing and the message whole both tell: who it is from and to, and its subject. */
export interface MailHeading {
  /** Mailpit's own id of the message (its database id), what message() and headers() take */
  id: string
  /** the Message-ID header, without its angle brackets */
  messageId: string
  from: MailAddress | undefined
  to: MailAddress[]
  cc: MailAddress[]
  bcc: MailAddress[]
  subject: string
}

/** A message as Mailpit lists it (GET /api/v1/messages, /api/v1/search). */
export interface MailSummary extends MailHeading {
  /** when Mailpit received it (RFC 3339) */
  created: string
  snippet: string
  tags: string[]
  size: number
}

/** One message whole (GET /api/v1/message/{ID} and its /headers). */
export interface Mail extends MailHeading {
  replyTo: MailAddress[]
  /** the Date header's time, or when it was received (RFC 3339) */
  date: string
  /** the text/plain body ('' when there is none) */
  text: string
  /** the text/html body ('' when there is none) */
  html: string
  /** every header as sent, each name with its values in order (names as Mailpit keys them: `X-Request-Id`) */
  headers: Record<string, string[]>
  attachments: { fileName: string; contentType: string; size: number }[]
}

/** Which message waitForMessage waits for: one addressed to `to` (To, Cc or Bcc), with this subject if given. */
export interface MailMatch {
  to: string
  subject?: string | RegExp
}

export interface Mailbox {
  /** Mailpit's HTTP address */
  readonly url: string
  /** the newest messages first (up to `limit`, 50 by default) */
  messages(limit?: number): Promise<MailSummary[]>
  /** the messages matching a Mailpit search (`to:someone@example.com subject:"Your order"`), newest first */
  search(query: string, limit?: number): Promise<MailSummary[]>
  /** one message whole, its headers included */
  message(id: string): Promise<Mail>
  headers(id: string): Promise<Record<string, string[]>>
  /** deletes these messages (by Mailpit's id), leaving the others: what a test does on a Mailpit it shares */
  remove(ids: readonly string[]): Promise<void>
  /** deletes every message */
  deleteAll(): Promise<void>
  /**
   * Resolves with the newest message matching, as soon as there is one (polling); fails after `timeoutMs` (30 s times
   * MERIDIAN_TEST_TIME_SCALE by default) naming what the mailbox holds instead.
   */
  waitForMessage(match: MailMatch, timeoutMs?: number): Promise<Mail>
}

interface ApiAddress {
  Name: string
  Address: string
}

interface ApiHeading {
  ID: string
  MessageID: string
  From: ApiAddress | null
  To: ApiAddress[] | null
  Cc: ApiAddress[] | null
  Bcc: ApiAddress[] | null
  Subject: string
}

interface ApiSummary extends ApiHeading {
  Created: string
  Snippet: string
  Tags: string[] | null
  Size: number
}

interface ApiMessage extends ApiHeading {
  ReplyTo: ApiAddress[] | null
  Date: string
  Text: string
  HTML: string
  Attachments: { FileName: string; ContentType: string; Size: number }[] | null
}

const addresses = (list: ApiAddress[] | null | undefined): MailAddress[] =>
  (list ?? []).map((a) => ({ name: a.Name, address: a.Address }))
const addressOf = (a: ApiAddress | null | undefined): MailAddress | undefined =>
  a ? { name: a.Name, address: a.Address } : undefined

const headingOf = (m: ApiHeading): MailHeading => ({
  id: m.ID,
  messageId: m.MessageID,
  from: addressOf(m.From),
  to: addresses(m.To),
  cc: addresses(m.Cc),
  bcc: addresses(m.Bcc),
  subject: m.Subject,
})

function summaryOf(m: ApiSummary): MailSummary {
  return {
    ...headingOf(m),
    created: m.Created,
    snippet: m.Snippet,
    tags: m.Tags ?? [],
    size: m.Size,
  }
}

function matches(summary: MailSummary, match: MailMatch): boolean {
  const wanted = match.to.toLowerCase()
  const addressed = [...summary.to, ...summary.cc, ...summary.bcc].some(
    (a) => a.address.toLowerCase() === wanted,
  )
  if (!addressed) return false
  if (match.subject === undefined) return true
  return typeof match.subject === 'string'
    ? summary.subject === match.subject
    : match.subject.test(summary.subject)
}

/** The reader of the Mailpit at `url` (http://127.0.0.1:8025, or a test's own). */
export function mailbox(url: string): Mailbox {
  let base = url
  while (base.endsWith('/')) base = base.slice(0, -1)

  /** Every call of the API: the request, and its answer checked (anything but 2xx throws with the status and body). */
  async function call(method: string, path: string, body?: unknown): Promise<Response> {
    const response = await fetch(`${base}${path}`, {
      method,
      ...(body === undefined
        ? {}
        : { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }),
      signal: AbortSignal.timeout(5000),
    })
    if (!response.ok)
      throw new Error(`mailpit ${method} ${path} answered ${response.status}: ${await response.text()}`)
    return response
  }
  const getJson = async <T>(path: string): Promise<T> => (await (await call('GET', path)).json()) as T
  /** A listing (messages or a search), as summaries. */
  const listed = async (path: string, parameters: Record<string, string>): Promise<MailSummary[]> => {
    const { messages } = await getJson<{ messages: ApiSummary[] }>(
      `${path}?${new URLSearchParams(parameters)}`,
    )
    return messages.map(summaryOf)
  }
  /** DELETE /api/v1/messages: the IDs given, or every message when none are */
  const deleted = async (ids?: readonly string[]): Promise<void> => {
    await (await call('DELETE', '/api/v1/messages', ids ? { IDs: ids } : {})).body?.cancel()
  }

  const box: Mailbox = {
    url: base,
    messages: (limit = 50) => listed('/api/v1/messages', { limit: String(limit) }),
    search: (query, limit = 50) => listed('/api/v1/search', { query, limit: String(limit) }),
    headers: (id) => getJson<Record<string, string[]>>(`/api/v1/message/${encodeURIComponent(id)}/headers`),
    async message(id) {
      const [m, headers] = await Promise.all([
        getJson<ApiMessage>(`/api/v1/message/${encodeURIComponent(id)}`),
        box.headers(id),
      ])
      return {
        ...headingOf(m),
        replyTo: addresses(m.ReplyTo),
        date: m.Date,
        text: m.Text,
        html: m.HTML,
        headers,
        attachments: (m.Attachments ?? []).map((a) => ({
          fileName: a.FileName,
          contentType: a.ContentType,
          size: a.Size,
        })),
      }
    },
    async remove(ids) {
      if (ids.length > 0) await deleted(ids)
    },
    deleteAll: () => deleted(),
    async waitForMessage(match, timeoutMs = scaledMs(waitMs)) {
      const deadline = Date.now() + timeoutMs
      // Mailpit's search narrows by recipient; the exact match (address, subject) is judged here
      const query = `to:"${match.to.replaceAll('"', '')}"`
      for (;;) {
        const found = (await box.search(query)).find((summary) => matches(summary, match))
        if (found) return box.message(found.id)
        if (Date.now() > deadline) {
          const held = (await box.messages(10))
            .map((m) => `  to ${m.to.map((a) => a.address).join(', ')}: ${JSON.stringify(m.subject)}`)
            .join('\n')
          throw new Error(
            `no message to ${match.to}${match.subject === undefined ? '' : ` with the subject ${String(match.subject)}`} at ${base} within ${timeoutMs} ms; the newest it holds:\n${held || '  (none)'}`,
          )
        }
        await new Promise((resolve) => setTimeout(resolve, 100))
      }
    },
  }
  return box
}
