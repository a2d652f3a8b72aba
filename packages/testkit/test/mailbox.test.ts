// The mailbox reader on a real Mailpit: a Mailpit of this file's own (startMailpit of @meridian/infra/mailpit), a
// message sent to it over SMTP by hand (EHLO, AUTH as production's client would, MAIL FROM, RCPT TO, DATA), read back
// through Mailpit's API with its bodies and headers; a search, a wait that finds nothing, and the mailbox emptied.
import { randomBytes } from 'node:crypto'
import { connect, type Socket } from 'node:net'
import { type Mailpit, startMailpit } from '@meridian/infra/mailpit'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type Mailbox, mailbox } from '../src/mailbox.ts'
import { scaledMs } from '../src/test-time.ts'

/** The SMTP replies on a socket, one whole reply (its last line `NNN text`) at a time. */
function replies(socket: Socket): () => Promise<string> {
  let buffered = ''
  const waiting: ((reply: string) => void)[] = []
  const ready: string[] = []
  socket.on('data', (chunk) => {
    buffered += chunk.toString('utf8')
    for (;;) {
      // a reply ends with a line whose code is followed by a space (`250-` lines continue it)
      const lines = buffered.split('\r\n')
      const last = lines.findIndex((line) => /^\d{3} /.test(line))
      if (last < 0) return
      const reply = lines.slice(0, last + 1).join('\n')
      buffered = lines.slice(last + 1).join('\r\n')
      const taker = waiting.shift()
      if (taker) taker(reply)
      else ready.push(reply)
    }
  })
  return () => {
    const reply = ready.shift()
    return reply !== undefined ? Promise.resolve(reply) : new Promise((resolve) => waiting.push(resolve))
  }
}

/** Sends one message over SMTP, checking each reply's code; `message` is the whole RFC 5322 text (CRLF lines). */
async function sendBySmtp(
  smtpUrl: string,
  envelope: { from: string; to: string[]; auth?: { username: string; password: string } },
  message: string,
): Promise<void> {
  const url = new URL(smtpUrl)
  const socket = connect({ host: url.hostname, port: Number(url.port) })
  socket.setTimeout(10_000, () => socket.destroy(new Error('SMTP exchange stalled')))
  const next = replies(socket)
  const failed = new Promise<never>((_, reject) => socket.once('error', reject))
  const expectReply = async (code: string, sent: string) => {
    const reply = await Promise.race([next(), failed])
    if (!reply.split('\n').at(-1)?.startsWith(code)) throw new Error(`after ${sent}: ${reply}`)
    return reply
  }
  const say = (line: string) => socket.write(`${line}\r\n`)
  try {
    await expectReply('220', 'connecting')
    say('EHLO meridian.test')
    await expectReply('250', 'EHLO')
    if (envelope.auth) {
      const plain = Buffer.from(`\0${envelope.auth.username}\0${envelope.auth.password}`).toString('base64')
      say(`AUTH PLAIN ${plain}`)
      await expectReply('235', 'AUTH PLAIN')
    }
    say(`MAIL FROM:<${envelope.from}>`)
    await expectReply('250', 'MAIL FROM')
    for (const to of envelope.to) {
      say(`RCPT TO:<${to}>`)
      await expectReply('250', `RCPT TO ${to}`)
    }
    say('DATA')
    await expectReply('354', 'DATA')
    // a line starting with a dot is doubled (RFC 5321's transparency); the message ends with a lone dot
    socket.write(`${message.replaceAll(/^\./gm, '..')}\r\n.\r\n`)
    await expectReply('250', 'the message')
    say('QUIT')
    await expectReply('221', 'QUIT')
  } finally {
    socket.destroy()
  }
}

const unique = () => randomBytes(6).toString('hex')

