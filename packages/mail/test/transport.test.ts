// The transport against a real SMTP server in this process (smtp-server, nodemailer's own): what arrives on the wire
// (headers, Message-ID), the login, STARTTLS required against a server that does not offer it, a closed port and a
// server that never answers. Mailpit, once it is an engine, is the notification service's SMTP server in its tests.
import { createServer, type Server } from 'node:net'
import { closedPort } from '@meridian/testkit'
import { SMTPServer, type SMTPServerOptions } from 'smtp-server'
import { afterEach, describe, expect, it } from 'vitest'
import {
  composeMail,
  createMailer,
  MailSendError,
  type MailTransportConfig,
  renderTemplate,
} from '../src/index.ts'

interface Received {
  from: string | undefined
  to: string[]
  raw: string
}

const stops: (() => Promise<void>)[] = []
// last started, first stopped: a mailer's pooled connection is closed before its server, which waits for its clients
afterEach(async () => {
  for (const stop of stops.splice(0).reverse()) await stop()
})

async function smtpServer(options: SMTPServerOptions = {}): Promise<{ port: number; received: Received[] }> {
  const received: Received[] = []
  const server = new SMTPServer({
    disabledCommands: ['STARTTLS'],
    authOptional: true,
    logger: false,
    // no reverse DNS of the client: on a machine without a resolver it waits seconds per connection
    disableReverseLookup: true,
    ...options,
    onData(stream, session, callback) {
      const chunks: Buffer[] = []
      stream.on('data', (chunk: Buffer) => chunks.push(chunk))
      stream.on('end', () => {
        received.push({
          from: session.envelope.mailFrom === false ? undefined : session.envelope.mailFrom.address,
          to: session.envelope.rcptTo.map((each) => each.address),
          raw: Buffer.concat(chunks).toString('utf8'),
        })
        callback()
      })
    },
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  stops.push(() => new Promise<void>((resolve) => server.close(() => resolve())))
  const address = server.server.address()
  if (address === null || typeof address === 'string') throw new Error('no port')
  return { port: address.port, received }
}

const config = (url: string, extra: Partial<MailTransportConfig> = {}): MailTransportConfig => ({
  SMTP_URL: url,
  MAIL_SEND_TIMEOUT_MS: 5000,
  MAIL_POOL_MAX_CONNECTIONS: 2,
  ...extra,
})

const mail = composeMail({
  from: 'Meridian <no-reply@shop.example>',
  to: 'ada@example.com',
  rendered: renderTemplate('order_paid', { orderId: 'o-1', total: 12.5 }),
  idempotencyKey: 'notification:n-1',
  unsubscribe: { url: 'https://shop.example/api/v1/notifications/unsubscribe', token: 'abc.def' },
})

describe('SMTP transport', () => {
  it('when a mail is sent, then the server receives it with its Message-ID and List-Unsubscribe headers', async () => {
    const { port, received } = await smtpServer()
    const mailer = createMailer(config(`smtp://127.0.0.1:${port}`))
    stops.push(async () => mailer.close())
    const sent = await mailer.send(mail)
    expect(sent.messageId).toBe(mail.messageId)
    expect(sent.accepted).toEqual(['ada@example.com'])
    expect(received).toHaveLength(1)
    const [arrived] = received
    expect(arrived?.from).toBe('no-reply@shop.example')
    expect(arrived?.to).toEqual(['ada@example.com'])
    // headers unfolded (a long one continues on the next line after white space)
    const headers = arrived?.raw.split('\r\n\r\n')[0]?.replace(/\r\n[ \t]+/g, ' ') ?? ''
    expect(headers).toContain(`Message-ID: ${mail.messageId}`)
    expect(headers).toContain('List-Unsubscribe-Post: List-Unsubscribe=One-Click')
    expect(headers).toMatch(
      /List-Unsubscribe: <https:\/\/shop\.example\/api\/v1\/notifications\/unsubscribe\?token=abc\.def>/,
    )
    expect(headers).toContain('Subject: Order o-1 paid')
  })

  it('when the server wants a login, then the configured one is used; a wrong password fails without showing it', async () => {
    const { port, received } = await smtpServer({
      authOptional: false,
      allowInsecureAuth: true,
      onAuth(auth, _session, callback) {
        if (auth.username === 'meridian' && auth.password === 'right-password')
          callback(null, { user: 'meridian' })
        else callback(new Error('Invalid username or password'))
      },
    })
    const good = createMailer(
      config(`smtp://127.0.0.1:${port}`, { SMTP_USERNAME: 'meridian', SMTP_PASSWORD: 'right-password' }),
    )
    stops.push(async () => good.close())
    await good.send(mail)
    expect(received).toHaveLength(1)

    const bad = createMailer(
      config(`smtp://127.0.0.1:${port}`, { SMTP_USERNAME: 'meridian', SMTP_PASSWORD: 'wrong-secret-value' }),
    )
    stops.push(async () => bad.close())
    const error = await bad.send(mail).catch((caught: unknown) => caught)
    expect(error).toBeInstanceOf(MailSendError)
    expect((error as MailSendError).code).toBe('EAUTH')
    expect(JSON.stringify({ ...(error as MailSendError), message: (error as Error).message })).not.toContain(
      'wrong-secret-value',
    )
  })

  it('when STARTTLS is required and the server does not offer it, then nothing is sent', async () => {
    const { port, received } = await smtpServer()
    const mailer = createMailer(config(`smtp://127.0.0.1:${port}?starttls=required`))
    stops.push(async () => mailer.close())
    await expect(mailer.send(mail)).rejects.toBeInstanceOf(MailSendError)
    expect(received).toHaveLength(0)
  })

  it('when nothing listens on the port, then the send fails with a connection error', async () => {
    const mailer = createMailer(config(`smtp://127.0.0.1:${await closedPort()}`))
    stops.push(async () => mailer.close())
    const error = (await mailer.send(mail).catch((caught: unknown) => caught)) as MailSendError
    expect(error).toBeInstanceOf(MailSendError)
    expect(['ECONNECTION', 'ESOCKET']).toContain(error.code)
  })

  it('when the server accepts the connection but never answers, then the send fails by its deadline', async () => {
    const sockets: import('node:net').Socket[] = []
    const silent: Server = createServer((socket) => sockets.push(socket))
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve))
    stops.push(
      () =>
        new Promise<void>((resolve) => {
          for (const socket of sockets) socket.destroy()
          silent.close(() => resolve())
        }),
    )
    const address = silent.address()
    if (address === null || typeof address === 'string') throw new Error('no port')
    const mailer = createMailer(config(`smtp://127.0.0.1:${address.port}`, { MAIL_SEND_TIMEOUT_MS: 1000 }))
    stops.push(async () => mailer.close())
    const error = (await mailer.send(mail).catch((caught: unknown) => caught)) as MailSendError
    expect(error).toBeInstanceOf(MailSendError)
    expect(['TIMEOUT', 'ETIMEDOUT']).toContain(error.code)
  })
})