/** A multipart/alternative message (text and HTML) with a header of the test's own. */
function messageText(options: { from: string; to: string; subject: string; requestId: string }): string {
  const boundary = `b-${unique()}`
  return [
    `From: Meridian <${options.from}>`,
    `To: Customer <${options.to}>`,
    `Subject: ${options.subject}`,
    `Message-ID: <${unique()}@meridian.test>`,
    'MIME-Version: 1.0',
    `X-Request-Id: ${options.requestId}`,
    `Content-Type: multipart/alternative; boundary="${boundary}"`,
    '',
    `--${boundary}`,
    'Content-Type: text/plain; charset=utf-8',
    '',
    'Your order has shipped.',
    '.A line that starts with a dot.',
    `--${boundary}`,
    'Content-Type: text/html; charset=utf-8',
    '',
    '<p>Your order has <b>shipped</b>.</p>',
    `--${boundary}--`,
  ].join('\r\n')
}

describe('the mailbox reader on a Mailpit of its own', () => {
  let mailpit: Mailpit
  let box: Mailbox

  beforeAll(async () => {
    mailpit = await startMailpit()
    box = mailbox(mailpit.url)
  }, scaledMs(60_000))

  afterAll(async () => {
    await mailpit?.stop()
  })

  it('when a message is sent over SMTP with credentials, then it is read back with its sender, recipient, subject, both bodies and its headers', async () => {
    const to = `customer-${unique()}@example.com`
    const requestId = unique()
    await sendBySmtp(
      mailpit.smtpUrl,
      { from: 'orders@meridian.test', to: [to], auth: { username: 'meridian', password: 'any' } },
      messageText({ from: 'orders@meridian.test', to, subject: 'Your order has shipped', requestId }),
    )

    const mail = await box.waitForMessage({ to, subject: 'Your order has shipped' })
    expect(mail.from).toEqual({ name: 'Meridian', address: 'orders@meridian.test' })
    expect(mail.to).toEqual([{ name: 'Customer', address: to }])
    expect(mail.subject).toBe('Your order has shipped')
    expect(mail.text).toContain('Your order has shipped.')
    // the dot the exchange doubled is single again
    expect(mail.text).toContain('.A line that starts with a dot.')
    expect(mail.text).not.toContain('..A line')
    expect(mail.html).toContain('<p>Your order has <b>shipped</b>.</p>')
    expect(mail.headers['X-Request-Id']).toEqual([requestId])
    expect(await box.headers(mail.id)).toEqual(mail.headers)
  })

  it("when messages to two recipients are there, then a search finds one recipient's, and a wait by a subject pattern finds it", async () => {
    const [first, second] = [`first-${unique()}@example.com`, `second-${unique()}@example.com`]
    for (const to of [first, second])
      await sendBySmtp(
        mailpit.smtpUrl,
        { from: 'orders@meridian.test', to: [to] },
        messageText({ from: 'orders@meridian.test', to, subject: `Receipt ${to}`, requestId: unique() }),
      )

    await box.waitForMessage({ to: second, subject: /^Receipt second-/ })
    const found = await box.search(`to:"${first}"`)
    expect(found.map((m) => m.to.map((a) => a.address))).toEqual([[first]])
    expect(found[0]?.subject).toBe(`Receipt ${first}`)
  })

  it('when nothing comes for a recipient, then the wait fails naming it and what the mailbox holds', async () => {
    const somebody = `somebody-${unique()}@example.com`
    await sendBySmtp(
      mailpit.smtpUrl,
      { from: 'orders@meridian.test', to: [somebody] },
      messageText({
        from: 'orders@meridian.test',
        to: somebody,
        subject: 'For somebody',
        requestId: unique(),
      }),
    )
    await box.waitForMessage({ to: somebody })
    const nobody = `nobody-${unique()}@example.com`
    await expect(box.waitForMessage({ to: nobody }, 300)).rejects.toThrow(
      new RegExp(`no message to ${nobody} .*the newest it holds:\\n {2}to `, 's'),
    )
  })

  it('when the mailbox is emptied, then it lists no message', async () => {
    const to = `emptied-${unique()}@example.com`
    await sendBySmtp(
      mailpit.smtpUrl,
      { from: 'orders@meridian.test', to: [to] },
      messageText({ from: 'orders@meridian.test', to, subject: 'Soon gone', requestId: unique() }),
    )
    await box.waitForMessage({ to })
    await box.deleteAll()
    expect(await box.messages()).toEqual([])
  })
})
